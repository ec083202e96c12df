"""The KONTEST paper's tables across models, as `kontest compare` lays them out.

Where a table claims a paper table its columns are named as the paper names them (seed 000,
Tables 3/10, 5, 14 and Fig. 4; JSON keys instead in CSV); the tables of our own are in words.

- `errors_table`: Table 3's (appendix Table 10's) "Errors (%)": per model the errors of the
  valid tests of every error type, the metamorphic subtotal ("Metamorphic All Types") and
  "All", each with the report's 95% interval (clustered by fact) and its design effect; a
  Total row sums the models (no interval: it is no sample of one model).
- `valid_table`: Table 3's "Valid Test Executions (%)": the valid tests of each type and
  their share of the tests planned (this run's counts, no estimate, so no interval).
- `gap_table`: Table 5 in its column order: Relations, Template 1, Template 2, Intersection,
  Overall Coverage (%). The paper's "Template 1" is the prototype's "Is ..." template (our
  t2: "Is there a {child} in {parent}?"), its "Template 2" the "Does ..." one (our t1):
  `paper_template_order` orders the templates so, by their texts.
- `overlap_table`: Fig. 4's regions per error type, and its totals across KONTEST's error
  types: errors found by one model only and by all, with their share of the distinct errors
  (the paper: 874 of 1330 unique to one model, 15 found by all four).
- `time_table`: Table 14, time types as rows and models as columns: the model's answer time
  summed over the calls made, atomic and sequential conversations apart.
- `stability_table`: the stability test of sessions asked from scratch (the paper's Sec. 5
  stability check: a question asked alone and as a sequential conversation's first turn),
  with the report's interval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kontest_tui.oracles.evaluate import METAMORPHIC, ORACLES
from kontest_tui.oracles.intervals import TOTAL
from kontest_tui.oracles.metamorphic import METAMORPHIC_ORACLES
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.compare_cells import (
    count_cell,
    report_rate,
    report_rate_cell,
    session_label,
)
from kontest_tui.report.compare_json import OverlapJSON, OverlapTotalJSON, TimingJSON
from kontest_tui.report.tables import Table

# Table 3's error types, with the metamorphic subtotal, in its column order.
TABLE_3 = ("atomic", "sequential_intra", "sequential_inter", METAMORPHIC, "ontological", TOTAL)
PAPER_COLUMNS = {
    "atomic": "atomic",
    "sequential_intra": "sequential-intra",
    "sequential_inter": "sequential-inter",
    METAMORPHIC: "Metamorphic All Types",
    "ontological": "Ontological",
    TOTAL: "All",
}
SUBJECT = "LLM (Subject)"


def _counts(report: ReportJSON, name: str) -> tuple[int, int, int]:
    """(errors, valid tests, tests planned) of an error type of Table 3 in a report."""
    tests, errors = report.get("tests", {}), report.get("errors", {})
    planned = report.get("tests_planned") or {}
    oracles = {METAMORPHIC: METAMORPHIC_ORACLES, TOTAL: ORACLES}.get(name, (name,))
    return (
        sum(int(errors.get(o, 0)) for o in oracles),
        sum(int(tests.get(o, 0)) for o in oracles),
        sum(int(planned.get(o, 0)) for o in oracles),
    )


def _error_cell(report: ReportJSON, name: str) -> str:
    """A report's error rate of one Table 3 type with its interval and design effect; the
    total says which oracles it leaves out (a sample's ontological one)."""
    errors, tests, _ = _counts(report, name)
    if name != TOTAL:
        return report_rate_cell(report, name, errors, tests)
    cell = report_rate(report, TOTAL)
    if cell is None:
        return count_cell(errors, tests)
    text = report_rate_cell(report, TOTAL, errors, tests)
    left_out = [o for o in ORACLES if o not in cell.get("oracles", ORACLES)]
    return text + (f" (without {', '.join(left_out)})" if left_out else "")


def _header(keys: bool) -> tuple[str, ...]:
    if keys:
        return ("model", *TABLE_3)
    return (SUBJECT, *(PAPER_COLUMNS[name] for name in TABLE_3))


def errors_table(reports: Sequence[ReportJSON], *, keys: bool = False) -> Table:
    """Table 3's Errors (%) per model (see the module docstring)."""
    rows = [
        (session_label(report), *(_error_cell(report, name) for name in TABLE_3))
        for report in reports
    ]
    totals = []
    for name in TABLE_3:
        errors = sum(_counts(report, name)[0] for report in reports)
        tests = sum(_counts(report, name)[1] for report in reports)
        totals.append(f"{errors}/{tests} {100 * errors / tests:.1f}%" if tests else "-")
    rows.append(("Total", *totals))
    return (
        "KONTEST Table 3 (appendix Table 10), Errors (%): errors / valid tests per error type; "
        "95% interval clustered by fact, deff its design effect; Total sums the models (no "
        "interval)",
        _header(keys),
        rows,
    )


def valid_table(reports: Sequence[ReportJSON], *, keys: bool = False) -> Table:
    """Table 3's Valid Test Executions (%) per model (see the module docstring)."""

    def cell(tests: int, planned: int) -> str:
        return f"{tests} ({100 * tests / planned:.1f})" if planned else f"{tests} (-)"

    rows = []
    for report in reports:
        rows.append(
            (
                session_label(report),
                *(cell(*_counts(report, name)[1:]) for name in TABLE_3),
            )
        )
    rows.append(
        (
            "Total",
            *(
                cell(
                    sum(_counts(report, name)[1] for report in reports),
                    sum(_counts(report, name)[2] for report in reports),
                )
                for name in TABLE_3
            ),
        )
    )
    return (
        "KONTEST Table 3 (appendix Table 10), Valid Test Executions (%): tests with valid "
        "answers (% of the tests planned; this run's counts, no interval)",
        _header(keys),
        rows,
    )


def paper_template_order(template_ids: Sequence[str], texts: Mapping[str, str]) -> list[str]:
    """The templates in Table 5's order: the "Is ..." ones first (the prototype's Template
    1, our t2), then the others (its Template 2, our t1, then t3...), each group by id."""
    asks_is = [t for t in template_ids if texts.get(t, "").lstrip().startswith("Is ")]
    return [*asks_is, *(t for t in template_ids if t not in asks_is)]


def gap_table(
    reports: Sequence[ReportJSON], texts: Mapping[str, str], *, keys: bool = False
) -> Table:
    """Table 5 in its column order (see the module docstring); every share with its 95%
    Wilson interval (one test per relation)."""
    found = sorted({t for r in reports for t in r.get("gap", {}).get("per_template", {})})
    order = paper_template_order(found, texts)
    names = [f"Template {number}" for number in range(1, len(order) + 1)]
    if keys:
        header = ("model", "relations", *(f"gap {t}" for t in order), "gap all", "coverage")
    else:
        header = (SUBJECT, "Relations", *names, "Intersection", "Overall Coverage (%)")
    rows = []
    for report in reports:
        gap, relations = report["gap"], report["relations"]
        cells = [
            count_cell(gap["per_template"][t]["missing"], relations)
            if t in gap["per_template"]
            else "-"
            for t in order
        ]
        cells.append(count_cell(gap["intersection"]["missing"], relations))
        cells.append(count_cell(report["coverage"]["covered"], relations))
        rows.append((session_label(report), str(relations), *cells))
    legend = "; ".join(
        f"{name} = {t}" + (f" “{texts[t]}”" if t in texts else "")
        for name, t in zip(names, order, strict=True)
    )
    return (
        "KONTEST Table 5, Knowledge Gap (%) and Overall Coverage (%), of relations (its "
        "Template 1 is the prototype's 'Is ...' template, its Template 2 the 'Does ...' one; "
        f"95% Wilson): {legend}",
        header,
        rows,
    )


def overlap_total(overlap: Mapping[str, OverlapJSON], sessions: Sequence[str]) -> OverlapTotalJSON:
    """Fig. 4's totals across KONTEST's error types: distinct errors, those only one model
    finds (per model and together) and those every model finds."""
    cells = [overlap[o] for o in ORACLES if o in overlap]
    unique = {name: sum(c["unique"].get(name, 0) for c in cells) for name in sessions}
    return OverlapTotalJSON(
        oracles=[o for o in ORACLES if o in overlap],
        errors=sum(c["errors"] for c in cells),
        unique=unique,
        one_model_only=sum(unique.values()),
        all=sum(c["all"] for c in cells),
    )


def _share(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.1f}%)" if whole else str(part)


