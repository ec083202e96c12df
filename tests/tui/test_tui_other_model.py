"""Same scope, another model: one key from the results runs the session's stored
spec with another model, then opens Compare on the pair."""

from __future__ import annotations

import asyncio

from textual.widgets import Input, Select, TabbedContent

from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.model_choice import ModelChoiceScreen
from kontest_tui.tui.screens.results import ResultsScreen
from tests.support.sessions import store_sessions
from tests.support.tui import notifications, settle, wait_for_screen, wait_until


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
        assert field.value == ""  # nothing runs that was not chosen
        field.value = "sim:nope"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("nope" in str(n.message) for n in notifications(app)),
            what="the refusal",
        )
        assert app.screen is results

        await pilot.press("o")
        modal = await wait_for_screen(pilot, ModelChoiceScreen)
        await pilot.press("down")  # from the field: the first entry, a preset not used
        assert modal.query_one("#model-choice", Input).value == "sim:careful"
        await pilot.press("enter")
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
        await settle(pilot)
        assert second.query_one("#result-tabs", TabbedContent).active == "tab-compare"
    with Store(db_path) as store:
        old, new = store.sessions.get(first), store.sessions.get(second.session_id)
        assert new["model"] == "sim:careful" and old["model"] == "sim"
        assert store.relations.load(first) == store.relations.load(second.session_id)
        assert new["template_ids"] == old["template_ids"]


async def test_results_opened_for_a_comparison_stay_on_compare(db_path: str) -> None:
    """The new session's results open on Compare, not on Graph. Their tree takes the focus
    when the results are read, and TabbedContent follows the focus to its pane; a terminal
    that has not reported focus yet (tmux) leaves nothing focused before that, so it
    happened every time there. The app without focus stands for that terminal here."""
    first, second = await asyncio.to_thread(
        store_sessions, db_path, [("sim", 12), ("sim:careful", 12)]
    )
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        app.app_focus = False  # no AUTO_FOCUS on the new screen: nothing focused at first
        app.push_screen(ResultsScreen(second, compare_with=first))
        results = await wait_for_screen(pilot, ResultsScreen)
        await wait_until(pilot, lambda: bool(results.query("#compare-select")), what="Compare")
        select = results.query_one("#compare-select", Select)
        await wait_until(pilot, lambda: select.value == first, what="the pair compared")
        await settle(pilot)
        assert results.query_one("#result-tabs", TabbedContent).active == "tab-compare"


async def test_the_model_picker_lists_presets_used_models_and_ollamas(db_path: str) -> None:
    """`o` suggests more than the first preset the session did not use: the picker lists the
    presets, the models of the other stored sessions and, on Find Ollama models, the models
    of the Ollama server typed (a real `kontest sim serve`); moving fills the field, enter
    on an entry runs it."""
    from textual.widgets import OptionList

    from tests.models.model_test_servers import running_sim_server

    chosen: list[str | None] = []
    app = make_app(db=db_path)
    with running_sim_server() as url:
        async with app.run_test(size=(100, 32)) as pilot:
            await pilot.pause()
            modal = ModelChoiceScreen("sim", ["sim", "sim:careful"], ["sim:forgetful", "sim"])
            await app.push_screen(modal, chosen.append)
            await wait_for_screen(pilot, ModelChoiceScreen)
            field = modal.query_one("#model-choice", Input)
            options = modal.query_one("#model-options", OptionList)
            shown = [
                str(options.get_option_at_index(i).prompt) for i in range(options.option_count)
            ]
            assert shown == ["sim:forgetful  (used by another session)", "sim:careful  (simulated)"]
            field.value = f"ollama:@{url}"
            await pilot.click("#model-choice-ollama")
            await wait_until(pilot, lambda: options.option_count > 2, what="the Ollama models")
            listed = [
                str(options.get_option_at_index(i).prompt) for i in range(options.option_count)
            ]
            assert f"ollama:slow:latest@{url}  (Ollama)" in listed
            assert app.focused is options
            await pilot.press("end", "home")  # the first entry: its spec in the field
            assert field.value == "sim:forgetful"
            await pilot.press("enter")
            await wait_until(pilot, lambda: bool(chosen), what="the choice")
    assert chosen == ["sim:forgetful"]


async def test_the_picker_moves_from_its_field_and_runs_only_what_was_chosen(
    db_path: str,
) -> None:
    """In the `o` picker the field starts empty (enter must not run an entry the field was
    prefilled with), up and down in it move the list (filling the field), enter on an empty
    field runs nothing, and the small local model is offered in words."""
    from textual.widgets import OptionList

    chosen: list[str | None] = []
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        presets = ["sim", "sim:careful", "local:gemma3-270m"]
        modal = ModelChoiceScreen("sim", presets, ["sim:forgetful"])
        await app.push_screen(modal, chosen.append)
        await wait_for_screen(pilot, ModelChoiceScreen)
        field = modal.query_one("#model-choice", Input)
        options = modal.query_one("#model-options", OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert "local:gemma3-270m  (a real small model, offline)" in shown
        assert app.focused is field and field.value == ""
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("Pick a model" in str(n.message) for n in notifications(app)),
            what="the hint",
        )
        assert app.screen is modal and not chosen
        await pilot.press("down")
        assert options.highlighted == 0 and field.value == "sim:forgetful"
        await pilot.press("down", "down", "down", "up")
        assert app.focused is field  # the keys moved the list, the cursor stayed
        assert options.highlighted == 1 and field.value == "sim:careful"
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(chosen), what="the choice")
    assert chosen == ["sim:careful"]
