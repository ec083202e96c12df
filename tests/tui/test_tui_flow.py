"""The explorer end to end: wizard -> live run -> results on the places sample with `sim`."""

from __future__ import annotations

from textual.widgets import DataTable, Input, TabbedContent

from kontest_tui.report.words import oracle_name
from kontest_tui.results.evaluate import evaluate_session
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.start import StartScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.paged_table import PagedTable
from tests.support.tui import TEN_RELATIONS, top_screen, wait_for_screen, wait_until, widget_text

ORACLES = ("atomic", "sequential_intra", "sequential_inter", "ontological")


async def test_wizard_to_results_shows_the_engines_report(db_path: str) -> None:
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, StartScreen)
        await pilot.press("n")
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.preparation is not None, what="graph")
        assert wizard.kg is not None and wizard.kg.name == "places"
        # the places sample: 265 distinct ancestor pairs
        assert wizard.preparation is not None and wizard.preparation.relations == 265
        assert wizard.state.chosen_templates() == ("t1", "t2")
        wizard.query_one("#wizard-tabs", TabbedContent).active = "step-model"
        wizard.query_one("#model-spec", Input).value = "sim"
        await pilot.pause()
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        shown = widget_text(results.query_one("#result-counts"))

        session_id = results.session_id
        assert session_id
        with Store(db_path) as store:
            report = evaluate_session(store, session_id).to_json()
        # 265 relations x (2 atomic + 2 sequential x 2 turns) = 1590 model calls
        assert report["relations"] == 265
        assert report["executions"] == 1590
        assert f"relations {report['relations']}" in shown
        assert f"executions {report['executions']}" in shown
        assert f"valid {report['valid']} · invalid {report['invalid']}" in shown
        for oracle in ORACLES:
            assert (
                f"{oracle_name(oracle)} {report['errors'][oracle]}/{report['tests'][oracle]}"
                in shown
            )
        assert f"total {report['errors']['total']}" in shown
        assert f"error rate {report['error_rate'] * 100:.1f}%" in shown

        # The gap tab shows the same gap figures.
        await pilot.press("g")
        gap = widget_text(results.query_one("#gap-view"))
        for template_id, figures in report["gap"]["per_template"].items():
            assert f"\n{template_id} " in gap  # each template by its id, then its text
            assert results.header is not None
            assert f"“{results.header.template_texts[template_id][:8]}" in gap
            assert f"{figures['missing']} ({figures['pct']:.1f}%)" in gap

        # The error table lists exactly the error verdicts, and filters by type.
        await pilot.press("x")
        await wait_until(pilot, lambda: bool(results.query("#error-table")), what="errors")
        table = results.query_one("#error-table", PagedTable)
        await wait_until(
            pilot, lambda: table.row_count == report["errors"]["total"], what="the error count"
        )

        # Home: the session is listed with its model.
        await pilot.press("escape")
        start = await wait_for_screen(pilot, StartScreen)
        start.action_refresh()
        sessions = start.query_one("#sessions", DataTable)
        await wait_until(pilot, lambda: sessions.row_count == 1, what="the sessions list")
        row = sessions.get_row_at(0)
        assert str(row[0]) == session_id  # names are drawn as text (never markup)
        assert str(row[1]) == "sim"
        assert row[5] == f"{report['error_rate'] * 100:.1f}%"


async def test_reopen_a_stored_session(db_path: str) -> None:
    app = make_app(kg=TEN_RELATIONS, model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        # `kontest --kg GRAPH --model sim` opens the wizard at its last step, ready to run.
        assert wizard.query_one("#wizard-tabs", TabbedContent).active == "step-model"
        assert wizard.query_one("#model-spec", Input).value == "sim"
        await pilot.press("ctrl+r")
        first = await wait_for_screen(pilot, ResultsScreen)
        first_counts = widget_text(first.query_one("#result-counts"))
        session_id = first.session_id
        await pilot.press("escape")
        await wait_for_screen(pilot, StartScreen)
        app.open_stored_session(session_id)
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ResultsScreen)
                and app.screen is not first
                and app.screen.ready
            ),
            what="the reopened session",
        )
        reopened = top_screen(app, ResultsScreen)
        assert reopened.session_id == session_id
        assert widget_text(reopened.query_one("#result-counts")) == first_counts


async def test_slow_model_streams_while_the_pilot_navigates_and_cancels(db_path: str) -> None:
    app = make_app(kg="places", model="sim:slow", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        run = await wait_for_screen(pilot, LiveRunScreen)
        await wait_until(pilot, lambda: run.tally.snapshot().answered >= 2, what="first answers")
        # The UI stays responsive: pause, move focus, look at the help, resume.
        await pilot.press("p")
        assert run.control.paused
        state = run.query_one("#run-state")
        await wait_until(pilot, lambda: widget_text(state).startswith("paused"), what="paused")
        focused = app.focused
        await pilot.press("tab")
        assert app.focused is not focused
        await pilot.press("f1")
        await pilot.press("escape")
        assert app.screen is run
        await pilot.press("p")
        assert not run.control.paused
        await pilot.press("escape")  # asks first (see test_tui_run_safety)
        await wait_until(pilot, lambda: app.screen is not run, what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: run.finished, what="the cancelled run to stop")
        assert app.screen is run  # a cancelled run stays on screen: enter opens its results
        answered = run.tally.snapshot().answered
        assert run.end is not None and 0 < answered < run.end.report["relations"] * 6
        assert run.end.report["executions"] == answered
        assert widget_text(run.query_one("#run-state")).startswith("cancelled")
        # Once over, the footer offers no Pause or Cancel, and the ETA stops (it is hidden).
        keys = {
            binding.action for _, binding, enabled, _ in run.active_bindings.values() if enabled
        }
        assert "toggle_pause" not in keys and "cancel_run" not in keys
        assert {"leave", "open_results"} <= keys
        assert " left" not in widget_text(run.query_one("#run-state"))
        with Store(db_path) as store:
            assert store.sessions.get(run.session_id)["status"] == "cancelled"
        await pilot.press("enter")
        results = await wait_for_screen(pilot, ResultsScreen)
        assert f"executions {answered}" in widget_text(results.query_one("#result-counts"))


async def test_wizard_steps_by_keyboard_even_from_an_input(db_path: str) -> None:
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        tabs = wizard.query_one("#wizard-tabs", TabbedContent)
        wizard.query_one("#model-spec", Input).focus()
        await pilot.pause()
        await pilot.press("ctrl+pagedown")  # from the last step, wraps to the first
        assert tabs.active == "step-graph"
        await pilot.press("ctrl+pagedown", "ctrl+pagedown")
        assert tabs.active == "step-variants"
        await pilot.press("ctrl+pageup", "ctrl+pageup", "ctrl+pageup")
        assert tabs.active == "step-model"
