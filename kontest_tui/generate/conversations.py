"""KONTEST conversations: each relation asked alone under each template and in both orders.

Per relation with templates (ta, tb): atomic "REL/ta" (Q1) and "REL/tb" (Q2), sequential
"REL/ta+tb" (A) and "REL/tb+ta" (B). One template gives only atomic conversations; three or
more give an atomic one per template (Q1, Q2, Q3, ...) and the sequential pair for the first two.
Order: relation order, then Q1, Q2, (Q3, ...), A, B.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

from kontest_tui.domain.records import Conversation, Query, Relation, TestKind
from kontest_tui.generate.realise import Realiser, realise_question, realiser_for
from kontest_tui.generate.relations import iter_relations
from kontest_tui.generate.templates import (
    TemplateSet,
    clean_label,
    fill_template,
    format_string,
    resolve_template_set,
)
from kontest_tui.kg.graph import KnowledgeGraph


def question_text(
    kg: KnowledgeGraph, relation: Relation, template_set: TemplateSet, template_id: str
) -> str:
    """The question one template asks about one relation: realised when the set says so
    (generate.realise), else the text filled with the labels as they are."""
    text = template_set.get(template_id).text_for(relation.type)
    return fill_question(kg, relation, text, realise=template_set.realise, template_id=template_id)


def fill_question(
    kg: KnowledgeGraph, relation: Relation, text: str, *, realise: bool, template_id: str = ""
) -> str:
    """A template text filled for one relation: realised (generate.realise), or with the
    labels as they are."""
    if realise:
        return realise_question(realiser_for(kg), relation, template_id, text).text
    return fill_template(text, kg.label(relation.parent), kg.label(relation.child))


def _realised_queries(
    realiser: Realiser,
    relation: Relation,
    template_set: TemplateSet,
    template_ids: Sequence[str],
) -> list[Query]:
    return [
        Query(
            relation.id,
            template_id,
            realise_question(
                realiser,
                relation,
                template_id,
                template_set.get(template_id).text_for(relation.type),
            ).text,
        )
        for template_id in template_ids
    ]


def build_conversations(
    kg: KnowledgeGraph,
    relations: Sequence[Relation],
    template_set: TemplateSet,
    template_ids: Sequence[str] | None = None,
) -> list[Conversation]:
    """The KONTEST conversations of every relation, in generation order."""
    templates = template_set.select(template_ids)
    ids = [template.id for template in templates]
    realiser = realiser_for(kg) if template_set.realise else None
    relation_types = {relation.type for relation in relations} if realiser is None else set()
    patterns = {
        (template.id, relation_type): format_string(template.text_for(relation_type))
        for template in templates
        for relation_type in relation_types
    }
    labels: dict[str, str] = {}
    system_prompt = template_set.system_prompt
    atomic_labels = [f"Q{index + 1}" for index in range(len(ids))]
    kontest = TestKind.KONTEST
    conversations: list[Conversation] = []
    append = conversations.append
    for relation in relations:
        rel_id = relation.id
        if realiser is not None:
            queries = _realised_queries(realiser, relation, template_set, ids)
        else:
            parent_label = labels.get(relation.parent)
            if parent_label is None:
                parent_label = labels[relation.parent] = clean_label(kg.label(relation.parent))
            child_label = labels.get(relation.child)
            if child_label is None:
                child_label = labels[relation.child] = clean_label(kg.label(relation.child))
            rel_type = relation.type
            queries = [
                Query(
                    rel_id,
                    template_id,
                    patterns[template_id, rel_type].format(parent_label, child_label),
                )
                for template_id in ids
            ]
        for label, query in zip(atomic_labels, queries, strict=True):
            append(
                Conversation(
                    f"{rel_id}/{query.template_id}",
                    rel_id,
                    "atomic",
                    label,
                    (query,),
                    kontest,
                    (),
                    system_prompt,
                )
            )
        if len(queries) >= 2:
            first, second = queries[0], queries[1]
            append(
                Conversation(
                    f"{rel_id}/{first.template_id}+{second.template_id}",
                    rel_id,
                    "sequential",
                    "A",
                    (first, second),
                    kontest,
                    (),
                    system_prompt,
                )
            )
            append(
                Conversation(
                    f"{rel_id}/{second.template_id}+{first.template_id}",
                    rel_id,
                    "sequential",
                    "B",
                    (second, first),
                    kontest,
                    (),
                    system_prompt,
                )
            )
    return conversations


@dataclass(frozen=True, slots=True)
class Suite:
    """What one generation step produced: the relations, the templates used, the conversations."""

    relations: list[Relation]
    conversations: list[Conversation]
    template_set: TemplateSet
    template_ids: tuple[str, ...]


def build_suite(
    kg: KnowledgeGraph,
    depth: int | None = None,
    per_path: bool = False,
    template_set: TemplateSet | str | None = None,
    template_ids: Sequence[str] | None = None,
    limit: int | None = None,
) -> Suite:
    """KG -> paths -> relations -> KONTEST conversations in one call (what `kontest generate`
    and a run use). `template_set` may be a set, a domain or a .toml path; default: KG domain.
    `limit` keeps the first N relations, and only those are ever made (paths are walked
    until N relations are found)."""
    template_set = resolve_template_set(template_set, kg.domain)
    templates = template_set.select(template_ids)
    relations = list(
        islice(
            iter_relations(
                kg, depth, per_path=per_path, template_set=template_set, guard=limit is None
            ),
            limit,
        )
    )
    ids = tuple(template.id for template in templates)
    conversations = build_conversations(kg, relations, template_set, ids)
    return Suite(relations, conversations, template_set, ids)
