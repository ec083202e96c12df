"""The registry of test kinds: what a session can ask besides KONTEST paraphrase pairs.

Every kind turns the same KONTEST suite (KG, relations, templates) into conversations, so
the generator, executor, store, reports and explorer treat them alike. A kind says how
its conversations are built (`build`), how a reply is read (`parse`, what the executor
stores as the parsed answer) and how its answers are judged (`judge`: verdicts plus the
report section). The explorer lists `KINDS` in the wizard, the CLI takes `--kind`.
Annotated questions are the one kind not built from a KG: they come from a JSONL file
(`kontest run --questions`), so their `build` is None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kontest_tui.domain.answers import is_refusal, parse_answer
from kontest_tui.domain.extras import CHOICE_TYPES, WH
from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Relation,
    TestKind,
    Verdict,
)
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import Suite, build_conversations
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.oracles.ontological import PAPER_RULE

if TYPE_CHECKING:
    from kontest_tui.probes.templates import ProbeTemplates


@dataclass(frozen=True)
class KindOptions:
    """Options shared by the builders (each uses what applies to it)."""

    seed: int = 0
    strength: int = 2  # covering-array strength (variants)
    variant_limit: int | None = None  # at most this many variants per query (None: the array)
    postfix: bool = False  # variants end with "? Return a JSON Boolean."
    question_types: tuple[str, ...] | None = None  # FactChecker subset
    rules: tuple[str, ...] | None = None  # logic-rule subset
    probes: str | None = None  # a probe file (FactChecker and logic templates) for the domain's
    # which ontological tests are valid: the paper's text or its prototype's (oracles.ontological)
    ontological_rule: str = PAPER_RULE

    def to_json(self) -> dict[str, object]:
        return {
            "seed": self.seed,
            "strength": self.strength,
            "variant_limit": self.variant_limit,
            "postfix": self.postfix,
            "question_types": list(self.question_types) if self.question_types else None,
            "rules": list(self.rules) if self.rules else None,
            "probes": self.probes,
            "ontological_rule": self.ontological_rule,
        }

    def probe_templates(self, domain: str) -> ProbeTemplates:
        """The probe templates these options ask with: the probe file, else the domain's."""
        from kontest_tui.probes.templates import load_probe_templates

        return load_probe_templates(self.probes or domain)

    @classmethod
    def from_json(cls, data: Mapping[str, object] | None) -> KindOptions:
        data = data or {}
        listed = {"question_types", "rules"}
        known: dict[str, Any] = {
            key: (tuple(cast("Iterable[str]", value)) if key in listed and value else value)
            for key, value in data.items()
            if key in cls.__dataclass_fields__
        }
        return cls(**known)


@dataclass
class KindResult:
    """What judging one kind's answers gives: verdicts, the report section(s), and the rates
    that are not one test per verdict (name -> relation id -> [errors, tests]: the logic
    rules' hallucination rate, errors of all responses)."""

    verdicts: list[Verdict] = field(default_factory=list)
    sections: dict[str, object] = field(default_factory=dict)
    rate_cells: dict[str, dict[str, list[int]]] = field(default_factory=dict)


Builder = Callable[[Suite, KnowledgeGraph, KindOptions], list[Conversation]]
Parser = Callable[[Conversation, str], Answer]
# (this kind's conversations, raw replies, parsed answers, input problems) -> result
Judge = Callable[
    [Sequence[Conversation], Mapping[AnswerKey, str], Mapping[AnswerKey, Answer], Sequence[str]],
    KindResult,
]


@dataclass(frozen=True)
class KindInfo:
    kind: TestKind
    title: str
    description: str
    oracles: tuple[str, ...]
    build: Builder | None  # None: not built from a KG (annotated questions)
    parse: Parser
    judge: Judge | None = None  # None: judged by the KONTEST oracles (oracles.evaluate)


