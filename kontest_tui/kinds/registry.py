"""The registry of test kinds: what a session can ask besides KONTEST paraphrase pairs.

Every kind turns the same KONTEST suite (KG, relations, templates) into conversations, so
the generator, executor, store, reports and explorer treat them alike. Each kind is one
module (kinds/kontest.py, variant.py, factcheck.py, logic.py, annotation.py) whose `KIND`
(a kinds.base.KindInfo) says how its conversations are built, read and judged, its options,
words, report section and compare table; this module gathers them in `KINDS` (registry
order: the order sessions build, judge and list them) and adds the kinds of installed
plugins (the `kontest.kinds` entry-point group, plugins.py) after them (`all_kinds`).
Annotated questions are the one kind not built from a KG: they come from a JSONL file
(`kontest run --questions`), so their `build` is None.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Relation,
    TestKind,
)
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import Suite, build_conversations
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds import annotation, factcheck, kontest, logic, variant
from kontest_tui.kinds.annotation import build_annotated_questions
from kontest_tui.kinds.base import (
    Builder,
    Judge,
    KindDelta,
    KindInfo,
    KindOption,
    KindOptions,
    KindResult,
    Parser,
)
from kontest_tui.kinds.refusals import count_refusals
from kontest_tui.oracles.measures import KindMeasures
from kontest_tui.plugins import KINDS_GROUP, load_plugins

__all__ = [
    "KINDS",
    "Builder",
    "Judge",
    "KindInfo",
    "KindOptions",
    "KindResult",
    "Parser",
    "build_annotated_questions",
    "count_refusals",
]

BUILT_IN: tuple[KindInfo, ...] = (
    kontest.KIND,
    variant.KIND,
    factcheck.KIND,
    logic.KIND,
    annotation.KIND,
)
KINDS: dict[str, KindInfo] = {info.kind: info for info in BUILT_IN}
# A kind's name: lower-case letters, digits and '_' (the store and the report JSON key it)
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def all_kinds() -> dict[str, KindInfo]:
    """Every kind: the built-in ones in registry order, then the plugins'."""
    return {**KINDS, **{info.kind: info for info in _plugin_kinds()[0]}}


def kind_info(name: str) -> KindInfo | None:
    """The kind of a name as stored (built in first, then the plugins'), None if none."""
    found = KINDS.get(name)
    if found is not None:
        return found
    return next((info for info in _plugin_kinds()[0] if info.kind == name), None)


def kind_of(name: str) -> str:
    """A stored kind name as the engine holds it: the TestKind member of a built-in kind,
    the name itself for a plugin's (or a kind no longer installed)."""
    try:
        return TestKind(name)
    except ValueError:
        return name


def kind_rank(name: str) -> int:
    """Where a kind stands in the stored `kinds` list: the built-in ones in TestKind's
    order (what stored sessions have), then the plugins' in registry order."""
    members = list(TestKind)
    if name in members:
        return members.index(TestKind(name))
    plugins = [info.kind for info in _plugin_kinds()[0]]
    return len(members) + (plugins.index(name) if name in plugins else len(plugins))


def plugin_problems() -> tuple[str, ...]:
    """One line per `kontest.kinds` plugin left out (it did not load, or its name is taken)."""
    return _plugin_kinds()[1]


def reload_plugins() -> None:
    """Forget the plugin kinds loaded, so the next lookup loads them again."""
    _plugin_kinds.cache_clear()


def _not_a_kind(value: object) -> str | None:
    if not isinstance(value, KindInfo):
        return f"{type(value).__name__} is not a kontest_tui.kinds.base.KindInfo"
    if not _NAME.fullmatch(value.name):
        return f"test kind {value.name!r} is not a name (lower-case letters, digits, '_')"
    return None


@functools.cache
def _plugin_kinds() -> tuple[tuple[KindInfo, ...], tuple[str, ...]]:
    group = load_plugins(KINDS_GROUP, _not_a_kind)
    kinds: list[KindInfo] = []
    problems = list(group.problems)
    taken = set(KINDS) | set(_ALIASES) | {name for info in BUILT_IN for name in info.oracles}
    for plugin in group.plugins:
        assert isinstance(plugin.value, KindInfo)  # accepted by _not_a_kind
        name = plugin.value.name
        if name in taken:
            problems.append(
                f"plugin {plugin.name!r} ({plugin.source}) is left out: test kind {name!r} is taken"
            )
            continue
        taken.add(name)
        kinds.append(plugin.value)
    return tuple(kinds), tuple(problems)


def array_kinds(kinds: Mapping[str, KindInfo] | None = None) -> frozenset[str]:
    """The kinds asked as covering arrays of their questions: those taking the arrays'
    strength (which the explorer's Variants step sets), those from files included (of
    `kinds`; None: every kind)."""
    return frozenset(
        info.name
        for info in (all_kinds() if kinds is None else kinds).values()
        if any(option.key == "strength" for option in info.options)
    )


def fact_phrasing_kinds() -> frozenset[str]:
    """The kinds whose questions are the template set's phrasings of KG facts (`states_facts`:
    what the curation evidence counts per template and word, oracles.evidence)."""
    return frozenset(info.name for info in all_kinds().values() if info.states_facts)