def overlap_table(
    overlap: Mapping[str, OverlapJSON],
    total: OverlapTotalJSON | None,
    sessions: Sequence[str],
    labels: Sequence[str],
    name_of: Callable[[str], str],
) -> Table:
    """Fig. 4's regions per error type, then its totals across KONTEST's error types."""
    header = (
        "error type",
        "errors",
        *(f"only {label}" for label in labels),
        "one model only",
        "all",
    )
    rows = []
    for oracle, cell in overlap.items():
        alone = sum(cell["unique"].get(name, 0) for name in sessions)
        rows.append(
            (
                name_of(oracle),
                str(cell["errors"]),
                *(str(cell["unique"].get(name, 0)) for name in sessions),
                _share(alone, cell["errors"]),
                _share(cell["all"], cell["errors"]),
            )
        )
    if total is not None and total["oracles"]:
        rows.append(
            (
                "KONTEST total",
                str(total["errors"]),
                *(str(total["unique"].get(name, 0)) for name in sessions),
                _share(total["one_model_only"], total["errors"]),
                _share(total["all"], total["errors"]),
            )
        )
    return (
        "Errors found by exactly one model or by all (KONTEST Fig. 4; its totals are the "
        "KONTEST total row: distinct errors of the four KONTEST error types, % of them)",
        header,
        rows,
    )


