"""One-line summaries of a report: tests and errors per oracle, validity, error rate.

Used by the live run (counters while answers stream) and the results screen header. A
session that asks other test kinds (variants, FactChecker, logic rules) gets a second line
with their oracles; a KONTEST-only report looks as it always did.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.widgets import Static

from kontest_tui.report.render import asks_kontest, headline_text
from kontest_tui.run.api import ReportJSON, report_section
from kontest_tui.tui.views import KIND_ORACLES

ORACLES = ("atomic", "sequential_intra", "sequential_inter", "ontological")


def report_oracles(report: ReportJSON) -> tuple[str, ...]:
    """The KONTEST oracles, then those of the other test kinds the report has tests for."""
    tests = report.get("tests") or {}
    return (*ORACLES, *(oracle for oracle in KIND_ORACLES if oracle in tests))


def append_oracle(
    text: Text, oracle: str, errors: Mapping[str, int], tests: Mapping[str, int]
) -> None:
    """`atomic 3/250` (errors in red when there are any)."""
    text.append(f"{oracle} ")
    text.append(f"{errors.get(oracle, 0)}", style="bold red" if errors.get(oracle) else "green")
    text.append(f"/{tests.get(oracle, 0)}")


def render_counts(report: ReportJSON | None) -> Text:
    """`relations 265 · executions 1590 · valid .. · errors atomic 3/250 ...` from a report;
    a session without KONTEST questions: `relations 5 · questions 13 · valid 9 · ...` (its
    kinds' questions, not KONTEST's executions: 0) above its headline rate."""
    if not report:
        return Text("No answers yet.", style="italic")
    text = Text()
    text.append(f"relations {report.get('relations', 0)}", style="bold")
    if asks_kontest(report):
        text.append(f" · executions {report.get('executions', 0)}")
        text.append(f" · valid {report.get('valid', 0)} · invalid {report.get('invalid', 0)}")
    else:  # KONTEST's executions and validity are 0: the questions the session asked
        kinds = list((report.get("accuracy") or {}).values())

        def total(key: str) -> int:
            return sum(int(cells.get(key) or 0) for cells in kinds)

        text.append(f" · questions {total('asked')} · valid {total('valid')}")
        if total("refusals"):
            text.append(f" · I don't know {total('refusals')}")
        text.append(f" · invalid {total('invalid')}")
    if report.get("failed"):  # turns with no answer after all attempts
        text.append(f" · failed {report['failed']}", style="bold red")
    text.append("\n")
    tests = report.get("tests") or {}
    errors = report.get("errors") or {}
    if not asks_kontest(report):  # no KONTEST question: the session's own headline rate
        text.append(f"{headline_text(report)}", style="bold")
    else:
        for oracle in ORACLES:
            append_oracle(text, oracle, errors, tests)
            text.append("  ")
        # KONTEST's total only: the other kinds' errors (below) are never added to it.
        text.append("KONTEST total ")
        text.append(
            f"{errors.get('total', 0)}", style="bold red" if errors.get("total") else "green"
        )
        rate = report.get("error_rate")
        if isinstance(rate, int | float):
            text.append(f"  error rate {rate * 100 if rate <= 1 else rate:.1f}%")
    others = [oracle for oracle in KIND_ORACLES if oracle in tests]
    if others:
        text.append("\n")
        for oracle in others:
            append_oracle(text, oracle, errors, tests)
            refusals = (
                (report_section(report, oracle) or {}).get("refusals") if oracle == "logic" else 0
            )
            if refusals:
                text.append(f" ({refusals} idk)", style="yellow")
            text.append("  ")
    return text


class ReportCounts(Static):
    """The counters of one report (tests and errors per oracle)."""

    def show_report(self, report: ReportJSON | None) -> None:
        self.update(render_counts(report))
