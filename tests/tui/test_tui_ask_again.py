"""Curating with evidence in the explorer: the Templates tab (per template and per varied
word, worst first, sortable), asking again what changed after editing a template (the model
calls counted over HTTP, the delta read on the live screen and on the Templates tab), the
synonym editor opening at once on the selected relation, and a probe promoted only when
its template is saved."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from textual.widgets import Select

import kontest_tui.run.api as run_api
from kontest_tui.kg.io import load_graph
from kontest_tui.models.sim.server import SimServer
from kontest_tui.models.specs import open_model
from kontest_tui.report.evidence import evidence_cells, sort_rows
from kontest_tui.run.api import SessionSpec, ensure_report, session_delta, start_session
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens import curation
from kontest_tui.tui.screens.curation import SynonymEditorScreen, TemplateEditorScreen
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.widgets.paged_table import PagedTable
from kontest_tui.tui.widgets.templates_pane import TemplatesPane
from tests.support.tui import TEN_RELATIONS, top_screen, wait_for_screen, wait_until, widget_text

# t1 without its article: its words are tagged already, so saving it reads no WordNet
NEW_T1 = "Does {parent} have {child}?"


async def open_results(pilot, app, session_id: str) -> ResultsScreen:  # noqa: ANN001
    app.open_results(session_id)
    results = await wait_for_screen(pilot, ResultsScreen)
    await wait_until(pilot, lambda: results.ready, what="the results")
    return results


def table_rows(table: PagedTable) -> list[tuple[str, ...]]:
    rows = [table.row(index) for index in range(table.row_count)]
    return [tuple(str(cell) for cell in row) for row in rows if row is not None]


async def test_edit_a_template_ask_again_and_read_the_delta(tmp_path: Path) -> None:
    """Ten relations asked through the simulated model's HTTP server; t1 edited in the
    template editor and asked again with ctrl+g: 3 calls a relation (Q1 and A's first turn
    are one request, A's second turn follows it, B's second turn is it), 30 in all."""
    db = str(tmp_path / "s.db")
    server = SimServer(kg=load_graph(TEN_RELATIONS))
    url = await server.start()
    model = f"ollama:default@{url}"
    try:
        with Store(db) as store:
            parent = (
                await start_session(store, SessionSpec(TEN_RELATIONS, model=model), stream=False)
            ).session_id
        checks = server.requests
        probe = open_model(model)
        await probe.check()
        await probe.aclose()
        per_check = server.requests - checks
        app = make_app(db=db)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            results = await open_results(pilot, app, parent)
            await pilot.press("e")
            editor = await wait_for_screen(pilot, TemplateEditorScreen)
            await wait_until(pilot, lambda: editor.ready, what="the editor")
            editor.query_one("#template-choice", Select).value = "t1"
            await wait_until(pilot, lambda: editor.form.editing is not None, what="t1 chosen")
            editor.query_one("#template-text").value = NEW_T1  # type: ignore[attr-defined]
            await pilot.pause()
            before = server.requests
            await pilot.press("ctrl+g")  # saves the edit, then asks again
            live = await wait_for_screen(pilot, LiveRunScreen)
            await wait_until(pilot, lambda: live.end is not None, what="the run", timeout=60)
            calls = server.requests - before - per_check
            assert live.end is not None and live.end.delta is not None
            child = live.end.session_id
            shown = widget_text(live.query_one("#finished-log"))
            with Store(db) as store:
                delta = session_delta(store, child).to_json()
                report = ensure_report(store, child).report
            assert calls == delta["calls"] == 30
            assert delta["before"] == parent and delta["reused"] == 20 and delta["asked"] == 40
            errors = delta["errors"]
            assert (
                f"Session {child} asked again from {parent}: 20 answers reused, 40 asked, 30 "
                "model calls" in shown.replace("\n", " ")
            )
            assert (
                f"Errors: {errors['before']} before, {errors['after']} after: {errors['gone']} "
                f"gone, {errors['new']} new, {errors['kept']} kept" in shown
            )
            # enter: the results of the new session, on the Templates tab, the delta on top
            # and each template's evidence from the stored report.
            await pilot.press("enter")
            await wait_until(
                pilot,
                lambda: isinstance(app.screen, ResultsScreen) and app.screen is not results,
                what="the new session's results",
            )
            results = top_screen(app, ResultsScreen)
            assert results.session_id == child
            pane = results.query_one(TemplatesPane)
            await wait_until(pilot, lambda: pane.delta_read, what="the delta on the tab")
            assert results.query_one("#result-tabs").active == "tab-templates"  # type: ignore[attr-defined]
            assert f"asked again from {parent}" in widget_text(pane.query_one("#evidence-delta"))
            section = report["curation"]
            texts = {"t1": NEW_T1, "t2": "Is {child} in {parent}?"}
            await wait_until(
                pilot,
                lambda: len(table_rows(pane.query_one("#evidence-templates", PagedTable))) == 2,
                what="the template rows",
            )
            assert table_rows(pane.query_one("#evidence-templates", PagedTable)) == [
                evidence_cells(row, texts) for row in section["templates"]
            ]
    finally:
        await server.close()


async def test_templates_tab_sorts_and_the_synonym_editor_opens_on_the_selected_relation(
    db_path: str, monkeypatch
) -> None:  # noqa: ANN001
    """A session with covering-array variants: the Templates tab lists the stored report's
    rows worst first and sorts them on request. Then from the graph with County Cavan
    selected, ctrl+y: the synonym editor is drawn (its footer too) and says it is making
    the variants while they are made (held here, as WordNet's first read holds them); then
    they are Cavan's question's."""
    from kontest_tui.cli import run_cli

    args = ["--db", db_path, "run", "--kg", TEN_RELATIONS, "--model", "sim:forgetful", "-q"]
    args += ["--kind", "kontest,variant", "--variant-limit", "3"]
    assert await asyncio.to_thread(run_cli, args) == 0
    with Store(db_path) as store:
        (session_id,) = store.sessions.ids()
        section = ensure_report(store, session_id).report["curation"]
    assert len(section["words"]) > 2
    release = threading.Event()
    made = run_api.preview_variants  # what the curation screen calls

    def held_preview(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        release.wait(30)
        return made(*args, **kwargs)

    monkeypatch.setattr(curation, "preview_variants", held_preview)
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        results = await open_results(pilot, app, session_id)
        await pilot.press("v")
        await wait_until(pilot, lambda: "tab-templates" in results.built_panes, what="the tab")
        pane = results.query_one(TemplatesPane)
        words = pane.query_one("#evidence-words", PagedTable)
        await wait_until(
            pilot, lambda: len(table_rows(words)) == len(section["words"]), what="the words"
        )
        assert table_rows(words) == [evidence_cells(row) for row in section["words"]]
        troubles = [row["invalid"] + row["errors"] for row in section["words"]]
        assert troubles == sorted(troubles, reverse=True)  # the worst first
        pane.query_one("#evidence-order", Select).value = "name"
        by_name = sort_rows(section["words"], "name")
        await wait_until(
            pilot,
            lambda: table_rows(words) == [evidence_cells(row) for row in by_name],
            what="the words by name",
        )
        assert [row[0] for row in table_rows(words)] == sorted(row[0] for row in table_rows(words))

        results.action_show_tab("tab-graph")
        results.select_way(("ireland", "ireland.ulster", "ireland.ulster.county-cavan"))
        await wait_until(pilot, lambda: bool(results.shown_details), what="Cavan selected")
        assert results.selected_relation_id == "ireland.ulster>ireland.ulster.county-cavan"
        await pilot.press("ctrl+y")
        editor = await wait_for_screen(pilot, SynonymEditorScreen)
        await wait_until(pilot, lambda: editor.ready, what="the session read")
        status = editor.query_one("#synonym-status")
        assert "making the variants of the question about Ulster and County Cavan" in (
            widget_text(status)
        )
        assert editor.query("Footer") and not editor.previewed
        release.set()
        await wait_until(pilot, lambda: editor.previewed, what="the variants", timeout=60)
        assert "Does Ulster contain County Cavan?" in widget_text(status)
        assert "array size" in widget_text(status)