def time_table(timing: Sequence[TimingJSON], labels: Sequence[str]) -> Table:
    """Table 14: the model's answer time in seconds per time type (rows) per model."""
    rows = [
        ("Atomic Queries", *(f"{row.get('atomic_s', 0.0):.1f}" for row in timing)),
        ("Sequential Queries", *(f"{row.get('sequential_s', 0.0):.1f}" for row in timing)),
        (
            "Total Time",
            *(f"{row.get('atomic_s', 0.0) + row.get('sequential_s', 0.0):.1f}" for row in timing),
        ),
    ]
    if any(row.get("other_s") for row in timing):
        rows.append(
            ("other kinds' questions", *(f"{row.get('other_s', 0.0):.1f}" for row in timing))
        )
    return (
        "KONTEST Table 14, Time taken to query each SUT in seconds: the model's answer time "
        "summed over the calls made (answers reused from the memo or cache took none; "
        "concurrent calls overlap, so it can exceed the wall time)",
        ("Time Taken", *labels),
        rows,
    )


def stability_table(reports: Sequence[ReportJSON], labels: Sequence[str]) -> Table | None:
    """The stability test per model (sessions asked from scratch), None when none has it."""
    rows: list[tuple[str, ...]] = []
    for report, label in zip(reports, labels, strict=True):
        cell = (report.get("consistency") or {}).get("stability")
        if cell:
            shown = report_rate_cell(report, "stability", cell["errors"], cell["tests"])
            rows.append((label, shown))
        else:
            rows.append((label, "-"))
    if all(cell == "-" for _, cell in rows):
        return None
    return (
        "Stability, every conversation asked from scratch: the atomic answer vs the same "
        "question as a sequential conversation's first turn (the paper's stability check, "
        "Sec. 5); answers that differ / tests, 95% interval clustered by fact",
        ("model", "differ / tests"),
        rows,
    )
