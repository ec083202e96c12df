"""Curation screens opened the way a user opens them (Results -> e -> ctrl+y)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input
from tui_helpers import wait_for_screen, wait_until, widget_text

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.curation import SynonymEditorScreen, TemplateEditorScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen


async def test_synonym_editor_opens_from_the_template_editor(tmp_path: Path, db_path: str) -> None:
    from test_tui_hostile import write_kinawley

    kg_path, _ = write_kinawley(tmp_path)
    app = make_app(kg=str(kg_path), model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        await pilot.press("e")
        await wait_for_screen(pilot, TemplateEditorScreen)
        await pilot.press("ctrl+y")  # crashed: the screen was built with its arguments swapped
        editor = await wait_for_screen(pilot, SynonymEditorScreen)
        assert editor.result is results.result
        assert editor.domain == "places"
        status = editor.query_one("#synonym-status")
        await wait_until(pilot, lambda: "array size" in widget_text(status), what="array size")
        assert editor.query_one("#synonym-word", Input).value == ""
        await pilot.press("escape")
        await wait_for_screen(pilot, TemplateEditorScreen)
