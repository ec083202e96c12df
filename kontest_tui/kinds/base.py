"""What a test kind is: the record each kind's module fills in (`KindInfo`) and its parts.

A kind is one module (kinds/variant.py, kinds/factcheck.py, ... or a plugin's, loaded from
the `kontest.kinds` entry-point group by kinds/registry.py) whose `KIND` says everything the
rest of kontest needs of it: how its conversations are built, how a reply is read and how
its answers are judged; its options (from which `kontest run`'s and `kontest generate`'s
flags and the explorer's controls are made); the words of its oracles; its report section
as tables, which the text, Markdown and HTML reports and the explorer's Kinds tab lay out
alike; its table in `kontest compare`; and whether its errors have a card of their own.

The kinds sit below the report in the layers, so their tables are made with the report's
cell formats handed in (`CellFormat`, implemented by report/render.py), never imported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, TestKind, Verdict
from kontest_tui.generate.conversations import Suite
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.oracles.measures import AccuracyOf, KindMeasures
from kontest_tui.oracles.measures import KindHeadline as KindHeadline  # a kind declares it
from kontest_tui.oracles.ontological import PAPER_RULE

if TYPE_CHECKING:
    from kontest_tui.probes.templates import ProbeTemplates


@dataclass(frozen=True)
class KindOptions:
    """Options shared by the builders (each uses what applies to it). The built-in kinds'
    options are fields (stored sessions keep them under these keys); a plugin kind's are in
    `extra` (stored under "extra" when there are any)."""

    seed: int = 0
    strength: int = 2  # covering-array strength (variants)
    variant_limit: int | None = None  # at most this many variants per query (None: the array)
    postfix: bool = False  # variants end with "? Return a JSON Boolean."
    question_types: tuple[str, ...] | None = None  # FactChecker subset
    rules: tuple[str, ...] | None = None  # logic-rule subset
    probes: str | None = None  # a probe file (FactChecker and logic templates) for the domain's
    # which ontological tests are valid: the paper's text or its prototype's (oracles.ontological)
    ontological_rule: str = PAPER_RULE
    extra: tuple[tuple[str, object], ...] = ()  # a plugin kind's options, (key, value) pairs

    def value(self, key: str) -> object:
        """An option's value by its key (a field, else a plugin kind's `extra` one)."""
        if key in self.__dataclass_fields__ and key != "extra":
            return cast("object", getattr(self, key))
        return dict(self.extra).get(key)

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "seed": self.seed,
            "strength": self.strength,
            "variant_limit": self.variant_limit,
            "postfix": self.postfix,
            "question_types": list(self.question_types) if self.question_types else None,
            "rules": list(self.rules) if self.rules else None,
            "probes": self.probes,
            "ontological_rule": self.ontological_rule,
        }
        if self.extra:
            data["extra"] = dict(self.extra)
        return data

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
            if key in cls.__dataclass_fields__ and key != "extra"
        }
        extra = data.get("extra")
        if isinstance(extra, Mapping):
            known["extra"] = tuple(sorted((str(k), v) for k, v in extra.items()))
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
ReportData = Mapping[str, Any]  # a Report JSON (oracles.report_json.ReportJSON)
SectionTable = tuple[str, tuple[str, ...], list[tuple[str, ...]]]  # (title, header, rows)


class CellFormat(Protocol):
    """How the report writes a cell: what a kind's tables are made with (report.render)."""

    def oracle_name(self, oracle: str) -> str:
        """An oracle's name for a reader ("reworded variants")."""
        ...

    def percent(self, value: float | None) -> str:
        """`12.5%`, "-" for None."""
        ...

    def rate(self, errors: int, tests: int) -> str:
        """errors / tests as a percentage, "-" when there is no test."""
        ...

    def count_cell(self, count: int, of: int) -> str:
        """`3/30 10.0% [3.5-25.6]`: a count of a total with its 95% Wilson interval."""
        ...

    def report_rate_cell(self, report: ReportData, name: str, count: int, of: int) -> str:
        """`count_cell` with the report's own interval of rate `name` where it has one."""
        ...


# The report's section of a kind: (report, cell formats) -> its tables, in order.
SectionTables = Callable[[ReportData, CellFormat], list[SectionTable]]
# A kind's table in `kontest compare`: (reports, their labels, cell formats, by JSON keys) ->
# its tables (none when no report has its section).
CompareTables = Callable[
    [Sequence[ReportData], Sequence[str], CellFormat, bool], list[SectionTable]
]


# A verdict in words: (verdict, its first answer in words, its second, the other of yes and
# no to the first: a wrong yes-or-no answer's right one) -> words (report.words)
VerdictWords = Callable[[Verdict, str, str, str], str]


def wrong_answer_brief(verdict: Verdict, first: str, second: str, other: str) -> str:
    """A wrong yes-or-no answer against the known one, in a few words (a `brief`)."""
    return f"said {first}, the right answer is {other}"


