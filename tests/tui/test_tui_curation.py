"""Curation screens opened the way a user opens them (Results -> e -> ctrl+y)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Input

from kontest_tui.generate.variants import VariantPreview, preview_variants
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.curation import SynonymEditorScreen, TemplateEditorScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import notifications, top_screen, wait_for_screen, wait_until, widget_text


async def test_synonym_editor_opens_from_the_template_editor(tmp_path: Path, db_path: str) -> None:
    from tests.support.tui import write_kinawley

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
        assert editor.session_id == results.session_id
        await wait_until(pilot, lambda: editor.ready, what="the session read")
        assert editor.domain == "places"
        status = editor.query_one("#synonym-status")
        await wait_until(pilot, lambda: "array size" in widget_text(status), what="array size")
        assert editor.query_one("#synonym-word", Input).value == ""
        await pilot.press("escape")
        await wait_for_screen(pilot, TemplateEditorScreen)


async def test_a_ban_from_the_variants_step_changes_the_array_and_the_next_session(
    db_path: str,
) -> None:
    from textual.widgets import TabbedContent

    from kontest_tui.generate.synonyms import user_synonyms_path

    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)

        def shown_rows() -> list[list[str]] | None:
            """The rows of the first question's covering array the Variants step shows."""
            preview = wizard.state.preview
            if preview is None or not preview.variants or preview.variants[0].preview is None:
                return None
            return preview.variants[0].preview.rows

        await wait_until(pilot, lambda: wizard.state.preview is not None, what="the preview")
        assert shown_rows() is None  # the arrays (WordNet) wait for the Variants step
        wizard.query_one("#wizard-tabs", TabbedContent).active = "step-variants"
        await wait_until(pilot, lambda: shown_rows() is not None, what="the variant preview")
        source = wizard.variant_source()
        assert source is not None
        kg, relation, template, strength = source

        def engine_preview() -> VariantPreview:
            return preview_variants(kg, relation, template, "places", strength, realise=True)

        before = engine_preview()
        assert shown_rows() == before.rows
        size = widget_text(wizard.query_one("#array-size"))
        assert wizard.state.preview is not None
        assert size.startswith(wizard.state.preview.name) and "variant rows (t=2)" in size
        # Ban a value the array uses (not the original word) of the word with most values.
        column = max(
            range(len(before.parameters)), key=lambda i: len({row[i] for row in before.rows})
        )
        word = before.parameters[column]
        banned = next(row[column] for row in before.rows[1:] if row[column] != word)
        await pilot.press("ctrl+y")
        editor = await wait_for_screen(pilot, SynonymEditorScreen)
        await wait_until(
            pilot, lambda: editor.array_size == len(before.rows), what="the array size"
        )
        editor.query_one("#synonym-word", Input).value = word
        editor.query_one("#synonym-value", Input).value = banned
        editor.query_one("#ban-value", Button).press()
        synonyms_file = user_synonyms_path("places")
        await wait_until(
            pilot,
            lambda: synonyms_file.exists() and banned in synonyms_file.read_text(encoding="utf-8"),
            what="the saved ban",
        )
        after = engine_preview()
        assert all(row[column] != banned for row in after.rows)
        await wait_until(
            pilot, lambda: editor.array_size == len(after.rows), what="the new array size"
        )
        # Back in the wizard, the Variants step shows the array without the banned value.
        await pilot.press("escape")
        await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: shown_rows() == after.rows, what="the updated preview")
        assert all(row[column] != banned for row in shown_rows() or [])


async def test_export_writes_the_report_and_the_picture(tmp_path: Path, db_path: str) -> None:
    import json

    from kontest_tui.tui.export import export_folder
    from tests.support.tui import write_kinawley

    kg_path, _ = write_kinawley(tmp_path)
    app = make_app(kg=str(kg_path), model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        stem = f"kontest-{results.session_id}"
        await pilot.press("w")
        folder = export_folder()
        await wait_until(pilot, lambda: (folder / f"{stem}.html").exists(), what="the export")
        report = json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
        assert report == results.report
        assert (folder / f"{stem}.md").read_text(encoding="utf-8").startswith("#")
        assert "metric,value" in (folder / f"{stem}.csv").read_text(encoding="utf-8")
        await wait_until(
            pilot,
            lambda: any(str(folder) in str(n.message) for n in notifications(app)),
            what="the notification naming the folder",
        )


async def test_edit_t1_mark_a_fixed_word_save_a_copy_run_it_and_restore(
    tmp_path: Path, db_path: str
) -> None:
    from textual.widgets import Select, SelectionList

    from kontest_tui.generate.templates import (
        load_template_set,
        user_template_path,
    )
    from kontest_tui.run.api import load_session
    from kontest_tui.store.database import Store
    from tests.support.tui import write_kinawley

    kg_path, _ = write_kinawley(tmp_path)
    app = make_app(kg=str(kg_path), model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        session_id = results.session_id
        await pilot.press("e")
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        editor.query_one("#template-choice", Select).value = "t1"
        text = editor.query_one("#template-text", Input)
        await wait_until(pilot, lambda: text.value == "Does {parent} contain {child}?", what="t1")
        words = editor.query_one("#template-words", SelectionList)
        # t1 marks "Does" fixed: the only word listed unticked
        assert editor.form.words_shown == ["Does", "contain"]
        assert set(words.selected) == {"contain"}
        text.value = "Does {parent} include a {child}?"
        await wait_until(pilot, lambda: "include" in editor.form.words_shown, what="the new word")
        words.deselect("include")
        await pilot.press("ctrl+s")
        copy = user_template_path("places")
        await wait_until(pilot, copy.is_file, what="the user's copy")
        saved = load_template_set("places").get("t1")
        assert saved.texts["contains"] == "Does {parent} include a {child}?"
        assert set(saved.fixed) == {"Does", "include"}

        await pilot.press("ctrl+r")  # the session has a t1: asked as t1-edit
        await wait_until(
            pilot,
            lambda: "t1-edit" in widget_text(editor.query_one("#template-gap")),
            what="the gap with t1-edit",
        )
        with Store(db_path) as store:
            stored = load_session(store, session_id)
        asked = [c for c in stored.conversations if c.turns[0].template_id == "t1-edit"]
        assert len(asked) == 3 and all((c.id, 0) in stored.responses for c in asked)
        # the copy of the natural set is realised too: no "a" before a name
        assert asked[0].turns[0].text == "Does Ireland include Ulster?"
        assert stored.template_ids == ["t1", "t2", "t1-edit"]

        # Back on the results, the session is shown with the new template's answers.
        await pilot.press("escape")
        await wait_for_screen(pilot, ResultsScreen)
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ResultsScreen)
                and app.screen is not results
                and app.screen.ready
            ),
            what="reload",
        )
        assert top_screen(app, ResultsScreen).template_ids == ["t1", "t2", "t1-edit"]

        await pilot.press("e")
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        editor.query_one("#restore-templates", Button).press()
        from kontest_tui.tui.screens.confirm import ConfirmScreen

        await wait_for_screen(pilot, ConfirmScreen)  # deleting the copy asks first
        assert copy.exists()
        await pilot.press("y")
        await wait_until(pilot, lambda: not copy.exists(), what="the copy removed")
        assert load_template_set("places").get("t1").texts["contains"] == (
            "Does {parent} contain {child}?"
        )
