"""The Report JSON (what `kontest report --format json` prints; docs/oracles-and-metrics.md)
as typed records.

`ReportJSON` is the one shape `Evaluation.to_json` builds and every reader takes: the
renderers (report.render, the html page), the comparison (report.compare_many) and the
explorer. A report read back from the store or a file goes through `report_from_json`, which
checks the keys every report has (a report of another shape is one readable error, not a
KeyError deep in a renderer). Section keys of the other test kinds (`variants`, `factcheck`,
`logic`, `annotation`, `sample`) are present only when the session asked them; their inner
shapes are documented in docs/oracles-and-metrics.md and stay JSON objects here.
"""

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast

from kontest_tui.errors import InvalidInputError

# A section of another test kind: its own counts and tables, read by name by its renderer.
JSONObject = dict[str, Any]


class CountPct(TypedDict):
    """Relations a template (or every template) missed, and their share in percent."""

    missing: int
    pct: float


class GapJSON(TypedDict):
    """The knowledge gap: per template, and the relations no template answered yes."""

    per_template: dict[str, CountPct]
    intersection: CountPct


class CoverageJSON(TypedDict):
    covered: int
    pct: float


class RatioJSON(TypedDict):
    """A consistency measure: tests, errors and their ratio (None before any test)."""

    tests: int
    errors: int
    rate: float | None


class RateJSON(TypedDict):
    """A `rates` cell (oracles.intervals): the rate with its clustered 95% interval, None
    when the rate is not estimated (a sample's ontological one) or has no test."""

    errors: int
    tests: int
    rate: float | None
    interval: list[float] | None
    interval_method: str
    design_effect: float
    oracles: NotRequired[list[str]]  # the total's: the oracles it adds up


class HeadlineJSON(TypedDict):
    """The session's one rate (oracles.measures.headline_of)."""

    measure: str
    title: str
    count: int
    of: int
    rate: float | None


class DoubtfulJSON(TypedDict):
    """Implied-fact errors through a middle node whose label is doubtful, by reason (an
    error through both kinds counts in each, once in `total`)."""

    ambiguous: int
    generic: int
    total: int


class FindingsJSON(TypedDict):
    """KONTEST's errors folded per relation (oracles.findings): distinct disagreements, their
    repeats, flips after the model's own reply, implied facts (with the doubtful ones; None
    when the graph's labels were not given)."""

    relations_compared_alone: int
    relations_opposite_alone: int
    repeats: int
    after_own_reply: int
    relations_after_own_reply: int
    not_compared_alone: int
    implied: int
    relations_implied: int
    implied_doubtful: DoubtfulJSON | None


class RelationStatusJSON(TypedDict):
    """One relation's answers and errors (`include_relations`)."""

    relation: str
    parent: str
    child: str
    type: str
    answers: dict[str, str | None]
    status: str
    tests: int
    errors: int
    error_oracles: list[str]


class EvidenceJSON(TypedDict):
    """One row of the `curation` section (oracles.evidence): a template (`template`) or a
    varied word (`word` replaced by `value`; `entity`: the node id when the word is an
    entity slot, None otherwise) with what went wrong with its questions."""

    template: NotRequired[str]
    word: NotRequired[str]
    value: NotRequired[str]
    entity: NotRequired[str | None]
    questions: int
    invalid: int
    refusals: int
    cut: int
    errors: int
    flips: int
    compared: int
    gap: int | None


class CurationJSON(TypedDict):
    """The curation evidence: per template and per varied word, worst first."""

    templates: list[EvidenceJSON]
    words: list[EvidenceJSON]


class ReportSections(TypedDict, total=False):
    """The keys of the other test kinds, each present when the session asked it."""

    kinds: list[str]
    variants: JSONObject
    factcheck: JSONObject
    logic: JSONObject
    annotation: JSONObject
    sample: JSONObject
    curation: CurationJSON


class ReportJSON(ReportSections):
    """A session's report (see the module docstring and docs/oracles-and-metrics.md)."""

    session: str | None
    model: str | None
    relations: int
    queries: int
    executions: int
    valid: int
    invalid: int
    cut: NotRequired[int]  # answers cut before anything readable: not graded, counted apart
    cut_by_kind: NotRequired[dict[str, int]]
    failed: int
    failed_reasons: NotRequired[dict[str, int]]
    stopped: dict[str, int]
    tests: dict[str, int]
    errors: dict[str, int]  # KONTEST's oracles and their "total"
    error_rate: float
    gap: GapJSON
    coverage: CoverageJSON
    templates: list[str]
    planned_executions: int
    tests_planned: dict[str, int]
    pending_relations: int
    refusals: int
    echoes: NotRequired[int]  # unreadable replies continuing the prompt (base model, chat mode)
    margins: NotRequired[JSONObject]  # oracles.margins: margins per kind, weak errors
    # errors asked again (store.confirmations): added where a stored session is reported
    confirmation: NotRequired[JSONObject]
    answers_from_cache: int
    consistency: dict[str, RatioJSON]
    rates: dict[str, RateJSON]
    accuracy: NotRequired[dict[str, dict[str, float | int | None]]]
    headline: HeadlineJSON
    findings: NotRequired[FindingsJSON]  # sessions asking KONTEST questions
    relation_status: NotRequired[list[RelationStatusJSON]]


# (this module is not `from __future__ import annotations`: TypedDict reads NotRequired
# from the evaluated annotations only)
REQUIRED_KEYS: frozenset[str] = ReportJSON.__required_keys__


def report_section(report: ReportJSON, name: str) -> JSONObject | None:
    """The section of the test kind `name` (a key of ReportSections), None when the session
    did not ask it."""
    found = cast("Mapping[str, object]", report).get(name)
    return cast(JSONObject, found) if isinstance(found, dict) else None


def report_from_json(data: Mapping[str, object], where: str = "report") -> ReportJSON:
    """A Report JSON read back (the store's, a file's): the same dict, checked to hold every
    key a report has; InvalidInputError naming the first missing one otherwise."""
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"{where}: not a JSON object")
    missing = sorted(REQUIRED_KEYS - data.keys())
    if missing:
        raise InvalidInputError(f"{where}: not a session report (no {missing[0]!r})")
    return cast(ReportJSON, dict(data))
