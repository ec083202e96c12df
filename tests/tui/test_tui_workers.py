"""One handler for failed workers: an exception that is not a KontestError (an engine bug)
is a notification, and the screen is left usable, not "running" or "loading" for ever."""

from __future__ import annotations

import pytest
from textual.widgets import TabbedContent

from kontest_tui.tui.app import make_app
from tests.support.tui import notifications, wait_for_screen, wait_until, widget_text


def messages(app) -> list[tuple[str, str]]:
    return [(str(n.title), str(n.message)) for n in notifications(app)]


async def test_a_run_that_raises_stops_and_says_why(
    monkeypatch: pytest.MonkeyPatch, db_path: str
) -> None:
    from kontest_tui.tui.screens import live_run
    from kontest_tui.tui.screens.live_run import LiveRunScreen
    from kontest_tui.tui.screens.wizard import WizardScreen

    async def broken_run(*args: object, **kwargs: object) -> None:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(live_run, "run_live", broken_run)
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        run = await wait_for_screen(pilot, LiveRunScreen)
        await wait_until(pilot, lambda: run.finished, what="the failed run")
        assert ("run failed", "RuntimeError: engine bug") in messages(app)
        state = widget_text(run.query_one("#run-state"))
        assert state.startswith("failed: 0 answers") and "running" not in state
        assert "engine bug" in state
        await pilot.press("escape")  # finished: back to the wizard, nothing to confirm
        await wait_for_screen(pilot, WizardScreen)


async def test_a_listing_that_raises_leaves_the_start_screen_usable(
    monkeypatch: pytest.MonkeyPatch, db_path: str
) -> None:
    from kontest_tui.tui.screens import start
    from kontest_tui.tui.screens.start import StartScreen
    from kontest_tui.tui.screens.wizard import WizardScreen

    def broken_list(*args: object, **kwargs: object) -> list[object]:
        raise KeyError("status")

    monkeypatch.setattr(start, "list_sessions", broken_list)
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await wait_for_screen(pilot, StartScreen)
        note = screen.query_one("#sessions-note")
        await wait_until(pilot, lambda: "could not be listed" in widget_text(note), what="note")
        assert ("sessions failed", "KeyError: 'status'") in messages(app)
        await pilot.press("n")
        await wait_for_screen(pilot, WizardScreen)


async def test_a_preview_that_raises_says_so_in_the_step(
    monkeypatch: pytest.MonkeyPatch, db_path: str
) -> None:
    from kontest_tui.tui.screens.wizard import WizardScreen
    from kontest_tui.tui.widgets.wizard import templates

    def broken_preview(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("division by zero")

    # The relation browser's previews (the first comes with the preparation, then its
    # covering arrays are made by the Templates step's worker: that one fails).
    monkeypatch.setattr(templates, "preview_relation", broken_preview)
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: screen.state.preview is not None, what="the preview")
        screen.query_one(
            "#wizard-tabs", TabbedContent
        ).active = "step-variants"  # its arrays are made now
        note = screen.query_one("#conversation-preview")
        await wait_until(pilot, lambda: "Preview failed" in widget_text(note), what="the note")
        assert ("wizard-preview failed", "ZeroDivisionError: division by zero") in messages(app)
        assert "Preview failed" in widget_text(screen.query_one("#variant-tables"))
        assert screen.kg is not None and screen.state.run_state() == (True, "")  # the rest loaded
