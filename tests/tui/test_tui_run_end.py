"""A run that ends under a screen the user opened (a new wizard, the help) leaves that screen
on top (the results must not replace it: the wizard's choices would be gone); a
notification says so and the results open when the user is back on the live screen."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.help import HelpScreen
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import notified, wait_for_screen, wait_until, write_kinawley


async def paused_run(pilot) -> LiveRunScreen:  # noqa: ANN001
    """ctrl+r in the wizard, the run paused before its first question (it would end before
    a key could be pressed)."""
    await wait_for_screen(pilot, WizardScreen)
    app = pilot.app

    def start_paused(spec, compare_with=None) -> None:  # noqa: ANN001
        screen = LiveRunScreen(spec, compare_with=compare_with)
        screen.control.pause()
        app.push_screen(screen)

    app.start_run = start_paused
    await pilot.press("ctrl+r")
    run = await wait_for_screen(pilot, LiveRunScreen)
    await wait_until(pilot, lambda: run.control.executor is not None, what="the executor")
    return run


async def test_a_run_ending_under_a_new_wizard_keeps_the_wizard(
    tmp_path: Path, db_path: str
) -> None:
    kg, _ = write_kinawley(tmp_path)
    app = make_app(kg=str(kg), model="sim:slow", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        run = await paused_run(pilot)
        await pilot.press("ctrl+n")
        wizard = await wait_for_screen(pilot, WizardScreen)
        field = wizard.query_one("#entity-input", Input)
        field.value = "Ulster"  # a choice being made
        run.control.resume()
        await wait_until(pilot, lambda: run.end is not None, what="the run's end", timeout=60)
        await wait_until(pilot, lambda: notified(app, "finished"), what="the notification")
        assert app.screen is wizard and field.value == "Ulster"
        # Back on the live screen: its results.
        await pilot.press("escape")
        results = await wait_for_screen(pilot, ResultsScreen)
        assert results.session_id == run.session_id
        assert not any(isinstance(s, LiveRunScreen) for s in app.screen_stack)


async def test_a_run_ending_under_the_help_keeps_the_help(tmp_path: Path, db_path: str) -> None:
    kg, _ = write_kinawley(tmp_path)
    app = make_app(kg=str(kg), model="sim:slow", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        run = await paused_run(pilot)
        await pilot.press("f1")
        help_screen = await wait_for_screen(pilot, HelpScreen)
        run.control.resume()
        await wait_until(pilot, lambda: run.end is not None, what="the run's end", timeout=60)
        await wait_until(pilot, lambda: notified(app, "finished"), what="the notification")
        assert app.screen is help_screen
        await pilot.press("escape")
        results = await wait_for_screen(pilot, ResultsScreen)
        assert results.session_id == run.session_id
