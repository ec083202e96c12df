"""Covering-array variants of questions as conversations (test kind VARIANT), and the
JSON-Boolean postfix mode of the KomMKonLLM thesis.

Each query's IPM (generate.ipm) gets a t-way covering array (generate.covering); every row
becomes one single-turn conversation "REL/t1~vN" (label "t1 vN"), row 0 being the original
question. Its `extras` (domain.extras.VariantExtras) record the row so the variant oracle can say which word flipped an answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kontest_tui.domain.extras import VariantExtras
from kontest_tui.domain.records import Answer, Conversation, Query, Relation, TestKind
from kontest_tui.generate.covering import DEFAULT_EFFORT, build_covering_array
from kontest_tui.generate.ipm import (
    DEFAULT_MAX_VALUES,
    DEFAULT_SENSES,
    QueryIPM,
    ipm_for_query,
)
from kontest_tui.generate.synonyms import load_synonym_lists
from kontest_tui.generate.templates import Template, TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph

POSTFIX = "Return a JSON Boolean."
JSON_BOOLEAN_PROMPT = "Answer the question with a JSON Boolean: true or false."
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


def add_postfix(text: str) -> str:
    """`question? Return a JSON Boolean.` (a "?" is added when the question lacks one)."""
    text = text.rstrip()
    return f"{text if text.endswith('?') else text + '?'} {POSTFIX}"


def parse_json_boolean(text: str) -> Answer:
    """true -> YES, false -> NO, anything else (undefined) -> INVALID.

    Accepts a bare JSON Boolean with surrounding whitespace, quotes, backticks, a code fence
    or a final full stop, in any case ("True", "`false`", "```json\\ntrue\\n```"). Objects or
    sentences that merely contain true are undefined, as in the thesis (Example 1, q3).
    """
    cleaned = _FENCE.sub("", text.strip()).strip().strip("`'\" ").rstrip(".").strip()
    try:
        value = json.loads(cleaned.lower())
    except ValueError:
        return Answer.INVALID
    if value is True:
        return Answer.YES
    if value is False:
        return Answer.NO
    return Answer.INVALID


def variants_for_ipm(
    ipm: QueryIPM,
    *,
    strength: int = 2,
    seed: int = 0,
    limit: int | None = None,
    postfix: bool = False,
    system_prompt: str | None = None,
    test_kind: TestKind = TestKind.VARIANT,
    expected: Answer | None = None,
    effort: int = DEFAULT_EFFORT,
) -> list[Conversation]:
    """One conversation per covering-array row of `ipm` (row 0 = the original question).

    `limit` keeps at most that many rows (row 0 included); the rest are dropped in array order.
    """
    array = build_covering_array(ipm.levels, strength, seed, effort=effort)
    rows = array.rows if limit is None else array.rows[: max(1, limit)]
    names = tuple(p.name for p in ipm.parameters)
    conversations = []
    for n, row in enumerate(rows):
        values = [p.values[i] for p, i in zip(ipm.parameters, row, strict=True)]
        text = ipm.render(values)
        changed = {p.name: p.values[i] for p, i in zip(ipm.parameters, row, strict=True) if i != 0}
        conversations.append(
            Conversation(
                id=f"{ipm.relation_id}/{ipm.template_id}~v{n}",
                relation_id=ipm.relation_id,
                kind="atomic",
                label=f"{ipm.template_id} v{n}",
                turns=(
                    Query(ipm.relation_id, ipm.template_id, add_postfix(text) if postfix else text),
                ),
                test_kind=test_kind,
                expected=(expected,) if expected is not None else (),
                system_prompt=system_prompt,
                extras=VariantExtras(
                    variant=n,
                    parameters=names,
                    row=tuple(row),
                    changed=changed,
                    original=ipm.text,
                    strength=strength,
                    postfix=postfix,
                    answer_format="json_boolean" if postfix else "yes_no",
                ),
            )
        )
    return conversations


def build_variant_conversations(
    kg: KnowledgeGraph,
    relations: Sequence[Relation],
    template_set: TemplateSet,
    template_ids: Sequence[str] | None = None,
    *,
    strength: int = 2,
    seed: int = 0,
    limit: int | None = None,
    postfix: bool = False,
    max_values: int = DEFAULT_MAX_VALUES,
    senses: int = DEFAULT_SENSES,
    effort: int = DEFAULT_EFFORT,
) -> list[Conversation]:
    """Variant conversations for every (relation, template), relation order first.

    This is what `kontest generate --variants --strength T` adds to a session.
    """
    lists = load_synonym_lists(template_set.domain)
    prompt = JSON_BOOLEAN_PROMPT if postfix else template_set.system_prompt
    out: list[Conversation] = []
    for relation in relations:
        for template in template_set.select(template_ids):
            ipm = ipm_for_query(
                kg,
                relation,
                template,
                template_set.domain,
                max_values=max_values,
                senses=senses,
                lists=lists,
                realise=template_set.realise,
            )
            out.extend(
                variants_for_ipm(
                    ipm,
                    strength=strength,
                    seed=seed,
                    limit=limit,
                    postfix=postfix,
                    system_prompt=prompt,
                    effort=effort,
                )
            )
    return out


def parse_variant_answer(conversation: Conversation, text: str) -> Answer | None:
    """The answer of a JSON-Boolean variant, or None when the normal yes/no parser applies."""
    extras = conversation.extras
    if isinstance(extras, VariantExtras) and extras.answer_format == "json_boolean":
        return parse_json_boolean(text)
    return None


@dataclass(frozen=True)
class VariantPreview:
    """A covering array for one question: its words (parameters) and the rows' values."""

    parameters: list[str]
    rows: list[list[str]]  # one value per parameter; row 0 is the original question
    sentences: list[str]
    levels: tuple[int, ...]


def preview_variants(
    kg: KnowledgeGraph,
    relation: Relation,
    template: Template,
    domain: str,
    strength: int = 2,
    seed: int = 0,
    *,
    realise: bool = False,
) -> VariantPreview:
    """The input-parameter model of one filled template and its t-way covering array (what
    the explorer's Variants step and synonym editor show before a run); `realise`: the
    template's set is realised."""
    ipm = ipm_for_query(kg, relation, template, domain, realise=realise)
    array = build_covering_array(ipm.levels, strength, seed)
    rows = [
        [parameter.values[index] for parameter, index in zip(ipm.parameters, row, strict=True)]
        for row in array.rows
    ]
    return VariantPreview(
        parameters=[parameter.word for parameter in ipm.parameters],
        rows=rows,
        sentences=[ipm.render(values) for values in rows],
        levels=tuple(ipm.levels),
    )
