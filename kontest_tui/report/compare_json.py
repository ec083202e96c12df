"""The compare JSON (`kontest compare --format json`) as typed records.

`CompareJSON` is what `compare_many.build_comparison` builds and every reader takes (the
tables, the HTML page, the explorer's Compare tab): the sessions' Report JSONs
(oracles.report_json.ReportJSON), the errors' overlap per oracle, each session's timing, the
variant table, the settings that differ, the sessions left out and the templates' texts. docs/compare.md says what each number reproduces.
"""

# Not `from __future__ import annotations`: TypedDict reads NotRequired and the key sets from
# the evaluated annotations.

from typing import NotRequired, TypedDict

from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.results.settings import DifferenceJSON


class RateCellJSON(TypedDict):
    """A count of `of`, its rate and 95% interval (None when `of` is 0): Wilson's, or the
    session report's clustered one with its design effect where the report has the rate."""

    count: int
    of: int
    rate: float | None
    ci95: list[float] | None
    design_effect: NotRequired[float]


class OverlapJSON(TypedDict):
    """One oracle's distinct errors: how many each exact subset of sessions finds (named by
    their ids joined with "+"), those only one session finds, those all find."""

    errors: int
    by_subset: dict[str, int]
    unique: dict[str, int]
    all: int


class OverlapTotalJSON(TypedDict):
    """KONTEST Fig. 4's totals across its error types (`oracles`): distinct errors, those
    only one session finds (per session and together) and those all find."""

    oracles: list[str]
    errors: int
    unique: dict[str, int]
    one_model_only: int
    all: int


class SessionTiming(TypedDict):
    """Calls made (retries included), answers, reused answers, wall time, tokens of the calls
    made (None when none reported), time per call and mean answer latency, and the model's
    answer time of the calls made summed over KONTEST's atomic and sequential conversations
    and the other kinds' (KONTEST Table 14's Atomic Queries and Sequential Queries)."""

    model: str
    calls: int
    answers: int
    cached: int
    wall_s: float
    tokens: int | None
    s_per_call: float | None
    mean_latency_ms: float | None
    atomic_s: float
    sequential_s: float
    other_s: float


class TimingJSON(SessionTiming):
    """A session's timing, named by its id (the first key of its JSON: `timing_json`)."""

    session: str


class VariantRowJSON(TypedDict):
    """One covering-array row (q1 = the original question): each session's failures."""

    row: int
    label: str
    sessions: dict[str, RateCellJSON]


class VariantOracleJSON(TypedDict):
    rows: list[VariantRowJSON]
    total: dict[str, RateCellJSON]


class VariantQuestionJSON(TypedDict):
    """One variant asked in every session: its text, the annotation's class, each session's
    answer and whether it failed under each oracle (None: not tested)."""

    conversation: str
    row: int
    label: str
    question: str
    expected: str | None
    answers: dict[str, str]
    failed: dict[str, dict[str, bool | None]]


class VariantTableJSON(TypedDict):
    """The thesis's Table 4 across models (compare_variants.variant_table)."""

    oracles: dict[str, VariantOracleJSON]
    questions: list[VariantQuestionJSON]


class LeftOutJSON(TypedDict):
    """A session `kontest compare` without ids left out (another scope or settings than the
    ones compared): its id, model and how it differs (report.stored_compare.LeftOut)."""

    session: str
    model: str
    differences: list[DifferenceJSON]


class CompareJSON(TypedDict):
    """The compare JSON (`kontest compare --format json`)."""

    sessions: list[ReportJSON]
    overlap: dict[str, OverlapJSON]
    overlap_total: OverlapTotalJSON
    timing: list[TimingJSON]
    variant_table: VariantTableJSON
    differences: list[DifferenceJSON]
    left_out: list[LeftOutJSON]
    templates: dict[str, str]  # each template's text by id (the gap columns name the ids)


def timing_json(session: str, timing: SessionTiming) -> TimingJSON:
    """The timing named by its session (the session first, as the JSON lists it)."""
    return TimingJSON(session=session, **timing)