def kind_delta(code: str) -> KindDelta | None:
    """The kind's measure a delta names by `code` (kinds.base.KindDelta), None if none."""
    return next(
        (info.delta for info in all_kinds().values() if info.delta and info.delta.code == code),
        None,
    )


def builtin_oracles() -> tuple[str, ...]:
    """The built-in kinds' oracles in registry order, KONTEST's first, each once."""
    return tuple(dict.fromkeys(oracle for info in KINDS.values() for oracle in info.oracles))


def builtin_measures() -> tuple[KindMeasures, ...]:
    """The built-in kinds' headline, accuracy and consistency declarations, in registry order
    (what a stored report's headline is read with: store.schema)."""
    return tuple(info.measures for info in KINDS.values())


def headline_title(measure: str) -> str:
    """The title of a headline measure, a kind's name ("logic" -> "hallucination rate")."""
    info = kind_info(measure) if measure else None
    return info.headline.title if info is not None and info.headline is not None else measure


def kind_options() -> list[KindOption]:
    """Every kind's options, each once (an option several kinds share is declared by each),
    in registry order."""
    seen: dict[str, KindOption] = {}
    for info in all_kinds().values():
        for option in info.options:
            seen.setdefault(option.key, option)
    return list(seen.values())


def parse_kinds(values: Iterable[str]) -> tuple[str, ...]:
    """["kontest", "factcheck,logic"] -> kinds in registry order; unknown names are an error."""
    kinds = all_kinds()
    aliases = {alias: info.name for info in kinds.values() for alias in info.aliases}
    names = [part.strip().lower() for value in values for part in value.split(",") if part.strip()]
    names = [aliases.get(name, name) for name in names]
    known = {info.name: kind for kind, info in kinds.items() if info.build is not None}
    for name in names:
        info = kinds.get(name)
        if info is not None and info.build is None:
            raise InvalidInputError(info.unbuilt_hint or f"test kind {name!r} is not built")
        if name not in known:
            raise InvalidInputError(
                f"unknown test kind {name!r} (choose from {', '.join(known)})"
                + "".join(f"; {line}" for line in plugin_problems())
            )
    return tuple(kind for kind in kinds if kind in names)


_ALIASES = {alias: info.name for info in BUILT_IN for alias in info.aliases}


def build_kind_conversations(
    suite: Suite,
    kg: KnowledgeGraph,
    kinds: Sequence[str],
    options: KindOptions | None = None,
) -> list[Conversation]:
    """The conversations of every selected kind, kind by kind in registry order."""
    options = options or KindOptions()
    conversations: list[Conversation] = []
    for kind, info in all_kinds().items():
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
    kinds: tuple[str, ...]
    options: KindOptions
    conversations: tuple[Conversation, ...]

    def matches(
        self,
        relations: Sequence[Relation],
        template_ids: Sequence[str],
        kinds: Sequence[str],
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
    kinds: Sequence[str],
    options: KindOptions,
) -> PrebuiltKinds:
    """The conversations of `kinds` (not KONTEST: they read the relations and templates, not
    KONTEST's conversations) over these relations, kind by kind in registry order."""
    chosen_ids = tuple(template.id for template in template_set.select(list(template_ids)))
    ordered = tuple(
        kind for kind, info in all_kinds().items() if kind in kinds and not info.is_core
    )
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
    kind: str,
    options: KindOptions | None = None,
) -> list[Conversation]:
    """The conversations of one test kind for these relations and templates: the KONTEST
    conversations themselves, or the kind built over their suite (what the explorer's Kinds
    step counts and a run asks)."""
    kontest_conversations = build_conversations(kg, relations, template_set, template_ids)
    if kind == kontest.KIND.kind:
        return kontest_conversations
    chosen_ids = tuple(template.id for template in template_set.select(list(template_ids)))
    suite = Suite(list(relations), kontest_conversations, template_set, chosen_ids)
    return build_kind_conversations(suite, kg, [kind], options)


def parse_reply(conversation: Conversation, raw: str) -> Answer:
    """A reply read the way its conversation's kind reads replies (what the store keeps)."""
    info = kind_info(conversation.test_kind)
    return (
        info.parse(conversation, raw)
        if info is not None
        else kontest.parse_yes_no(conversation, raw)
    )


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
    info = kind_info(conversation.test_kind)
    if info is None or info.answer_format is None:
        return "yes_no"
    return info.answer_format(conversation)


def judge_kinds(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str] = (),
) -> KindResult:
    """Verdicts and report sections of every kind with its own judge, in registry order.

    Kinds sharing a judge (FactChecker and logic rules) are judged once.
    """
    by_kind: dict[str, list[Conversation]] = {}
    for conversation in conversations:
        by_kind.setdefault(conversation.test_kind, []).append(conversation)
    result = KindResult()
    judged: dict[Judge, list[Conversation]] = {}
    for kind, info in all_kinds().items():
        if info.judge is not None and kind in by_kind:
            judged.setdefault(info.judge, []).extend(by_kind[kind])
    for judge, members in judged.items():
        part = judge(members, raw, answers, problems)
        result.verdicts.extend(part.verdicts)
        result.sections.update(part.sections)
        result.rate_cells.update(part.rate_cells)
    return result