def _kontest(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    return [c for c in suite.conversations if c.test_kind == TestKind.KONTEST]


def _factcheck(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    from kontest_tui.probes.factcheck import build_factcheck_conversations
    from kontest_tui.probes.templates import QUESTION_TYPES

    return build_factcheck_conversations(
        kg,
        suite.relations,
        options.probe_templates(suite.template_set.domain),
        seed=options.seed,
        question_types=options.question_types or QUESTION_TYPES,
    )


def _logic(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    from kontest_tui.probes.logic import build_logic_conversations
    from kontest_tui.probes.templates import LOGIC_RULES

    return build_logic_conversations(
        kg,
        suite.relations,
        options.probe_templates(suite.template_set.domain),
        rules=options.rules or LOGIC_RULES,
    )


def _variants(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    from kontest_tui.generate.variants import build_variant_conversations

    return build_variant_conversations(
        kg,
        suite.relations,
        suite.template_set,
        suite.template_ids,
        strength=options.strength,
        seed=options.seed,
        limit=options.variant_limit,
        postfix=options.postfix,
    )


def _parse_yes_no(conversation: Conversation, raw: str) -> Answer:
    return parse_answer(raw)


def _parse_variant(conversation: Conversation, raw: str) -> Answer:
    from kontest_tui.generate.variants import parse_variant_answer

    return parse_variant_answer(conversation, raw) or _parse_yes_no(conversation, raw)


def _parse_probe(conversation: Conversation, raw: str) -> Answer:
    from kontest_tui.probes.evaluate import parse_probe_answer

    return parse_probe_answer(conversation, raw)


def count_refusals(
    conversations: Iterable[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
) -> int:
    """Answered yes/no turns that are not yes or no and decline to answer ("I don't know"):
    invalid answers, reported on their own as refusals."""
    count = 0
    for conversation in conversations:
        for position in range(len(conversation.turns)):
            key = (conversation.id, position)
            answer = answers.get(key)
            if answer is None or answer in (Answer.YES, Answer.NO, "yes", "no"):
                continue
            count += answer == Answer.REFUSAL or is_refusal(raw.get(key))
    return count


def _judge_variants(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str],
) -> KindResult:
    from kontest_tui.oracles.variant import summarize_variants

    verdicts, section = summarize_variants(conversations, answers)
    section["refusals"] = count_refusals(conversations, raw, answers)
    return KindResult(verdicts, {"variants": section})


def _judge_annotations(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str],
) -> KindResult:
    from kontest_tui.oracles.annotation import evaluate_annotations

    result = evaluate_annotations(conversations, answers, problems)
    section = result.to_json()
    section["refusals"] = count_refusals(conversations, raw, answers)
    return KindResult(result.verdicts, {"annotation": section})


def _judge_probes(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str],
) -> KindResult:
    from kontest_tui.probes.evaluate import evaluate_probes
    from kontest_tui.probes.matching import embedding_similarity

    result = evaluate_probes(conversations, raw, similarity=embedding_similarity())
    cells = {"hallucination": result.hallucinations} if result.hallucinations else {}
    return KindResult(result.verdicts, result.to_json(), cells)


KINDS: dict[TestKind, KindInfo] = {
    TestKind.KONTEST: KindInfo(
        TestKind.KONTEST,
        "KONTEST paraphrases",
        "Two equivalent questions per relation, alone and in sequence (6 calls per relation).",
        ("atomic", "sequential_intra", "sequential_inter", "ontological"),
        _kontest,
        _parse_yes_no,
    ),
    TestKind.VARIANT: KindInfo(
        TestKind.VARIANT,
        "Covering-array variants",
        "Each question with synonyms and aliases swapped in, a t-way covering array of them.",
        ("variant",),
        _variants,
        _parse_variant,
        _judge_variants,
    ),
    TestKind.FACTCHECK: KindInfo(
        TestKind.FACTCHECK,
        "FactChecker questions",
        "Yes-no (balanced with false distractors), multiple choice, WH and 2-hop questions.",
        ("factcheck",),
        _factcheck,
        _parse_probe,
        _judge_probes,
    ),
    TestKind.LOGIC: KindInfo(
        TestKind.LOGIC,
        "Logic rules",
        "Negation, symmetric, inverse, transitive and composite rules; 'I don't know' allowed.",
        ("logic",),
        _logic,
        _parse_probe,
        _judge_probes,
    ),
    TestKind.ANNOTATION: KindInfo(
        TestKind.ANNOTATION,
        "Annotated questions",
        "BoolQ-style questions from a JSONL file, with variants, against their annotation.",
        ("annotation", "variant"),
        None,
        _parse_variant,
        _judge_annotations,
    ),
}


def parse_kinds(values: Iterable[str]) -> tuple[TestKind, ...]:
    """["kontest", "factcheck,logic"] -> kinds in registry order; unknown names are an error."""
    names = [part.strip().lower() for value in values for part in value.split(",") if part.strip()]
    names = [_ALIASES.get(name, name) for name in names]
    known = {kind.value: kind for kind, info in KINDS.items() if info.build is not None}
    for name in names:
        if name == TestKind.ANNOTATION.value:
            raise InvalidInputError(
                "annotated questions come from a file: use --questions FILE.jsonl"
            )
        if name not in known:
            raise InvalidInputError(f"unknown test kind {name!r} (choose from {', '.join(known)})")
    return tuple(kind for kind in KINDS if kind.value in names)


_ALIASES = {"variants": "variant", "paraphrases": "kontest", "facts": "factcheck", "rules": "logic"}


def build_kind_conversations(
    suite: Suite,
    kg: KnowledgeGraph,
    kinds: Sequence[TestKind],
    options: KindOptions | None = None,
) -> list[Conversation]:
    """The conversations of every selected kind, kind by kind in registry order."""
    options = options or KindOptions()
    conversations: list[Conversation] = []
    for kind, info in KINDS.items():
        if kind in kinds and info.build is not None:
            conversations.extend(info.build(suite, kg, options))
    return conversations


@dataclass(frozen=True)
class PrebuiltKinds:
    """The other kinds' conversations built over `relation_ids` with `template_ids` and
    `options` (what the explorer's prepare builds to count them): a session of exactly
    these stores them as they are instead of building them again (`matches`)."""

    relation_ids: tuple[str, ...]
    template_ids: tuple[str, ...]
    kinds: tuple[TestKind, ...]
    options: KindOptions
    conversations: tuple[Conversation, ...]

    def matches(
        self,
        relations: Sequence[Relation],
        template_ids: Sequence[str],
        kinds: Sequence[TestKind],
        options: KindOptions,
    ) -> bool:
        """Whether these were built for this session's relations, templates, kinds and options."""
        return (
            set(self.kinds) == set(kinds)  # built in registry order either way
            and self.template_ids == tuple(template_ids)
            and self.options == options
            and self.relation_ids == tuple(relation.id for relation in relations)
        )


def build_other_kinds(
    kg: KnowledgeGraph,
    relations: Sequence[Relation],
    template_set: TemplateSet,
    template_ids: Sequence[str],
    kinds: Sequence[TestKind],
    options: KindOptions,
) -> PrebuiltKinds:
    """The conversations of `kinds` (not KONTEST: they read the relations and templates, not
    KONTEST's conversations) over these relations, kind by kind in registry order."""
    chosen_ids = tuple(template.id for template in template_set.select(list(template_ids)))
    ordered = tuple(kind for kind in KINDS if kind in kinds and kind is not TestKind.KONTEST)
    suite = Suite(list(relations), [], template_set, chosen_ids)
    return PrebuiltKinds(
        tuple(relation.id for relation in relations),
        chosen_ids,
        ordered,
        options,
        tuple(build_kind_conversations(suite, kg, ordered, options)),
    )


def build_kind_for_relations(
    kg: KnowledgeGraph,
    relations: Sequence[Relation],
    template_set: TemplateSet,
    template_ids: Sequence[str],
    kind: TestKind,
    options: KindOptions | None = None,
) -> list[Conversation]:
    """The conversations of one test kind for these relations and templates: the KONTEST
    conversations themselves, or the kind built over their suite (what the explorer's Kinds
    step counts and a run asks)."""
    kontest = build_conversations(kg, relations, template_set, template_ids)
    if kind is TestKind.KONTEST:
        return kontest
    chosen_ids = tuple(template.id for template in template_set.select(list(template_ids)))
    suite = Suite(list(relations), kontest, template_set, chosen_ids)
    return build_kind_conversations(suite, kg, [kind], options)


def build_annotated_questions(
    path: str | Path, options: KindOptions | None = None
) -> tuple[list[Conversation], list[str]]:
    """Variant conversations of an annotated-questions JSONL file, built with the variant
    options, and its skipped lines (`FILE:LINE: reason`); InvalidInputError when none is usable."""
    from kontest_tui.generate.annotated import build_annotation_conversations

    options = options or KindOptions()
    return build_annotation_conversations(
        path,
        strength=options.strength,
        seed=options.seed,
        limit=options.variant_limit,
        postfix=options.postfix,
    )


def parse_reply(conversation: Conversation, raw: str) -> Answer:
    """A reply read the way its conversation's kind reads replies (what the store keeps)."""
    info = KINDS.get(conversation.test_kind)
    return info.parse(conversation, raw) if info is not None else _parse_yes_no(conversation, raw)


def read_reply(conversation: Conversation, raw: str, stopped: str | None = None) -> Answer:
    """`parse_reply`, and CUT for a reply the token limit or the timeout (`stopped`) ended
    before it said anything readable for its kind (a yes/no, a letter, a refusal, a name):
    such an answer is graded neither right nor wrong (counted apart) and never asked again."""
    answer = parse_reply(conversation, raw)
    if stopped is None:
        return answer
    from kontest_tui.probes.evaluate import cut_before_readable

    return Answer.CUT if cut_before_readable(conversation, raw, answer) else answer


def answer_format(conversation: Conversation) -> str:
    """What a reply to this conversation is: "yes_no" (every kind's yes/no questions, logic
    rules and JSON Booleans included), "choice" (a multiple-choice letter) or "open" (a
    name: FactChecker's WH questions). Completions mode picks its few-shot prompt by it."""
    extras = conversation.extras
    question_type = getattr(extras, "question_type", None)
    if conversation.test_kind is TestKind.FACTCHECK and question_type is not None:
        if question_type in CHOICE_TYPES:
            return "choice"
        if question_type == WH:
            return "open"
    return "yes_no"


def judge_kinds(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str] = (),
) -> KindResult:
    """Verdicts and report sections of every kind with its own judge, in registry order.

    Kinds sharing a judge (FactChecker and logic rules) are judged once.
    """
    by_kind: dict[TestKind, list[Conversation]] = {}
    for conversation in conversations:
        by_kind.setdefault(conversation.test_kind, []).append(conversation)
    result = KindResult()
    judged: dict[Judge, list[Conversation]] = {}
    for kind, info in KINDS.items():
        if info.judge is not None and kind in by_kind:
            judged.setdefault(info.judge, []).extend(by_kind[kind])
    for judge, members in judged.items():
        part = judge(members, raw, answers, problems)
        result.verdicts.extend(part.verdicts)
        result.sections.update(part.sections)
        result.rate_cells.update(part.rate_cells)
    return result
