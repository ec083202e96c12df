"""Test kinds in the explorer: chosen in the wizard, streamed in the live run, shown in results.

FactChecker questions and logic rules on the places sample with `sim`: every figure the
explorer shows must be the engine's (run.session.evaluate_session for the stored session).
"""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import Select, SelectionList, Static, TabbedContent

from kontest_tui.domain.records import TestKind
from kontest_tui.report.words import oracle_name, question_name, rule_name
from kontest_tui.results.evaluate import evaluate_session, session_kinds
from kontest_tui.run.api import SessionSpec
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.counts import ORACLES
from kontest_tui.tui.widgets.paged_table import PagedTable
from tests.support.tui import TEN_RELATIONS, top_screen, wait_for_screen, wait_until, widget_text

SIZE = (100, 32)


def static_text(widget: Static, width: int = 120) -> str:
    """Everything a Static holds (not only what is scrolled into view), as plain text."""
    console = Console(width=width, file=io.StringIO(), record=True, legacy_windows=False)
    console.print(widget.content)
    return console.export_text()


def tally_line(name: str, cell: dict) -> str:
    """One row of a tally table as the Kinds tab prints it, spaces collapsed."""
    values = [cell[key] for key in ("asked", "valid", "correct", "errors", "refusals")]
    return " ".join([name, *map(str, values), f"{cell['accuracy']:.1f}%"])


def logic_line(name: str, cell: dict) -> str:
    """One row of the logic-rules table (report.render.LOGIC_HEADER), spaces collapsed."""
    values = [cell[key] for key in ("asked", "valid", "errors", "refusals")]
    rates = [f"{100 * cell[key]:.1f}%" for key in ("hallucination_rate", "error_rate")]
    causes = [cell[f"error_{c}"] for c in ("knowledge", "inference", "both", "unstated")]
    premise = "/".join(
        str(cell[f"premise_{c}"]) for c in ("knowledge", "inference", "unclassified")
    )
    return " ".join([name, *map(str, values), *rates, *map(str, causes), premise])