@dataclass(frozen=True)
class OracleWords:
    """What an oracle of a kind is called, what its test checks ("it checks that ..."), what
    an explanation card of its errors is titled; `card` False: its errors have no card of
    their own (the report's plain card shows their answers); `idk`: 'I don't know' is a
    normal answer of its test, its section's refusals shown beside its errors. `template`,
    `sentence`, `brief`: its verdict's template column, its error as one sentence and in a
    few words (report.words; None: the report's plain wording of the answers)."""

    oracle: str
    name: str
    checks: str
    card_title: str
    card: bool = True
    idk: bool = False
    template: Callable[[Verdict], str] | None = None
    sentence: VerdictWords | None = None
    brief: VerdictWords | None = None
    # Its explanation card: "module:function" (report/cards/<kind>.py: the cards sit above
    # the kinds), imported when a card of it is made; "" with `card`: the report's plain card.
    card_builder: str = ""
    # How a card says where its right answer comes from: "" the knowledge graph states the
    # fact asked (yes is right); a verb ("comes from", "follows by the rule from") for a
    # right answer of its own; None: no knowledge graph is behind its test (annotations).
    answer_from: str | None = ""


@dataclass(frozen=True)
class KindDelta:
    """A measure of a kind that a session asked again is compared by (`kontest rerun`'s
    delta, results.delta.rate_changes): its code in the delta JSON, its words (report.delta)
    and (count, of) read from its report section, compared when both reports have it."""

    code: str
    label: str
    counts: Callable[[Mapping[str, Any]], tuple[int, int]]


OptionType = Literal["int", "flag", "path", "names", "choice"]


@dataclass(frozen=True)
class KindOption:
    """One option of a kind, declared once: `kontest run` and `kontest generate` get a flag
    of it, the explorer's Kinds step a control. `key` is its KindOptions field (a plugin
    kind's: its `extra` key); "names" is a comma-separated list of `choices` (None: all);
    `shared` an option several kinds use (declared by each, made once)."""

    key: str
    flag: str
    label: str  # the explorer's label
    help: str
    type: OptionType = "int"
    default: object = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    item: str = "name"  # what one of "names" is called in a message ("rule")
    # the explorer's Kinds step: whether it shows a control of it (False: another step's or
    # the command line's only), the control's id (default: the key, '-' for '_'), its tooltip
    wizard: bool = True
    control: str = ""
    hint: str = ""

    @property
    def control_id(self) -> str:
        return self.control or self.key.replace("_", "-")

    def parse(self, value: object) -> object:
        """A flag's or a control's value as the option holds it: "names" as a tuple of
        choices (None for none), ValueError naming the first unknown one."""
        if self.type != "names":
            return value
        if value is None:
            return None
        text = value if isinstance(value, str) else ",".join(cast("Iterable[str]", value))
        names = tuple(part.strip().lower() for part in text.split(",") if part.strip())
        if not names:
            return None
        unknown = [name for name in names if self.choices and name not in self.choices]
        if unknown:
            raise ValueError(
                f"{self.flag}: unknown {self.item} {unknown[0]!r} "
                f"(choose from {', '.join(self.choices)})"
            )
        return names


@dataclass(frozen=True)
class KindInfo:
    """A test kind: everything kontest needs of it (see the module's docstring).

    `kind` is its name in the store and the report JSON: a TestKind for the built-in kinds, a
    plain string for a plugin's. `build` None: not built from a KG (annotated questions come
    from a file); `judge` None: judged by the KONTEST oracles (oracles.evaluate)."""

    kind: str
    title: str
    description: str
    oracles: tuple[str, ...]
    build: Builder | None
    parse: Parser
    judge: Judge | None = None
    words: tuple[OracleWords, ...] = ()  # its own oracles' words
    section_keys: tuple[str, ...] = ()  # the Report JSON keys of its section
    section_tables: SectionTables | None = None
    compare_tables: CompareTables | None = None
    options: tuple[KindOption, ...] = ()
    report_order: int = 50  # where its section and compare table stand among the kinds'
    aliases: tuple[str, ...] = ()  # other names `--kind` takes
    answer_format: Callable[[Conversation], str] | None = None  # None: "yes_no"
    conversation_name: Callable[[Conversation], str] | None = None  # None: kind and label
    unbuilt_hint: str = ""  # why `--kind` does not take it (`build` None)
    controls_label: str = ""  # the label of its options' row in the explorer (default: title)
    shortcut: str = ""  # a flag of its own that asks it (`--variants`: `--kind variant`)
    headline_rate: str = ""  # the Report JSON `rates` cell of its headline (its interval)
    # its questions are the template set's phrasings of facts the KG states: a card shows a
    # question's phrasing and holds a yes/no reply to yes
    states_facts: bool = False
    # its headline rate, its `accuracy` entry (made from its section), the oracle of its
    # consistency measure (oracles.measures: what the report's summary takes of it)
    headline: KindHeadline | None = None
    accuracy: AccuracyOf | None = None
    consistency: str = ""
    # its oracles whose questions a sampled session asks in full (annotated questions come
    # from a file): their rates get no sample interval (oracles.intervals)
    not_sampled: tuple[str, ...] = ()
    # its measure in the delta of a session asked again (its first section's), if any
    delta: KindDelta | None = None

    @property
    def shortcut_name(self) -> str:
        """Its shortcut flag's parameter name ("variants")."""
        return self.shortcut.lstrip("-").replace("-", "_")

    @property
    def name(self) -> str:
        return str(self.kind)

    @property
    def measures(self) -> KindMeasures:
        """Its headline, accuracy and consistency declarations, as the evaluation takes them."""
        return KindMeasures(
            self.name,
            self.section_keys[0] if self.section_keys else "",
            self.headline,
            self.accuracy,
            self.consistency,
            self.not_sampled,
        )

    @property
    def is_core(self) -> bool:
        """KONTEST's own paraphrase pairs (what every other kind is "besides")."""
        return self.kind == TestKind.KONTEST
