"""Knowledge gap per template (by its id and text), the intersection and coverage as
horizontal bars.

Reads the Report JSON's "gap" and "coverage" keys; it computes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.widgets import Static

from kontest_tui.report.words import quoted
from kontest_tui.run.api import ReportJSON


def render_bar(name: str, count: int, pct: float, width: int = 30) -> Text:
    """One labelled bar: `t1  ████████░░░░  12 (40.0%)`."""
    filled = max(0, min(width, round(width * pct / 100)))
    text = Text(f"{name:<14}")
    text.append("█" * filled, style="red")
    text.append("░" * (width - filled), style="dim")
    text.append(f" {count} ({pct:.1f}%)")
    return text


def render_gap(
    report: ReportJSON | None, width: int = 30, texts: Mapping[str, str] | None = None
) -> Text:
    """The gap section of a report as bars, or a one-line note when it is missing; each
    template by its id and, from `texts` (template id -> text), its text after the bar."""
    if report is None:
        return Text("No gap figures yet.", style="italic")
    gap = report["gap"]
    lines = Text()
    lines.append(
        f"Knowledge gap ({report.get('relations', 0)} relations: not answered yes)\n", style="bold"
    )
    for template_id, figures in sorted(gap["per_template"].items()):
        lines.append_text(
            render_bar(f"{template_id}", int(figures["missing"]), float(figures["pct"]), width)
        )
        text = (texts or {}).get(template_id)
        if text:
            lines.append(f"  {quoted(text)}", style="italic")
        lines.append("\n")
    intersection = gap["intersection"]
    if intersection:
        lines.append_text(
            render_bar(
                "intersection", int(intersection["missing"]), float(intersection["pct"]), width
            )
        )
        lines.append("\n")
    coverage = report["coverage"]
    if coverage:
        covered = Text(f"{'coverage':<14}")
        filled = max(0, min(width, round(width * float(coverage["pct"]) / 100)))
        covered.append("█" * filled, style="green")
        covered.append("░" * (width - filled), style="dim")
        covered.append(f" {coverage['covered']} ({float(coverage['pct']):.1f}%)")
        lines.append_text(covered)
    return lines


class GapBars(Static):
    """Bars for one report's gap figures."""

    def show_report(
        self, report: ReportJSON | None, texts: Mapping[str, str] | None = None
    ) -> None:
        self.update(render_gap(report, texts=texts))