def collapse(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


async def test_factcheck_and_logic_from_wizard_to_results(db_path: str) -> None:
    app = make_app(kg=TEN_RELATIONS, model="sim", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kinds_step.kind_choices != [], what="the kinds")
        offered = [choice.value for choice in wizard.kinds_step.kind_choices]
        assert offered == ["kontest", "variant", "factcheck", "logic"]  # annotation: a file
        wizard.query_one("#wizard-tabs", TabbedContent).active = "step-kinds"
        kinds = wizard.query_one("#kind-select", SelectionList)
        assert list(kinds.selected) == ["kontest"]
        kinds.select("factcheck")
        kinds.select("logic")
        await wait_until(
            pilot,
            lambda: wizard.preparation is not None and len(wizard.preparation.counts) == 3,
            what="the kind counts",
        )
        assert wizard.preparation is not None
        counted = {c.kind: (c.conversations, c.calls) for c in wizard.preparation.counts}
        # 10 relations: t1, t2 alone and in both orders (4 conversations), 2 + 2 x 2 calls
        assert counted["kontest"] == (40, 60)
        shown = widget_text(wizard.query_one("#kind-counts"))
        for kind, (conversations, calls) in counted.items():
            assert f"{kind:<10} {conversations:>6} conversations {calls:>6} model calls" in shown
        assert not wizard.query_one("#variant-options").display  # variants not ticked

        # Run with a live screen that stays after the run, to read what it streamed.
        def start_run(spec: SessionSpec, compare_with: str | None = None) -> None:
            app.push_screen(LiveRunScreen(spec, auto_results=False))

        app.start_run = start_run  # type: ignore[method-assign]
        await pilot.press("ctrl+r")
        run = await wait_for_screen(pilot, LiveRunScreen)
        assert run.spec is not None
        assert [str(kind) for kind in run.spec.kinds] == ["kontest", "factcheck", "logic"]
        await wait_until(pilot, lambda: run.finished, timeout=180, what="the run")
        assert run.failed is None and run.end is not None
        live = run.tally.snapshot()
        assert live.answered == sum(calls for _, calls in counted.values())
        assert live.per_kind == {kind: calls for kind, (_, calls) in counted.items()}
        live_counts = widget_text(run.query_one("#run-counts"))

        session_id = run.session_id
        assert session_id is not None
        with Store(db_path) as store:
            report = evaluate_session(store, session_id).to_json()
            asked, _options, _problems = session_kinds(store, session_id)
        assert asked == [TestKind.KONTEST, TestKind.FACTCHECK, TestKind.LOGIC]
        assert report["kinds"] == ["kontest", "factcheck", "logic"]
        # Tests are the valid answers only (refusals and unreadable replies counted apart).
        # ... and most answers are valid
        assert (
            report["tests"]["factcheck"]
            == report["factcheck"]["valid"]
            > counted["factcheck"][1] / 2
        )
        assert report["tests"]["logic"] == report["logic"]["valid"] > counted["logic"][1] / 2

        # The live counters end on the engine's figures, new oracles included; the live
        # tally of metamorphic tests is the same as the final evaluation's.
        for oracle in (*ORACLES, "factcheck", "logic"):
            assert (
                f"{oracle_name(oracle)} {report['errors'][oracle]}/{report['tests'][oracle]}"
                in live_counts
            )
        for oracle in ("atomic", "sequential_intra", "sequential_inter"):
            assert live.errors[oracle] == report["errors"][oracle]
            assert live.tests[oracle] == report["tests"][oracle]

        await pilot.press("enter")
        results = await wait_for_screen(pilot, ResultsScreen)
        header = widget_text(results.query_one("#result-counts"))
        for oracle in (*ORACLES, "factcheck", "logic"):
            assert (
                f"{oracle_name(oracle)} {report['errors'][oracle]}/{report['tests'][oracle]}"
                in header
            )
        refusals = report["logic"]["refusals"]
        assert f"({refusals} idk)" in header
        assert f"total {report['errors']['total']}" in header
        assert f"error rate {report['error_rate'] * 100:.1f}%" in header
        assert results.report == report

        # The Kinds tab: FactChecker per question type and relation type, logic per rule.
        await pilot.press("k")
        tabs = results.query_one("#result-tabs", TabbedContent)
        await wait_until(pilot, lambda: bool(results.query("#kinds-view")), what="Kinds tab")
        assert tabs.active == "tab-kinds"
        kinds_text = collapse(static_text(results.query_one("#kinds-view", Static)))
        factcheck, logic = report["factcheck"], report["logic"]
        for name, cell in factcheck["per_type"].items():
            assert tally_line(question_name(name), cell) in kinds_text
        # each question type by its name in words, never its key (yes_no, two_hop, ...)
        assert not [name for name in factcheck["per_type"] if "_" in name and name in kinds_text]
        for name, cell in factcheck["per_relation_type"].items():
            assert tally_line(name, cell) in kinds_text
        for name, cell in logic["per_rule"].items():
            assert logic_line(rule_name(name), cell) in kinds_text
        assert tally_line("total", factcheck) in kinds_text
        assert logic_line("total", logic) in kinds_text

        # The error table filters by the new oracles too.
        await pilot.press("x")
        await wait_until(pilot, lambda: bool(results.query("#error-table")), what="errors")
        table = results.query_one("#error-table", PagedTable)
        await wait_until(
            pilot,
            lambda: (
                table.row_count == sum(n for name, n in report["errors"].items() if name != "total")
            ),
            what="the error rows",
        )
        # both are offered (a value the Select does not offer raises InvalidSelectValueError)
        results.query_one("#error-filter", Select).value = "factcheck"
        results.query_one("#error-filter", Select).value = "logic"
        await wait_until(
            pilot, lambda: table.row_count == report["errors"]["logic"], what="the logic filter"
        )

        # The detail pane of a relation lists its probe conversations and their raw answers
        # (a county in its province: FactChecker's yes/no questions and logic's negation).
        with Store(db_path) as store:
            relations = store.relations.load(results.session_id)
            relation = next(r for r in relations if r.child == "ireland.ulster.county-donegal")
            way = store.tree.way(results.session_id, relation.child)
        results.select_way(way)
        await wait_until(
            pilot,
            lambda: (
                "fact check: yes-or-no question" in widget_text(results.query_one("#detail-text"))
            ),
            what="the probe conversations",
        )
        detail = widget_text(results.query_one("#detail-text"))
        # Conversations by name in words (report.words.conversation_name), not by label.
        assert "fact check: yes-or-no question (a wrong name)" in detail
        assert "logic rule: negation" in detail
        assert "factcheck yes_no" not in detail
        assert "expected: " in detail


async def test_kontest_only_session_has_no_kinds_tab(db_path: str) -> None:
    app = make_app(kg=TEN_RELATIONS, model="sim", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        assert results.header is not None and results.header.kinds == ("kontest",)
        assert not results.query("#tab-kinds")
        header = widget_text(results.query_one("#result-counts"))
        # the counts, then KONTEST's oracles (wrapped between items to the width): no line
        # of the other kinds' oracles
        lines = header.splitlines()
        assert lines[0].startswith("relations ") and lines[1].startswith("two phrasings alone ")
        assert lines[-1].endswith("%") and "KONTEST total" in header
        others = ("fact checks", "logic rules", "reworded variants")
        assert not any(line.startswith(others) for line in lines)
        assert results.report is not None and "kinds" not in results.report
        await pilot.press("k")  # no Kinds tab: the key does nothing
        assert results.query_one("#result-tabs", TabbedContent).active == "tab-graph"
        # Reopened from the store, it is the same.
        app.open_stored_session(results.session_id)
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ResultsScreen)
                and app.screen is not results
                and app.screen.ready
            ),
            what="the reopened session",
        )
        reopened = top_screen(app, ResultsScreen)
        assert reopened.header is not None and reopened.header.kinds == ("kontest",)
        assert not reopened.query("#tab-kinds")
