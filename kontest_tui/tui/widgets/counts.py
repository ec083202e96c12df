"""One-line summaries of a report: tests and errors per oracle, validity, error rate.

Used by the live run (counters while answers stream) and the results screen header. A
session that asks other test kinds (variants, FactChecker, logic rules) gets a second line
with their oracles; a KONTEST-only report looks as it always did.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.widgets import Static

from kontest_tui.report.kinds import idk_oracles
from kontest_tui.report.render import asks_kontest, headline_text
from kontest_tui.report.words import oracle_name
from kontest_tui.run.api import ReportJSON, report_section
from kontest_tui.tui.views import kind_oracles

ORACLES = ("atomic", "sequential_intra", "sequential_inter", "ontological")


def report_oracles(report: ReportJSON) -> tuple[str, ...]:
    """The KONTEST oracles, then those of the other test kinds the report has tests for."""
    tests = report.get("tests") or {}
    return (*ORACLES, *(oracle for oracle in kind_oracles() if oracle in tests))


def oracle_item(oracle: str, errors: Mapping[str, int], tests: Mapping[str, int]) -> Text:
    """`two phrasings alone 3/250` (errors in red when there are any)."""
    text = Text(f"{oracle_name(oracle)} ")
    text.append(f"{errors.get(oracle, 0)}", style="bold red" if errors.get(oracle) else "green")
    text.append(f"/{tests.get(oracle, 0)}")
    return text


def count_items(report: ReportJSON) -> list[tuple[str, list[Text]]]:
    """The counters as lines of items, each line with the separator of its items: the
    answers (` · `), then KONTEST's oracles or the session's own headline rate, then the
    other kinds' oracles (two spaces). An item is never split over two lines."""
    answers = [Text(f"relations {report.get('relations', 0)}", style="bold")]
    if asks_kontest(report):
        answers += [
            Text(f"executions {report.get('executions', 0)}"),
            Text(f"valid {report.get('valid', 0)}"),
            Text(f"invalid {report.get('invalid', 0)}"),
        ]
    else:  # KONTEST's executions and validity are 0: the questions the session asked
        kinds = list((report.get("accuracy") or {}).values())

        def total(key: str) -> int:
            return sum(int(cells.get(key) or 0) for cells in kinds)

        answers += [Text(f"questions {total('asked')}"), Text(f"valid {total('valid')}")]
        if total("refusals"):
            answers.append(Text(f"I don't know {total('refusals')}"))
        answers.append(Text(f"invalid {total('invalid')}"))
    if report.get("failed"):  # turns with no answer after all attempts
        answers.append(Text(f"failed {report['failed']}", style="bold red"))
    lines: list[tuple[str, list[Text]]] = [(" · ", answers)]
    tests = report.get("tests") or {}
    errors = report.get("errors") or {}
    if not asks_kontest(report):  # no KONTEST question: the session's own headline rate
        lines.append(("  ", [Text(headline_text(report), style="bold")]))
    else:
        kontest = [oracle_item(oracle, errors, tests) for oracle in ORACLES]
        # KONTEST's total only: the other kinds' errors (below) are never added to it.
        total_item = Text("KONTEST total ")
        total_item.append(
            f"{errors.get('total', 0)}", style="bold red" if errors.get("total") else "green"
        )
        kontest.append(total_item)
        rate = report.get("error_rate")
        if isinstance(rate, int | float):
            kontest.append(Text(f"error rate {rate * 100 if rate <= 1 else rate:.1f}%"))
        lines.append(("  ", kontest))
    others = []
    idk = idk_oracles()
    for oracle in (oracle for oracle in kind_oracles() if oracle in tests):
        item = oracle_item(oracle, errors, tests)
        refusals = (report_section(report, oracle) or {}).get("refusals") if oracle in idk else 0
        if refusals:
            item.append(f" ({refusals} idk)", style="yellow")
        others.append(item)
    if others:
        lines.append(("  ", others))
    return lines


def pack(lines: list[tuple[str, list[Text]]], width: int | None = None) -> Text:
    """The lines of items, each wrapped between items (never inside one, which would put
    `error rate` and its `12.0%` on two lines) to `width` (None: not wrapped)."""
    text = Text()
    for number, (separator, items) in enumerate(lines):
        if number:
            text.append("\n")
        used = 0
        for index, item in enumerate(items):
            if index and width is not None and used + len(separator) + len(item) > width:
                text.append("\n")
                used = 0
            elif index:
                text.append(separator)
                used += len(separator)
            text.append_text(item)
            used += len(item)
    return text


def render_counts(report: ReportJSON | None, width: int | None = None) -> Text:
    """`relations 265 · executions 1590 · valid .. · errors atomic 3/250 ...` from a report;
    a session without KONTEST questions: `relations 5 · questions 13 · valid 9 · ...` (its
    kinds' questions, not KONTEST's executions: 0) above its headline rate. Wrapped between
    items to `width`."""
    if not report:
        return Text("No answers yet.", style="italic")
    return pack(count_items(report), width)


class ReportCounts(Static):
    """The counters of one report (tests and errors per oracle)."""

    report: ReportJSON | None = None  # the report shown (drawn again at a new width)
    shown_width = 0

    def show_report(self, report: ReportJSON | None) -> None:
        self.report = report
        self.shown_width = self.size.width
        self.update(render_counts(report, self.size.width or None))

    def on_resize(self) -> None:
        """Wrap the report's counters between items at the new width."""
        if self.report is not None and self.size.width != self.shown_width:
            self.show_report(self.report)
