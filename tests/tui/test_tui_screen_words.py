"""What the explorer's screens say where a reader had to guess: the Graph tab's transcripts
name a relation by its nodes (no raw id), two nodes of one label read apart ("Garnich
(locality in Garnich)"), the Errors tab's Status column has a mark on every row and a line
saying what its words mean, and the live counters wrap between items at 80 and 100
columns."""

from __future__ import annotations

import asyncio

import pytest

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.counts import ReportCounts
from kontest_tui.tui.widgets.paged_table import PagedTable
from tests.support.sessions import store_sessions
from tests.support.tui import (
    TEN_RELATIONS,
    cancel_run,
    paged_rows,
    wait_for_screen,
    wait_until,
    widget_text,
)

# Garnich the locality, in Garnich the commune, in the Canton of Capellen (places sample).
VILLAGE_WAY = (
    "luxembourg",
    "luxembourg.canton-of-capellen",
    "luxembourg.canton-of-capellen.garnich",
    "luxembourg.canton-of-capellen.garnich.garnich",
)


async def open_results(pilot, app, session_id: str) -> ResultsScreen:  # noqa: ANN001
    await pilot.pause()
    app.open_results(session_id)
    results = await wait_for_screen(pilot, ResultsScreen)
    await wait_until(pilot, lambda: results.ready, what="the results")
    return results


async def test_transcripts_and_errors_speak_words(db_path: str) -> None:
    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)])
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        results = await open_results(pilot, app, session_id)
        results.select_way(VILLAGE_WAY)
        detail = results.query_one("#detail-text")
        await wait_until(pilot, lambda: "Transcripts" in widget_text(detail), what="transcripts")
        text = widget_text(detail)
        transcripts = text.split("Transcripts", 1)[1]
        # The relation into the village by its nodes' names, the village told apart from
        # the commune by what it is, not by a parenthesis repeating its own name.
        assert "Garnich (in Canton of Capellen) ⊃ Garnich (locality in Garnich)" in transcripts
        assert "(in Garnich)" not in text
        # No relation id (`parent>child` of dotted node ids, one unbreakable word).
        assert "luxembourg." not in text

        await pilot.press("x")
        table = results.query_one("#error-table", PagedTable)
        await wait_until(pilot, lambda: table.row_count > 0, what="the errors")
        rows = await paged_rows(pilot, table)
        statuses = [str(row[5]) for row in rows]
        # Nothing was asked again: every row says so with the hint's mark, or is weak; none
        # is blank and none wider than "weak" (Detail stays on an 80-column screen).
        assert statuses and all(status in ("–", "weak") for status in statuses), statuses
        hint = widget_text(results.query_one("#error-status-hint"))
        assert "– not asked again yet" in hint
        assert "weak: each answer compared was near a coin toss" in hint
        assert "r asks: confirmed" in hint


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_live_counters_wrap_between_items(db_path: str, size: tuple[int, int]) -> None:
    app = make_app(kg=TEN_RELATIONS, model="sim:slow", db=db_path)
    async with app.run_test(size=size) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        run = await wait_for_screen(pilot, LiveRunScreen)
        box = run.query_one("#run-counts", ReportCounts)
        await wait_until(pilot, lambda: "at the end" in widget_text(box), what="the counters")
        await pilot.press("p")
        await wait_until(pilot, lambda: run.control.paused, what="the pause")
        lines = widget_text(box).splitlines()
        width = box.content_size.width
        # Each line fits the box (nothing left to the terminal to break mid-phrase) and
        # each item is whole on one line.
        assert all(len(line) <= width for line in lines), (width, lines)
        assert any(line.endswith("implied facts and other kinds: at the end") for line in lines)
        assert any(line.startswith("two phrasings alone ") for line in lines)
        assert any("after its paraphrase " in line for line in lines)
        for line in lines:
            assert not line.endswith(("alone", "conversation", "paraphrase", "and")), lines
        await cancel_run(pilot, run)
        await wait_until(pilot, lambda: run.end is not None, what="the cancelled run's end")
