"""f1 on a screen lists every key of that screen: its own bindings, the app's and
the focused widget's, each with its description."""

from __future__ import annotations

from textual.widgets import Markdown

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.curation import SynonymEditorScreen, TemplateEditorScreen
from kontest_tui.tui.screens.help import HelpScreen
from kontest_tui.tui.screens.start import StartScreen
from tests.support.tui import notifications, wait_for_screen


def descriptions(screen_type) -> list[str]:
    return [binding.description for binding in screen_type.BINDINGS if binding.description]


async def test_help_lists_every_binding_of_the_screen_under_it(db_path: str) -> None:
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        for screen_type, make in (
            (StartScreen, None),
            (TemplateEditorScreen, lambda: TemplateEditorScreen(None)),
            (SynonymEditorScreen, lambda: SynonymEditorScreen(domain="places")),
        ):
            if make is not None:
                app.push_screen(make())
            under = await wait_for_screen(pilot, screen_type)
            await pilot.press("f1")
            help_screen = await wait_for_screen(pilot, HelpScreen)
            text = help_screen.text
            assert len(descriptions(screen_type)) >= 2
            for description in descriptions(screen_type):
                assert f"**{description}**" in text, (screen_type.__name__, description)
            assert "**Quit**" in text and "**Help**" in text  # the app's keys too
            assert help_screen.query_one(Markdown).source == text
            await pilot.press("escape")
            assert app.screen is under


async def test_the_palette_screenshot_goes_to_the_exports_folder(db_path: str) -> None:
    from kontest_tui.tui.export import export_folder
    from tests.support.tui import wait_until

    app = make_app(db=db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, StartScreen)
        before = set(export_folder().glob("*.svg"))
        app.deliver_screenshot()  # what the palette's "Save screenshot" calls
        await wait_until(  # the delivery is complete (the file written whole)
            pilot,
            lambda: any("Saved screenshot" in str(n.message) for n in notifications(app)),
            what="the notification",
        )
        (saved,) = set(export_folder().glob("*.svg")) - before
        assert saved.read_text(encoding="utf-8").startswith("<svg")


def keys_listed(text: str) -> list[str]:
    """The `key` **Description** lines of the help's key sections."""
    return [line for line in text.splitlines() if line.startswith("- `")]


async def test_the_live_help_lists_the_keys_of_the_moment(db_path: str) -> None:
    """The live run's help lists the keys of the moment, escape once (not as both Cancel and
    Back) and Results only when it is over. During the run: Pause and Cancel; once over:
    Results and Back."""
    from dataclasses import replace

    from kontest_tui.run.api import SessionSpec
    from kontest_tui.tui.screens.live_run import LiveRunScreen
    from tests.support.tui import wait_until

    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, StartScreen)
        run = LiveRunScreen(
            replace(SessionSpec("places", model="sim"), limit=3), auto_results=False
        )
        run.control.pause()  # before its first question: the run is on
        await app.push_screen(run)
        await wait_until(pilot, lambda: run.control.executor is not None, what="the executor")
        await pilot.press("f1")
        lines = keys_listed((await wait_for_screen(pilot, HelpScreen)).text)
        assert [line for line in lines if line.startswith("- `esc`")] == [
            next(line for line in lines if "**Cancel**" in line)
        ]
        assert not any("**Results**" in line or "**Back**" in line for line in lines)
        assert any("**Pause/Resume**" in line for line in lines)
        await pilot.press("escape")
        run.control.resume()
        await wait_until(pilot, lambda: run.end is not None, what="the run's end")
        await pilot.press("f1")
        lines = keys_listed((await wait_for_screen(pilot, HelpScreen)).text)
        assert any("**Results**" in line for line in lines)
        assert any("**Back**" in line for line in lines)
        assert not any("**Cancel**" in line or "**Pause/Resume**" in line for line in lines)


async def test_the_results_help_lists_kinds_only_for_a_session_with_kinds(db_path: str) -> None:
    import asyncio

    from kontest_tui.tui.screens.results import ResultsScreen
    from tests.support.sessions import store_sessions
    from tests.support.tui import wait_until

    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 3)])
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, StartScreen)
        app.open_stored_session(session_id)
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.screen.ready)
        await pilot.press("f1")
        text = (await wait_for_screen(pilot, HelpScreen)).text
        assert text.startswith("# Results: help")
        assert "**Compare**" in text and "**Kinds**" not in text


def test_a_screen_without_a_name_is_named_in_words() -> None:
    from kontest_tui.tui.screens.help import screen_name
    from kontest_tui.tui.screens.probe import ProbeScreen

    class ModelListScreen(StartScreen):
        pass

    assert screen_name(ProbeScreen.__new__(ProbeScreen)) == "Probe"
    assert screen_name(ModelListScreen.__new__(ModelListScreen)) == "Model list"
