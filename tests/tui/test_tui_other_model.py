"""Same scope, another model (issue 24): one key from the results runs the session's stored
spec with another model, then opens Compare on the pair."""

from __future__ import annotations

import asyncio

from textual.widgets import Input, Select

from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.model_choice import ModelChoiceScreen
from kontest_tui.tui.screens.results import ResultsScreen
from tests.support.sessions import store_sessions
from tests.support.tui import wait_for_screen, wait_until


async def test_the_same_session_with_another_model_then_compare(db_path: str) -> None:
    (first,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)])
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        app.open_results(first)
        results = await wait_for_screen(pilot, ResultsScreen)
        await wait_until(pilot, lambda: results.ready, what="the results")

        # A spec that does not parse is one notification; the results stay.
        await pilot.press("o")
        modal = await wait_for_screen(pilot, ModelChoiceScreen)
        field = modal.query_one("#model-choice", Input)
        assert field.value == "sim:careful"  # a preset the session did not use
        field.value = "sim:nope"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("nope" in str(n.message) for n in app._notifications),
            what="the refusal",
        )
        assert app.screen is results

        await pilot.press("o")
        await wait_for_screen(pilot, ModelChoiceScreen)
        await pilot.press("enter")  # sim:careful
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, ResultsScreen) and app.screen.session_id != first,
            what="the new session's results",
            timeout=120,
        )
        second = app.screen
        assert isinstance(second, ResultsScreen)
        await wait_until(pilot, lambda: bool(second.query("#compare-select")), what="Compare")
        select = second.query_one("#compare-select", Select)
        await wait_until(pilot, lambda: select.value == first, what="the pair compared")
    with Store(db_path) as store:
        old, new = store.get_session(first), store.get_session(second.session_id)
        assert new["model"] == "sim:careful" and old["model"] == "sim"
        assert store.load_relations(first) == store.load_relations(second.session_id)
        assert new["template_ids"] == old["template_ids"]
