"""Quiet traps, one test each (each failed before its fix): the wizard's search
picking another KG's entity, an ensemble over another scope, the synonym editor on the wrong
relation and blocking the screen, the Variants step saying "Nothing to preview." while it
builds, "KG None" after a failed load, and a run answered to the end left unevaluated when
the explorer closed. (A probe promoted when the editor only opened: test_tui_probe.)"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, SelectionList, TabbedContent

from kontest_tui.errors import KontestError
from kontest_tui.run.api import LiveTally, SessionSpec, evaluation_engine, kontest_per_relation
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.run_control import RunControl, run_live
from kontest_tui.tui.screens import curation
from kontest_tui.tui.screens.curation import SynonymEditorScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.relation_tree import RelationTree
from tests.support.sessions import store_sessions
from tests.support.tui import (
    cursor_node_id,
    notified,
    wait_for_screen,
    wait_until,
    widget_text,
    write_kinawley,
)
from tests.tui.test_tui_scope import choose_entity


async def open_results(pilot, app, session_id: str) -> ResultsScreen:  # noqa: ANN001
    await pilot.pause()
    app.open_results(session_id)
    results = await wait_for_screen(pilot, ResultsScreen)
    await wait_until(pilot, lambda: results.ready, what="the results")
    return results


async def test_search_ranks_the_loaded_kg_first_and_says_when_a_pick_changes_it(
    db_path: str,
) -> None:
    """ "ireland" is in places and in subdivisions: with places loaded its Ireland comes
    first (Down Enter keeps the KG); picking subdivisions' says the KG changes."""
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kg is not None and wizard.kg.name == "places")
        wizard.query_one("#wizard-tabs", TabbedContent).active = "step-graph"
        wizard.query_one("#entity-input", Input).value = "ireland"
        await wait_until(
            pilot, lambda: len(wizard.graph_step.found_entities) > 1, what="the matches"
        )
        sources = [match.source for match in wizard.graph_step.found_entities]
        assert sources[0] == "sample:places" and "sample:subdivisions" in sources
        suggestions = wizard.query_one("#entity-suggestions", OptionList)
        assert str(suggestions.get_option_at_index(0).prompt).endswith("[sample:places]")
        await choose_entity(pilot, wizard, "Ireland", "sample:subdivisions")
        await wait_until(pilot, lambda: wizard.state.source == "subdivisions", what="the KG")
        assert notified(app, "the session now uses that KG instead of places")


async def test_an_ensemble_with_a_session_of_another_scope_is_refused(db_path: str) -> None:
    """Compare refuses a pair of sessions of other scopes; the Ensemble tab ensembled them
    over the relations they share (12 of 265) and said nothing. It refuses them now, with
    the shared count."""
    (full,) = await asyncio.to_thread(store_sessions, db_path, [("sim", None)])
    (part,) = await asyncio.to_thread(store_sessions, db_path, [("sim:forgetful", 12)])
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        results = await open_results(pilot, app, full)
        await pilot.press("m")
        await wait_until(pilot, lambda: bool(results.query("#ensemble-select")), what="tab")
        choices = results.query_one("#ensemble-select", SelectionList)
        await wait_until(pilot, lambda: choices.option_count == 2, what="the sessions")
        assert part not in choices.selected
        choices.select(part)  # ticked by hand
        view = results.query_one("#ensemble-view")
        await wait_until(pilot, lambda: "12/265" in widget_text(view), what="the refusal")
        assert "Ensemble of" not in widget_text(view)
        assert notified(app, "12/265 relations")


async def test_the_synonym_editor_opens_on_the_selected_relation_and_reads_in_a_worker(
    db_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+y from the results showed the session's first relation, not the selected one,
    and made its variants (WordNet: 8-14 s the first time) on the screen's thread, which drew
    nothing meanwhile. Here the making is held until the screen was seen saying what it
    makes (then stopped with an error, so WordNet is not read)."""
    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)])
    with Store(db_path) as store:
        relations = store.relations.load(session_id)
        last = relations[-1]
        way = store.tree.way(session_id, last.child)
    threads: list[threading.Thread] = []
    asked: list[str] = []
    release = threading.Event()

    def held(kg, relation, *_args, **_kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        threads.append(threading.current_thread())
        asked.append(relation.id)
        release.wait(5)
        raise KontestError("not made in this test")

    monkeypatch.setattr(curation, "preview_variants", held)
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        results = await open_results(pilot, app, session_id)
        results.select_way(way)
        await wait_until(
            pilot,
            lambda: cursor_node_id(results.query_one("#relation-tree", RelationTree)) == last.child,
            what="the node selected",
        )
        await wait_until(pilot, lambda: bool(results.shown_details), what="its detail")
        selected = results.selected_relation_id
        assert selected is not None and selected != relations[0].id
        await pilot.press("ctrl+y")
        editor = await wait_for_screen(pilot, SynonymEditorScreen)
        await wait_until(pilot, lambda: bool(asked), what="the variants asked for")
        status = editor.query_one("#synonym-status")
        await wait_until(
            pilot, lambda: "making the variants of" in widget_text(status), what="the line"
        )
        release.set()
        await wait_until(
            pilot, lambda: "not made in this test" in widget_text(status), what="the end"
        )
        assert editor.preview is not None
        assert asked == [selected] and editor.preview.relation.id == selected
        assert threads[0] is not threading.main_thread()


async def test_the_variants_step_says_what_it_is_building(db_path: str) -> None:
    """The arrays are made when the Variants step is shown; until then it said "Nothing to
    preview." for a relation it was about to preview."""
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.state.preview is not None, what="the preview")
        text = widget_text(wizard.query_one("#variant-tables"))
        assert wizard.state.preview is not None
        name = wizard.state.preview.name
        assert text.startswith(f"Making the covering arrays of {name}'s questions"), text
        assert "Nothing to preview" not in text


async def test_a_kg_that_does_not_load_is_named_never_none(tmp_path: Path, db_path: str) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "broken"', encoding="utf-8")
    app = make_app(kg=str(broken), model="sim", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.state.preparation is not None, what="prepared")
        plan = widget_text(wizard.query_one("#plan-summary"))
        assert plan.startswith("KG broken (not loaded), depth all: 0 relations"), plan
        assert "None" not in plan


async def test_a_run_answered_to_the_end_is_evaluated_when_the_explorer_closes(
    tmp_path: Path, db_path: str
) -> None:
    """The explorer closing (abort) right after the last answer cut the run before its
    evaluation: the session was left cancelled, unevaluated. A run with every answer is now
    left to evaluate and store its report (the closing explorer waits for it)."""
    kg_path, _ = write_kinawley(tmp_path)
    control = RunControl()
    aborted_with_all: list[bool] = []

    class ClosingAtTheLastAnswer(LiveTally):
        def add(self, conversation, response) -> None:  # noqa: ANN001
            super().add(conversation, response)
            progress = control.executor.progress if control.executor else None
            if progress is not None and progress.finished == progress.total:
                control.abort()  # the terminal goes now
                aborted_with_all.append(control.finishing)

    spec = SessionSpec(str(kg_path), model="sim")
    end = await asyncio.create_task(
        run_live(spec, ClosingAtTheLastAnswer(kontest_per_relation(2)), control, db=db_path)
    )
    assert aborted_with_all == [True]
    assert end.status == "done" and end.report["relations"] == 3
    with Store(db_path) as store:
        row = store.sessions.get(end.session_id)
        assert row["status"] == "done"
        assert store.reports.read(end.session_id, engine=evaluation_engine()) is not None
    assert not control.finishing  # it ended: the process need not wait any more
