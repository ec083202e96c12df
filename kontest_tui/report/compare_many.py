"""Many sessions (one model each, one KG) side by side, as the papers' tables (`kontest compare`).

`build_comparison(entries, differences)` takes, per session, its Report JSON (exactly what
`kontest report --format json` prints), its errors and variant verdicts, its timing and its
variant answers, and gives the compare JSON (`CompareJSON`): `{"sessions": [REPORT, ...],
"overlap": {...}, "timing": [...], "variant_table": {...}, "differences": [...],
"left_out": [...]}`:

- `overlap`, per error type (oracle): how many distinct errors are found by exactly which
  subset of the sessions (KONTEST Fig. 4: unique to one model, found by all). An error is
  identified by (oracle, relation, template, the answers it compares), the same across
  sessions on one KG and scope; `overlap_total`: Fig. 4's totals across KONTEST's four
  error types (report.compare_paper.overlap_total);
- `timing`, per session: model calls, wall time, tokens of the calls made (where the server
  reports them), time per call and the model's answer time of atomic and sequential
  conversations (KONTEST Table 14);
- `variant_table`: the thesis's Table 4 across models (`variant_table()`);
- `differences`: the settings that differ between the sessions (results.settings), compared
  anyway (`--allow-differences`); empty when they all match;
- `left_out`: the sessions `kontest compare` without ids did not compare (another scope or
  settings than the latest session's), each with its differences (report.stored_compare);
- `templates`: each template's text by id (the gap columns name the ids).

`comparison_tables(data)` lays the JSON out as the papers' tables (docs/compare.md says which
table and column each number reproduces; the KONTEST ones in report.compare_paper, columns
named as the paper's), `render_comparison(data, fmt)` as text, Markdown, CSV (one block per
table) or a standalone HTML page (report.compare_html). Every rate has its 95% interval, one
per rate: the report's clustered one with its design effect (`rates`, oracles.intervals)
where the report has the rate (KONTEST's oracles, their metamorphic subtotal and total, the
variant and stability rates, the logic rules' hallucination rate), else Wilson's
(oracles.intervals.wilson_interval) on the counts. A rate a sampled session does not estimate
(its ontological one) is "not estimated" and not in its total.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from kontest_tui.domain.records import Verdict
from kontest_tui.errors import InvalidInputError
from kontest_tui.oracles.evaluate import ORACLES
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.compare_cells import session_label
from kontest_tui.report.compare_json import (
    CompareJSON,
    LeftOutJSON,
    OverlapJSON,
    SessionTiming,
    TimingJSON,
    timing_json,
)
from kontest_tui.report.compare_paper import (
    errors_table,
    gap_table,
    overlap_table,
    overlap_total,
    stability_table,
    time_table,
    valid_table,
)
from kontest_tui.report.compare_variants import variant_table, variant_tables
from kontest_tui.report.kinds import kind_compare_tables
from kontest_tui.report.tables import (
    Table,
    csv_tables,
    escape_markdown,
    markdown_table,
    text_table,
)
from kontest_tui.report.words import oracle_name
from kontest_tui.results.settings import Difference, DifferenceJSON, show_value

COMPARE_FORMATS: tuple[str, ...] = ("text", "markdown", "csv", "json", "html")


@dataclass
class CompareEntry:
    """One session's inputs: its report, verdicts, timing and variant answers."""

    session: str
    report: ReportJSON
    timing: SessionTiming
    # its error verdicts, and every verdict of the variant oracles (the variant table's)
    verdicts: Sequence[Verdict] = ()
    # conversation id -> (question text, parsed answer), for variant/annotated questions
    variant_answers: dict[str, tuple[str, str]] = field(default_factory=dict)
    # conversation id -> covering-array row (0 = the original question)
    variant_rows: dict[str, int] = field(default_factory=dict)
    # conversation id -> the annotation's class ("yes"/"no"), for annotated questions
    variant_expected: dict[str, str] = field(default_factory=dict)


def error_key(verdict: Verdict) -> tuple[str, str, str, tuple[tuple[str, int], ...]]:
    """What identifies an error across sessions on one KG: oracle, relation, template, refs."""
    return (
        verdict.oracle,
        verdict.relation_id,
        verdict.template_id or "",
        tuple((str(cid), int(turn)) for cid, turn in verdict.refs),
    )


def compute_overlap(entries: Sequence[CompareEntry]) -> dict[str, OverlapJSON]:
    """Per oracle: distinct errors, how many each exact subset of sessions finds
    (`by_subset`, subsets named by their session ids joined with "+"), the errors unique to
    each session and those found by all."""
    names = [entry.session for entry in entries]
    found: dict[str, dict[tuple[Any, ...], set[str]]] = {}
    for entry in entries:
        for verdict in entry.verdicts:
            if verdict.error:
                by_key = found.setdefault(verdict.oracle, {})
                by_key.setdefault(error_key(verdict), set()).add(entry.session)
    overlap: dict[str, OverlapJSON] = {}
    for oracle in sorted(found, key=lambda name: (name not in ORACLES, name)):
        subsets: dict[str, int] = {}
        for sessions in found[oracle].values():
            label = "+".join(name for name in names if name in sessions)
            subsets[label] = subsets.get(label, 0) + 1
        ordered = {
            "+".join(combo): subsets["+".join(combo)]
            for size in range(1, len(names) + 1)
            for combo in combinations(names, size)
            if "+".join(combo) in subsets
        }
        overlap[oracle] = OverlapJSON(
            errors=len(found[oracle]),
            by_subset=ordered,
            unique={name: subsets.get(name, 0) for name in names},
            all=subsets.get("+".join(names), 0),
        )
    return overlap


