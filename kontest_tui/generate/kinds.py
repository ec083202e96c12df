"""The registry of test kinds: what a session can ask besides KONTEST paraphrase pairs.

Every kind turns the same KONTEST suite (KG, relations, templates) into conversations, so
the generator, executor, store, reports and explorer treat them alike. A kind's builder
is looked up here; the explorer lists `KINDS` in the wizard, the CLI takes `--kind`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import Suite
from kontest_tui.generate.records import Conversation, TestKind
from kontest_tui.kg.graph import KnowledgeGraph


@dataclass(frozen=True)
class KindOptions:
    """Options shared by the builders (each uses what applies to it)."""

    seed: int = 0
    strength: int = 2  # covering-array strength (variants)
    question_types: tuple[str, ...] | None = None  # FactChecker subset
    rules: tuple[str, ...] | None = None  # logic-rule subset


Builder = Callable[[Suite, KnowledgeGraph, KindOptions], list[Conversation]]


@dataclass(frozen=True)
class KindInfo:
    kind: TestKind
    title: str
    description: str
    oracles: tuple[str, ...]
    build: Builder


def _kontest(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    return [c for c in suite.conversations if c.test_kind == TestKind.KONTEST]


def _factcheck(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    from kontest_tui.probes.factcheck import build_factcheck_conversations
    from kontest_tui.probes.templates import QUESTION_TYPES, load_probe_templates

    return build_factcheck_conversations(
        kg,
        suite.relations,
        load_probe_templates(suite.template_set.domain),
        seed=options.seed,
        question_types=options.question_types or QUESTION_TYPES,
    )


def _logic(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    from kontest_tui.probes.logic import build_logic_conversations
    from kontest_tui.probes.templates import LOGIC_RULES, load_probe_templates

    return build_logic_conversations(
        kg,
        suite.relations,
        load_probe_templates(suite.template_set.domain),
        rules=options.rules or LOGIC_RULES,
    )


KINDS: dict[TestKind, KindInfo] = {
    TestKind.KONTEST: KindInfo(
        TestKind.KONTEST,
        "KONTEST paraphrases",
        "Two equivalent questions per relation, alone and in sequence (6 calls per relation).",
        ("atomic", "sequential_intra", "sequential_inter", "ontological"),
        _kontest,
    ),
    TestKind.FACTCHECK: KindInfo(
        TestKind.FACTCHECK,
        "FactChecker questions",
        "Yes-no (balanced with false distractors), multiple choice, WH and 2-hop questions.",
        ("factcheck",),
        _factcheck,
    ),
    TestKind.LOGIC: KindInfo(
        TestKind.LOGIC,
        "Logic rules",
        "Negation, symmetric, inverse, transitive and composite rules; 'I don't know' allowed.",
        ("logic",),
        _logic,
    ),
}


def register_kind(info: KindInfo) -> None:
    """Add or replace a kind (covering-array variants register themselves this way)."""
    KINDS[info.kind] = info


def parse_kinds(values: Iterable[str]) -> tuple[TestKind, ...]:
    """["kontest", "factcheck,logic"] -> kinds in registry order; unknown names are an error."""
    names = [part.strip().lower() for value in values for part in value.split(",") if part.strip()]
    known = {kind.value: kind for kind in KINDS}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise InvalidInputError(
            f"unknown test kind {unknown[0]!r} (choose from {', '.join(known)})"
        )
    return tuple(kind for kind in KINDS if kind.value in names)


def build_kind_conversations(
    suite: Suite,
    kg: KnowledgeGraph,
    kinds: Sequence[TestKind],
    options: KindOptions | None = None,
) -> list[Conversation]:
    """The conversations of every selected kind, kind by kind in registry order."""
    options = options or KindOptions()
    conversations: list[Conversation] = []
    for kind in KINDS:
        if kind in kinds:
            conversations.extend(KINDS[kind].build(suite, kg, options))
    return conversations
