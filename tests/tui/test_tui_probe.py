"""The probe panel: one relation of a stored session asked now by hand, its
answers streamed beside the session's stored answers, stored as probes (no figure changes),
and a rephrasing promoted to a template or its changed word to a synonym pin."""

from __future__ import annotations

import asyncio

from textual.widgets import Input, SelectionList

from kontest_tui.generate.synonyms import list_user_choices
from kontest_tui.results.reports import session_report
from kontest_tui.run.probe import Phrasing, probe_context, probe_relation
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.curation import TemplateEditorScreen
from kontest_tui.tui.screens.probe import ProbeScreen
from tests.support.sessions import store_sessions
from tests.support.tui import wait_for_screen, wait_for_workers, wait_until, widget_text

CAPELLEN = "luxembourg>luxembourg.canton-of-capellen"


async def test_probe_a_relation_by_hand(db_path: str) -> None:
    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 10)])
    with Store(db_path) as store:
        before = session_report(store, session_id).report
        context = probe_context(store, session_id, CAPELLEN)
    own = "Is Canton of Capellen a part of Luxembourg?"
    expected = await probe_relation(
        context.model,
        context.kg,
        [*context.phrasings(), Phrasing(own)],
        options=context.options,
        seed=context.seed,
    )
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 36)) as pilot:
        await pilot.pause()
        app.push_screen(ProbeScreen(db_path, session_id, CAPELLEN))
        screen = await wait_for_screen(pilot, ProbeScreen)
        await wait_until(pilot, lambda: screen.ready, what="the rows")
        title = widget_text(screen.query_one("#probe-title"))
        assert "Luxembourg contains Canton of Capellen" in title and "model sim" in title
        # Each template's text for the pair, then an empty row for a question of your own.
        questions = [screen.query_one(f"#probe-q-{i}", Input).value for i in range(4)]
        assert questions == [p.question for p in context.phrasings()] + [""]
        first = widget_text(screen.query_one("#probe-a-0"))
        assert "stored in the session:" in first and "→" in first  # t1 was asked alone
        assert "not asked in the session" in widget_text(screen.query_one("#probe-a-2"))  # t3
        screen.query_one("#probe-q-3", Input).focus()
        for char in own:
            await pilot.press("space" if char == " " else char)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: len(screen.probe_ids) == 4, what="the answers shown")
        for index, answer in enumerate(expected):
            shown = widget_text(screen.query_one(f"#probe-a-{index}"))
            assert shown.startswith("now: ")
            assert f"→ {answer.answer.value}" in shown.splitlines()[0], shown
        with Store(db_path) as store:
            probes = list(store.probes.of_session(session_id, CAPELLEN))
            after = session_report(store, session_id).report
        assert [(p.question, p.raw) for p in probes] == [
            (a.phrasing.question, a.raw) for a in expected
        ]
        assert after == before  # no figure of the session changed

        # The first template's question with one word changed: pinned as a synonym.
        row = screen.query_one("#probe-q-0", Input)
        row.value = row.value.replace(" contain ", " hold ")
        row.focus()
        await pilot.press("ctrl+o")
        await wait_until(
            pilot,
            lambda: any(
                c.word == "contain" and c.value == "hold" for c in list_user_choices("places")
            ),
            what="the synonym pin",
        )
        # Your own question as a template: the editor opens with it; the probe is marked
        # promoted once the template is saved, not when the editor opens.
        screen.query_one("#probe-q-3", Input).focus()
        await pilot.press("ctrl+t")
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        assert editor.session_id == session_id
        text = editor.query_one("#template-text", Input)
        await wait_until(
            pilot,
            lambda: text.value == "Is {child} a part of {parent}?",
            what="the template text",
        )

        def promoted() -> dict[str, str | None]:
            with Store(db_path) as store:
                return {p.question: p.promoted for p in store.probes.of_session(session_id)}

        await wait_for_workers(pilot)
        assert promoted().get(own) is None  # opened only
        # "part" kept as typed (no WordNet tag to look up), then saved: now it is promoted.
        editor.query_one("#template-words", SelectionList).deselect("part")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: promoted().get(own) == "template", what="the mark")
