"""Two sessions side by side: report figures in two columns, then the relations the two
models answer differently.

Takes a `report.compare.SessionComparison` (the engine's reports and the differing atomic
answers) and only lays it out; it computes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.widgets import Static

from kontest_tui.report.compare import SessionComparison
from kontest_tui.report.words import oracle_name
from kontest_tui.run.api import ReportJSON
from kontest_tui.tui.widgets.counts import report_oracles
from kontest_tui.tui.widgets.relation_tree import ANSWER_STYLES

NAME_WIDTH = 22  # the row names (the tests by name: "two phrasings alone")
COLUMN_WIDTH = 18  # each session's column
MAX_DIFFERENCES = 300  # relations listed (the count says how many there are)


def figure_cells(report: ReportJSON, oracles: tuple[str, ...]) -> list[tuple[str, str]]:
    """(row name, value) for one report: counts, errors/tests per oracle, gap, coverage."""
    tests = report.get("tests") or {}
    errors = report.get("errors") or {}
    rate = report.get("error_rate")
    cells = [
        ("relations", str(report.get("relations", 0))),
        ("executions", str(report.get("executions", 0))),
        ("valid / invalid", f"{report.get('valid', 0)} / {report.get('invalid', 0)}"),
    ]
    cells += [
        (oracle_name(oracle), f"{errors.get(oracle, 0)}/{tests.get(oracle, 0)}")
        for oracle in oracles
    ]
    cells.append(("total errors", str(errors.get("total", 0))))
    if isinstance(rate, int | float):
        cells.append(("error rate", f"{rate * 100:.1f}%"))
    gap = report.get("gap") or {}
    for template_id, figures in sorted((gap.get("per_template") or {}).items()):
        cells.append((f"gap {template_id}", f"{figures['missing']} ({figures['pct']:.1f}%)"))
    intersection = gap.get("intersection") or {}
    if intersection:
        cells.append(
            ("gap intersection", f"{intersection['missing']} ({intersection['pct']:.1f}%)")
        )
    coverage = report.get("coverage") or {}
    if coverage:
        cells.append(("coverage", f"{coverage['covered']} ({float(coverage['pct']):.1f}%)"))
    return cells


def render_comparison(
    comparison: SessionComparison, names: Mapping[str, str], left_name: str, right_name: str
) -> Text:
    """The figures of both sessions in two columns, then the differing relations."""
    oracles = tuple(
        dict.fromkeys((*report_oracles(comparison.left), *report_oracles(comparison.right)))
    )
    text = Text()
    text.append("this  ", style="dim")
    text.append(left_name + "\n", style="bold")
    text.append("other ", style="dim")
    text.append(right_name + "\n\n", style="bold")
    for setting in comparison.settings:  # asked otherwise: the numbers may not compare
        text.append(f"⚠ {setting.describe()}\n", style="yellow")
    if comparison.settings:
        text.append("\n")
    text.append(f"{'':<{NAME_WIDTH}}{'this':<{COLUMN_WIDTH}}other\n", style="bold")
    left = dict(figure_cells(comparison.left, oracles))
    right = dict(figure_cells(comparison.right, oracles))
    for name in dict.fromkeys([*left, *right]):
        mine, theirs = left.get(name, "-"), right.get(name, "-")
        text.append(f"{name:<{NAME_WIDTH}}", style="dim")
        text.append(f"{mine:<{COLUMN_WIDTH}}")
        text.append(theirs + "\n", style="bold" if mine != theirs else "")
    text.append("\n")
    differences = comparison.differences
    per_template = ", ".join(f"{tid} {comparison.differing(tid)}" for tid in comparison.templates)
    text.append(
        f"Atomic answers differ on {len(differences)} of {comparison.shared} shared relations",
        style="bold",
    )
    text.append(f" ({per_template})\n" if per_template else "\n")
    for difference in differences[:MAX_DIFFERENCES]:
        relation = difference.relation
        parent, child = (names.get(node, node) for node in (relation.parent, relation.child))
        text.append(f"  {parent} ⊃ {child}")
        if relation.between:
            text.append(
                " via " + " > ".join(names.get(node, node) for node in relation.between),
                style="dim",
            )
        text.append(" ")
        for template_id, (this_answer, other_answer) in difference.answers.items():
            text.append(f" {template_id}:", style="dim")
            for answer, separator in ((this_answer, "|"), (other_answer, "")):
                word, style = ANSWER_STYLES.get(answer, ANSWER_STYLES[None])
                text.append(word, style=style)
                text.append(separator, style="dim")
        text.append("\n")
    if len(differences) > MAX_DIFFERENCES:
        text.append(f"  … and {len(differences) - MAX_DIFFERENCES} more\n", style="dim")
    return text


class SessionCompare(Static):
    """A comparison of two sessions (see `render_comparison`)."""

    def show_comparison(
        self,
        comparison: SessionComparison,
        names: Mapping[str, str],
        left_name: str,
        right_name: str,
    ) -> None:
        self.update(render_comparison(comparison, names, left_name, right_name))
