"""The curation screens driven by keys as a user drives them: the
synonym editor's fields typed into at 80x24, pins and bans listed and taken back, a saved
template listed at once, an edited template's new word tagged so it varies, and Restore
built-in asking first."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Input, OptionList, Select, SelectionList

from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.synonyms import list_user_choices, user_synonyms_path
from kontest_tui.generate.templates import load_template_set, user_template_path
from kontest_tui.generate.variants import preview_variants
from kontest_tui.kg.io import load_graph
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.confirm import ConfirmScreen
from kontest_tui.tui.screens.curation import (
    NEW_TEMPLATE,
    SynonymEditorScreen,
    TemplateEditorScreen,
)
from tests.support.tui import settle, wait_for_screen, wait_until, widget_text


async def type_text(pilot, text: str) -> None:
    for char in text:
        await pilot.press("space" if char == " " else char)


async def test_the_synonym_fields_are_on_screen_and_typed_into_at_80x24(db_path: str) -> None:
    app = make_app(db=db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(SynonymEditorScreen(domain="places"))
        editor = await wait_for_screen(pilot, SynonymEditorScreen)
        await settle(pilot)
        for field in ("#synonym-word", "#synonym-value"):
            region = editor.query_one(field, Input).region
            assert region.width >= 10 and region.right <= 80, (field, region)
        await pilot.click("#synonym-word")
        await type_text(pilot, "have")
        await pilot.click("#synonym-value")  # off-screen before: the click failed
        await type_text(pilot, "contain")
        assert editor.query_one("#synonym-value", Input).value == "contain"
        await pilot.click("#pin-value")
        path = user_synonyms_path("places")
        await wait_until(pilot, path.is_file, what="the pin saved")
        assert 'have = ["contain"]' in path.read_text(encoding="utf-8")
        # The pin is listed, and taken back with ctrl+z.
        choices = editor.query_one("#synonym-choices", OptionList)
        await wait_until(pilot, lambda: choices.option_count == 1, what="the pin listed")
        assert "pin have → contain" in str(choices.get_option_at_index(0).prompt)
        choices.focus()
        choices.highlighted = 0
        await pilot.press("ctrl+z")
        await wait_until(pilot, lambda: not list_user_choices("places"), what="the pin undone")
        assert "No pins or bans" in str(choices.get_option_at_index(0).prompt)


async def test_the_template_editor_takes_typing_into_its_text_at_once(db_path: str) -> None:
    """Opened, it is on a new template: typed keys go to the text, not to the choice."""
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        app.push_screen(TemplateEditorScreen(None))
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        await wait_until(pilot, lambda: editor.template_set is not None, what="the templates")
        await settle(pilot)
        await type_text(pilot, "Is {child} part of {parent}?")
        assert editor.query_one("#template-text", Input).value == "Is {child} part of {parent}?"
        assert editor.query_one("#template-choice", Select).value == NEW_TEMPLATE


async def test_a_saved_template_is_listed_and_its_new_word_varies(
    tmp_path: Path, db_path: str
) -> None:
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        app.push_screen(TemplateEditorScreen(None))
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        await wait_until(pilot, lambda: editor.template_set is not None, what="the templates")
        editor.query_one("#template-choice", Select).value = "t1"
        text = editor.query_one("#template-text", Input)
        await wait_until(pilot, lambda: text.value == "Does {parent} contain {child}?", what="t1")
        text.focus()
        await pilot.press("ctrl+a", "ctrl+k")
        await type_text(pilot, "Does {parent} have a {child}?")
        words = editor.query_one("#template-words", SelectionList)
        await wait_until(pilot, lambda: "have" in editor.form.words_shown, what="the new word")
        assert "have" in words.selected  # a new word may vary
        await pilot.press("ctrl+s")
        copy = user_template_path("places")
        await wait_until(pilot, copy.is_file, what="the user's copy")
        saved = load_template_set("places").get("t1")
        # The old word's tag went with it; the new word got one (WordNet: a verb).
        assert saved.pos == {"have": "v"}
        # The list and the choice show the saved template at once.
        existing = editor.query_one("#template-existing")
        await wait_until(
            pilot,
            lambda: "t1: Does {parent} have a {child}?" in widget_text(existing),
            what="the list refreshed",
        )
        assert editor.query_one("#template-choice", Select).value == "t1"
        # Its covering array varies the new word (contain, include; untagged, it had no value
        # but the curated ones).
        kg = load_graph("places")
        relation = extract_relations(kg)[0]
        preview = preview_variants(kg, relation, saved, "places", 2)
        column = preview.parameters.index("have")
        assert len({row[column] for row in preview.rows}) > 1
        # Restore built-in asks first; "no" keeps the copy.
        editor.query_one("#restore-templates", Button).press()
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("n")
        await wait_for_screen(pilot, TemplateEditorScreen)
        assert copy.is_file()


async def test_ticked_and_unticked_words_differ_by_a_glyph(db_path: str) -> None:
    from kontest_tui.tui.widgets.ticks import TICKED, TickBox

    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        app.push_screen(TemplateEditorScreen(None))
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        await wait_until(pilot, lambda: editor.template_set is not None, what="the templates")
        editor.query_one("#template-choice", Select).value = "t1"
        await wait_until(pilot, lambda: editor.form.words_shown == ["Does", "contain"], what="t1")
        await settle(pilot)
        words = editor.query_one("#template-words", SelectionList)
        lines = [words.render_line(y).text for y in range(2)]
        # t1 fixes "Does" (unticked); "contain" may vary (ticked).
        assert [TICKED in line[:3] for line in lines] == [False, True], lines
        assert [line.split()[-1] for line in lines] == ["Does", "contain"]
        box = TickBox("x", value=True)
        await editor.mount(box)
        assert TICKED in box.render().plain
        box.value = False
        assert TICKED not in box.render().plain


async def test_an_offline_wikidata_search_says_so(db_path: str, monkeypatch) -> None:
    """Ticked Wikidata with no network: the matches come from the samples, and a line says
    so (it fell back silently before)."""
    from textual.widgets import Input as TextInput

    import kontest_tui.kg.search as search
    from kontest_tui.tui.screens.wizard import WizardScreen
    from kontest_tui.tui.widgets.ticks import TickBox

    monkeypatch.setattr(search, "WIKIDATA_API", "http://127.0.0.1:9/w/api.php")  # refused
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        app.open_wizard()
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: bool(wizard.query("#online")), what="the graph step")
        wizard.query_one("#online", TickBox).value = True
        wizard.query_one("#entity-input", TextInput).value = "ireland"
        suggestions = wizard.query_one("#entity-suggestions", OptionList)

        def prompts() -> list[str]:
            return [str(option.prompt) for option in suggestions.options]

        await wait_until(pilot, lambda: len(prompts()) > 1, what="the suggestions")
        assert "Wikidata could not be reached" in prompts()[0]
        assert any("Ireland" in prompt for prompt in prompts()[1:])
