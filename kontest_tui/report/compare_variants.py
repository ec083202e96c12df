"""The thesis's Table 4 across models (seed 004, Sec. 1.3.4): covering-array rows x models.

`variant_table(entries)` counts, per covering-array row, each session's failed tests of the
variant oracles (the compare JSON's `variant_table`); `variant_tables` lays it out as the
comparison's tables: the failure rate per row per model, then every variant's answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.compare_cells import count_cell, rate_json, report_rate_json
from kontest_tui.report.compare_json import (
    RateCellJSON,
    VariantOracleJSON,
    VariantQuestionJSON,
    VariantRowJSON,
    VariantTableJSON,
)
from kontest_tui.report.tables import Table
from kontest_tui.report.words import oracle_name

if TYPE_CHECKING:
    from kontest_tui.report.compare_many import CompareEntry

MAX_VARIANT_ROWS = 60  # rows of the variant x model matrix shown in text/markdown/html


VARIANT_ORACLES: tuple[str, ...] = ("annotation", "variant")


def row_label(row: int) -> str:
    """The thesis's name of a covering-array row: q1 is the original question (row 0)."""
    return f"q{row + 1}"


def variant_table(entries: Sequence[CompareEntry]) -> VariantTableJSON:
    """Thesis Table 4 across models (seed 004, Sec. 1.3.4, Tabelle 4): covering-array rows
    (q1 = the original question, q2... its variants) against models.

    `oracles[oracle]["rows"]`: per row index, each session's failed tests / tests with the 95%
    Wilson interval, summed over every varied question; `total` per session, with the
    session report's clustered interval of that rate and its design effect. Oracle
    "annotation" is the thesis's own: a row fails when its answer's class (true, false,
    undefined) is not the annotation, so an undefined answer fails. Oracle "variant" holds a
    valid answer against its question's reference answer (the original's when valid), for KG
    questions that have no annotation. The counts are the sessions' verdicts, so each total
    equals that oracle's tests and errors in the session's report.
    `questions`: the Table itself, one line per variant asked in every session (first
    session's order): its row, text, expected class when annotated, each session's answer
    and whether it failed under each oracle (null: not tested)."""
    names = [entry.session for entry in entries]
    counts: dict[str, dict[int, dict[str, list[int]]]] = {}
    failed: dict[tuple[str, str, str], bool] = {}  # (session, oracle, conversation) -> error
    for entry in entries:
        for verdict in entry.verdicts:
            if verdict.oracle not in VARIANT_ORACLES or not verdict.refs:
                continue
            cid = str(verdict.refs[-1][0])  # annotation: the variant; variant: (reference, it)
            row = entry.variant_rows.get(cid)
            if row is None:
                continue
            cell = counts.setdefault(verdict.oracle, {}).setdefault(row, {})
            tally = cell.setdefault(entry.session, [0, 0])
            tally[0] += int(verdict.error)
            tally[1] += 1
            failed[(entry.session, verdict.oracle, cid)] = verdict.error
    oracles: dict[str, VariantOracleJSON] = {}
    for oracle in VARIANT_ORACLES:
        if oracle not in counts:
            continue
        rows = []
        for row in sorted(counts[oracle]):
            cell = counts[oracle][row]
            rows.append(
                VariantRowJSON(
                    row=row,
                    label=row_label(row),
                    sessions={name: rate_json(*cell.get(name, [0, 0])) for name in names},
                )
            )
        total = {
            entry.session: report_rate_json(
                entry.report,
                oracle,
                sum(c.get(entry.session, [0, 0])[0] for c in counts[oracle].values()),
                sum(c.get(entry.session, [0, 0])[1] for c in counts[oracle].values()),
            )
            for entry in entries
        }
        oracles[oracle] = VariantOracleJSON(rows=rows, total=total)
    questions: list[VariantQuestionJSON] = []
    if entries:
        for cid, (text, _) in entries[0].variant_answers.items():
            if not all(cid in entry.variant_answers for entry in entries):
                continue
            row = entries[0].variant_rows.get(cid, 0)
            questions.append(
                VariantQuestionJSON(
                    conversation=cid,
                    row=row,
                    label=row_label(row),
                    question=text,
                    expected=entries[0].variant_expected.get(cid),
                    answers={entry.session: entry.variant_answers[cid][1] for entry in entries},
                    failed={
                        oracle: {name: failed.get((name, oracle, cid)) for name in names}
                        for oracle in oracles
                    },
                )
            )
    return VariantTableJSON(oracles=oracles, questions=questions)


ORACLE_TITLES = {
    "annotation": "failed / asked, an answer other than the annotation fails, undefined included",
    "variant": "flips / valid answers, against the question's original answer",
}


def variant_tables(
    table: VariantTableJSON,
    reports: Sequence[ReportJSON],
    labels: Sequence[str],
    *,
    keys: bool = False,
) -> list[Table]:
    """Thesis Table 4: failure rate per covering-array row per model, then the answers; each
    oracle by its name in words, by its JSON key with `keys` (CSV)."""
    names = [report["session"] or "" for report in reports]
    tables: list[Table] = []
    for oracle, block in table["oracles"].items():
        per_row = [(row["label"], row["sessions"]) for row in block["rows"]]
        called = f"{oracle} oracle" if keys else oracle_name(oracle)
        rows = [
            (label, *(_json_cell(sessions.get(name)) for name in names))
            for label, sessions in [*per_row, ("total", block["total"])]
        ]
        tables.append(
            (
                f"Variant x model, {called} ({ORACLE_TITLES.get(oracle, oracle)}): failure "
                "rate per covering-array row, q1 = original (thesis Table 4; 95% Wilson per "
                "row, the total the report's interval clustered by fact, with its design "
                "effect)",
                ("row", *labels),
                rows,
            )
        )
    questions = table["questions"]
    if questions:
        rows = []
        for item in questions[:MAX_VARIANT_ROWS]:
            cells = []
            for name in names:
                answer = str(item["answers"].get(name, "-"))
                for oracle, mark in (("annotation", " *"), ("variant", " ~")):
                    if (item["failed"].get(oracle) or {}).get(name):
                        answer += mark
                cells.append(answer)
            rows.append((item["label"], item["question"], item.get("expected") or "-", *cells))
        more = (
            f", first {MAX_VARIANT_ROWS} of {len(questions)}"
            if len(questions) > MAX_VARIANT_ROWS
            else ""
        )
        tables.append(
            (
                f"Variant x model answers (thesis Table 4{more}; * = fails the annotation, "
                "~ = flips from the original answer)",
                ("row", "variant", "expected", *labels),
                rows,
            )
        )
    return tables


def _json_cell(cell: RateCellJSON | None) -> str:
    if not cell:
        return "-"
    return count_cell(cell["count"], cell["of"], cell["ci95"], cell.get("design_effect"))
