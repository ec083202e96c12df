"""The template and synonym editors work on the session they are opened from:
the probed session, its domain and its relations, never the session an earlier `e` opened
or the places set; Run template stores its answers in that session."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable, Input, Select

from kontest_tui.generate.templates import user_template_path
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.curation import SynonymEditorScreen, TemplateEditorScreen
from kontest_tui.tui.screens.probe import ProbeScreen
from kontest_tui.tui.screens.results import ResultsScreen
from tests.support.sessions import store_sessions
from tests.support.tui import notifications, wait_for_screen, wait_until, widget_text


def template_turns(db: str, session_id: str, template_id: str) -> int:
    """Answers stored in a session for questions of `template_id`."""
    with Store(db) as store:
        return sum(
            1
            for conversation in store.relations.load_conversations(session_id)
            if conversation.turns[0].template_id == template_id
            and (conversation.id, 0) in store.responses.load(session_id)
        )


async def open_results(pilot, app, session_id: str) -> ResultsScreen:  # noqa: ANN001
    app.open_results(session_id)
    results = await wait_for_screen(pilot, ResultsScreen)
    await wait_until(
        pilot, lambda: results.session_id == session_id and results.ready, what="results"
    )
    return results


async def probe_first_error(pilot, results: ResultsScreen) -> ProbeScreen:  # noqa: ANN001
    await pilot.press("n")
    await wait_until(pilot, lambda: bool(results.shown_details), what="the error's node")
    await pilot.press("a")
    probe = await wait_for_screen(pilot, ProbeScreen)
    await wait_until(pilot, lambda: probe.ready, what="the probe's rows")
    return probe


async def test_ctrl_t_edits_and_asks_in_the_probed_session(db_path: str) -> None:
    first, careful = await asyncio.to_thread(
        store_sessions, db_path, [("sim", 10), ("sim:careful", 10)]
    )
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        # The first session's template editor, opened and left (the QA's `e`, esc, esc).
        await open_results(pilot, app, first)
        await pilot.press("e")
        await wait_for_screen(pilot, TemplateEditorScreen)
        await pilot.press("escape")
        await pilot.press("escape")
        results = await open_results(pilot, app, careful)
        probe = await probe_first_error(pilot, results)
        assert probe.session_id == careful
        own = probe.query_one(f"#probe-q-{len(probe.phrasings) - 1}", Input)
        assert probe.context is not None
        parent = probe.context.kg.label(probe.context.relation.parent)
        child = probe.context.kg.label(probe.context.relation.child)
        own.value = f"Is {child} a part of {parent}?"
        own.focus()
        await pilot.press("ctrl+t")
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        await wait_until(pilot, lambda: editor.session is not None, what="the session read")
        assert editor.session is not None and editor.session.id == careful
        assert editor.session.model == "sim:careful" and editor.domain == "places"
        existing = widget_text(editor.query_one("#template-existing"))
        assert existing.startswith("Session: sim:careful on places")
        text = editor.query_one("#template-text", Input)
        assert text.value == "Is {child} a part of {parent}?"
        # Two places called Garnich: realised, their questions tell them apart by type, and
        # their relations by name.
        preview = editor.query_one("#template-preview", DataTable)
        rows = [str(preview.get_row_at(i)[0]).split("\n") for i in range(preview.row_count)]
        assert len(rows) == 10
        assert len({question for question, _ in rows}) == len(rows)
        assert "Is the locality of Garnich a part of Luxembourg?" in [q for q, _ in rows]
        assert len({relation for _, relation in rows}) == len(rows)
        assert any("Garnich (in " in relation for _, relation in rows)
        new_id = editor.query_one("#template-id", Input).value
        assert new_id == "t4"  # places has t1-t3
        await pilot.press("ctrl+r")
        await wait_until(
            pilot,
            lambda: any("Template t4 asked" in str(n.message) for n in notifications(app)),
            what="the template asked",
            timeout=60,
        )
        assert "t4" in widget_text(editor.query_one("#template-gap"))
    assert template_turns(db_path, careful, "t4") == 10  # one atomic question per relation
    assert template_turns(db_path, first, "t4") == 0


async def test_a_music_session_edits_music_templates_and_synonyms(db_path: str) -> None:
    (music,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)], "music")
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        results = await open_results(pilot, app, music)
        # ctrl+y from the results: the synonyms of the session's domain.
        await pilot.press("ctrl+y")
        synonyms = await wait_for_screen(pilot, SynonymEditorScreen)
        await wait_until(pilot, lambda: synonyms.ready, what="the session's domain")
        assert synonyms.domain == "music"
        assert widget_text(synonyms.query_one("#synonym-title")) == "Synonyms for domain music"
        await wait_until(
            pilot,
            lambda: "array size" in widget_text(synonyms.query_one("#synonym-status")),
            what="the session's first question's variants",
        )
        await pilot.press("escape")
        await wait_for_screen(pilot, ResultsScreen)

        probe = await probe_first_error(pilot, results)
        context = probe.context
        assert context is not None
        kind = context.relation.type
        parent, child = (
            context.kg.label(n) for n in (context.relation.parent, context.relation.child)
        )
        own = probe.query_one(f"#probe-q-{len(probe.phrasings) - 1}", Input)
        own.value = f'Did {parent} release "{child}"?'
        own.focus()
        await pilot.press("ctrl+t")
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        await wait_until(pilot, lambda: editor.session is not None, what="the session read")
        assert editor.domain == "music"
        existing = widget_text(editor.query_one("#template-existing"))
        assert existing.startswith("Session: sim on music") and "Domain music" in existing
        # The text is the probed relation type's; the other types still need theirs.
        assert editor.query_one("#template-type", Select).value == kind
        assert editor.form.texts == {kind: 'Did {parent} release "{child}"?'}
        status = widget_text(editor.query_one("#template-status"))
        others = [t for t in editor.form.relation_types if t != kind]
        assert others and all(t in status for t in others), status
        # The preview fills the text for relations of that type only.
        assert editor.session is not None
        preview = editor.query_one("#template-preview", DataTable)
        shown = [str(preview.get_row_at(i)[0]).split("\n")[0] for i in range(preview.row_count)]
        expected = editor.session.relations_of(kind)
        assert len(shown) == len(expected[:12]) > 0
        assert all(q.startswith("Did ") and " release " in q for q in shown)
        # Save refuses an incomplete template; nothing is written to any domain's set.
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: any("one text per relation type" in str(n.message) for n in notifications(app)),
            what="the refusal",
        )
        assert not user_template_path("music").exists()
        assert not user_template_path("places").exists()
        # ctrl+y here: music too.
        await pilot.press("ctrl+y")
        synonyms = await wait_for_screen(pilot, SynonymEditorScreen)
        await wait_until(pilot, lambda: synonyms.ready, what="the domain")
        assert synonyms.domain == "music"
