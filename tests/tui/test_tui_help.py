"""f1 on a screen lists every key of that screen (issue 24): its own bindings, the app's and
the focused widget's, each with its description."""

from __future__ import annotations

from textual.widgets import Markdown

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.curation import SynonymEditorScreen, TemplateEditorScreen
from kontest_tui.tui.screens.help import HelpScreen
from kontest_tui.tui.screens.start import StartScreen
from tests.support.tui import wait_for_screen


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
            lambda: any("Saved screenshot" in str(n.message) for n in app._notifications),
            what="the notification",
        )
        (saved,) = set(export_folder().glob("*.svg")) - before
        assert saved.read_text(encoding="utf-8").startswith("<svg")
