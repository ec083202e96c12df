"""The report sections of the other test kinds as tables (FactChecker, logic rules, variants,
a plugin kind's: each kind's own, kinds/).

Lays out the (title, header, rows) tables that `kontest report` prints for the Report
JSON's kind sections (report.render.section_tables); it computes nothing, it only colours
the engine's figures.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from kontest_tui.report.kinds import kind_section_keys
from kontest_tui.report.render import section_tables
from kontest_tui.report.words import kind_name
from kontest_tui.run.api import ReportJSON

KONTEST_ONLY = "This session asked only KONTEST paraphrases."
# Columns whose non-zero counts are errors (red) or refusals (yellow).
ERROR_COLUMNS = ("errors", "flips")
RIGHT_ALIGNED = (
    "asked",
    "valid",
    "correct",
    "errors",
    "refusals",
    "accuracy",
    "flips",
    "uses",
    "tests",
    "rate",
)


def has_kind_sections(report: ReportJSON) -> bool:
    """Whether a report has any section of another test kind (KONTEST-only reports do not)."""
    return any(report.get(name) for name in kind_section_keys())


def heading(title: str) -> Text:
    """A section title, with a blank line above it."""
    return Text(f"\n{title}", style="bold")


def _cell(column: str, value: str, row_style: str) -> Text:
    style = row_style
    if column in ERROR_COLUMNS and value not in ("", "0"):
        style = "bold red"
    elif column == "refusals" and value not in ("", "0") or column == "problem":
        style = "yellow"
    return Text(value, style=style)


def section_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    """One section's rows; the `total` row bold, errors red, refusals yellow. One space
    between columns and each header word on its own line, so that the
    widest table, the accuracy of every kind, fits 80 columns without cutting a value (Rich
    squeezes the widest columns first: the accuracy would show as `70.…`)."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=0)
    for column in header:
        table.add_column(  # `error rate` on two lines: a column as wide as its longest word
            column.replace(" ", "\n"), justify="right" if column in RIGHT_ALIGNED else "left"
        )
    for row in rows:
        row_style = "bold" if row[0] == "total" else ""
        table.add_row(
            *(_cell(column, value, row_style) for column, value in zip(header, row, strict=True))
        )
    return table


def render_kind_sections(report: ReportJSON | None) -> RenderableType:
    """Every other-kind section of a report, one after the other."""
    if report is None or not has_kind_sections(report):
        return Text(KONTEST_ONLY, style="italic")
    parts: list[RenderableType] = []
    kinds = report.get("kinds")
    if kinds:
        parts.append(Text("Test kinds asked: " + ", ".join(map(kind_name, kinds)), style="dim"))
    for title, header, rows in section_tables(report):
        parts.append(heading(title))
        parts.append(section_table(header, rows) if rows else Text("(none)", style="italic"))
    return Group(*parts)


class KindSections(Static):
    """The sections of the test kinds other than KONTEST in one report."""

    def show_report(self, report: ReportJSON | None) -> None:
        self.update(render_kind_sections(report))