def build_comparison(
    entries: Sequence[CompareEntry],
    differences: Sequence[Difference] = (),
    left_out: Sequence[LeftOutJSON] = (),
    templates: Mapping[str, str] | None = None,
) -> CompareJSON:
    """The compare JSON (see the module docstring); `templates`: each template's text by id."""
    if len(entries) < 2:
        raise InvalidInputError("nothing to compare: a comparison needs two or more sessions")
    overlap = compute_overlap(entries)
    return {
        "sessions": [entry.report for entry in entries],
        "overlap": overlap,
        "overlap_total": overlap_total(overlap, [entry.session for entry in entries]),
        "timing": [timing_json(entry.session, entry.timing) for entry in entries],
        "variant_table": variant_table(entries),
        "differences": [difference.to_json() for difference in differences],
        "left_out": list(left_out),
        "templates": dict(templates or {}),
    }


# ---------------------------------------------------------------------------- tables


def difference_table(differences: Sequence[DifferenceJSON], labels: Sequence[str]) -> Table:
    """The settings that differ, one row each, a value per session (above the other tables)."""
    rows = []
    for item in differences:
        difference = Difference.from_json(item)
        rows.append(
            (
                difference.setting,
                *(show_value(v, difference.setting) for v in difference.values.values()),
            )
        )
    return (
        "Settings that differ between these sessions (compared anyway: --allow-differences); "
        "their numbers answer different questions",
        ("setting", *labels),
        rows,
    )


def comparison_tables(data: CompareJSON, *, keys: bool = False) -> list[Table]:
    """(title, header, rows) of every table the text, Markdown, CSV and HTML forms show; the
    tests by their names in words (report.words), by their JSON keys with `keys` (CSV)."""
    name_of = str if keys else oracle_name
    reports: list[ReportJSON] = data["sessions"]
    labels = [session_label(report) for report in reports]
    tables: list[Table] = []
    if data.get("differences"):
        tables.append(difference_table(data["differences"], labels))
    if any(any(r.get("tests", {}).get(o) for o in ORACLES) for r in reports):
        texts = data.get("templates", {})
        tables += [
            errors_table(reports, keys=keys),
            valid_table(reports, keys=keys),
            gap_table(reports, texts, keys=keys),
        ]
    stability = stability_table(reports, labels)
    if stability is not None:
        tables.append(stability)
    tables += kind_compare_tables(reports, labels, keys=keys)
    tables += variant_tables(data["variant_table"], reports, labels, keys=keys)
    overlap = data["overlap"]
    if overlap:
        names = [report["session"] or "" for report in reports]
        total = data.get("overlap_total")
        tables.append(overlap_table(overlap, total, names, labels, name_of))
    timing = data["timing"]
    if timing:
        tables.append(_timing_table(timing, labels))
        tables.append(time_table(timing, labels))
    return tables


def _timing_table(timing: Sequence[TimingJSON], labels: Sequence[str]) -> Table:
    """Calls, wall time and tokens per model (Table 14's time split: compare_paper)."""
    rows: list[tuple[str, ...]] = [
        (
            labels[i] if i < len(labels) else str(row.get("session")),
            str(row.get("calls", 0)),
            f"{row.get('wall_s', 0.0):.1f}",
            "-" if row.get("s_per_call") is None else f"{row['s_per_call']:.3f}",
            "-" if row.get("tokens") is None else str(row["tokens"]),
            str(row.get("cached", 0)),
        )
        for i, row in enumerate(timing)
    ]
    return (
        "Time and calls: model calls made, retries included; tokens of the calls made, never "
        "of reused answers",
        ("model", "calls", "wall s", "s / call", "tokens", "cached"),
        rows,
    )


# ---------------------------------------------------------------------------- rendering


def check_compare_format(fmt: str) -> str:
    if fmt not in COMPARE_FORMATS:
        raise InvalidInputError(
            f"unknown compare format {fmt!r}; choose one of {', '.join(COMPARE_FORMATS)}"
        )
    return fmt


def render_comparison(data: CompareJSON, fmt: str = "text") -> str:
    """The comparison in `fmt` (see COMPARE_FORMATS)."""
    check_compare_format(fmt)
    if fmt == "json":
        public = {key: value for key, value in data.items() if key in CompareJSON.__annotations__}
        return json.dumps(public, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    tables = comparison_tables(data, keys=fmt == "csv")
    title = f"Comparison of {len(data['sessions'])} sessions"
    left_out = left_out_lines(data)
    if fmt == "csv":
        return csv_tables(tables)
    if fmt == "markdown":
        parts = [f"# {title}", ""]
        if left_out:
            parts += [escape_markdown(LEFT_OUT), "", *(f"- {escape_markdown(x)}" for x in left_out)]
            parts.append("")
        for name, header, rows in tables:
            parts += [f"## {escape_markdown(name)}", "", markdown_table(header, rows)]
        return "\n".join(parts).rstrip("\n") + "\n"
    if fmt == "html":
        from kontest_tui.report.compare_html import comparison_page

        return comparison_page(title, data, tables)
    parts = [title, ""]
    if left_out:
        parts += [LEFT_OUT, *(f"  {line}" for line in left_out), ""]
    for name, header, rows in tables:
        parts += [name, text_table(header, rows)]
    return "\n".join(parts).rstrip("\n") + "\n"


LEFT_OUT = "Left out (asked with another scope or settings than these; compare them by id):"


def left_out_lines(data: CompareJSON) -> list[str]:
    """One line per session left out: `S1 (sim:careful): depth: 2 (S2) vs 1 (S1)`."""
    lines = []
    for item in data.get("left_out", []):
        differences = "; ".join(
            Difference.from_json(difference).describe() for difference in item["differences"]
        )
        lines.append(f"{item['session']} ({item['model']}): {differences}")
    return lines
