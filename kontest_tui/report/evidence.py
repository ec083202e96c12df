"""The curation evidence of a report as tables: per template, then per varied word.

The rows are the Report JSON's `curation` section (oracles.evidence, worst first); the text
and Markdown reports print both tables (the words' first WORDS_SHOWN: the JSON has them all)
and the explorer's Templates tab shows the same cells (`evidence_cells`), in the orders of
oracles.evidence (`ORDERS`, `sort_rows`, named here for the explorer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kontest_tui.oracles.evidence import ORDERS, sort_rows
from kontest_tui.oracles.report_json import EvidenceJSON, ReportJSON
from kontest_tui.report.tables import Table

__all__ = [
    "ORDERS",
    "EvidenceJSON",
    "evidence_cells",
    "evidence_tables",
    "sort_rows",
]

WORDS_SHOWN = 20  # word rows a text or Markdown report lists
COUNT_HEADER = ("questions", "invalid", "refusals", "cut", "errors", "flips", "gap")
TEMPLATE_HEADER = ("template", *COUNT_HEADER)
WORD_HEADER = ("word", "replaced by", *COUNT_HEADER)


def count_cells(row: EvidenceJSON) -> tuple[str, ...]:
    """The counts of one row, in COUNT_HEADER's order (flips as `flips/compared`)."""
    flips = f"{row['flips']}/{row['compared']}" if row["compared"] else "-"
    gap = row["gap"]
    return (
        str(row["questions"]),
        str(row["invalid"]),
        str(row["refusals"]),
        str(row["cut"]),
        str(row["errors"]),
        flips,
        "-" if gap is None else str(gap),
    )


def template_cell(row: EvidenceJSON, templates: Mapping[str, str] | None = None) -> str:
    """`t1: Does {parent} have a {child}?` (the id alone when its text is not known)."""
    template_id = row.get("template", "")
    text = (templates or {}).get(template_id)
    return f"{template_id}: {text}" if text else template_id


def evidence_cells(
    row: EvidenceJSON, templates: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """One row's cells: TEMPLATE_HEADER's for a template, WORD_HEADER's for a word."""
    if "template" in row:
        return (template_cell(row, templates), *count_cells(row))
    return (row.get("word", ""), row.get("value", ""), *count_cells(row))


def evidence_tables(
    report: ReportJSON,
    templates: Mapping[str, str] | None = None,
    words_shown: int = WORDS_SHOWN,
) -> list[Table]:
    """The templates table and the words table of a report's `curation` section (none
    without it), worst first; `templates` gives each template's text."""
    section = report.get("curation")
    if not section:
        return []
    tables: list[Table] = [
        (
            "Templates, worst first (invalid answers + errors they take part in; flips: "
            "variants answered otherwise than their original; gap: relations not answered yes)",
            TEMPLATE_HEADER,
            [evidence_cells(row, templates) for row in section["templates"]],
        )
    ]
    words: Sequence[EvidenceJSON] = section["words"]
    if words:
        shown = "all" if len(words) <= words_shown else f"first {words_shown} of {len(words)}"
        tables.append(
            (
                f"Varied words, worst first ({shown}): a variant's word replaced by a synonym or "
                "an alias (gap: its variants not answered yes)",
                WORD_HEADER,
                [evidence_cells(row) for row in words[:words_shown]],
            )
        )
    return tables
