"""Model output is shown literally: Rich markup stays text, escape codes are removed."""

from __future__ import annotations

from pathlib import Path

from kontest_tui.run.api import SessionSpec
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import (
    MARKUP,
    settle,
    wait_for_screen,
    wait_until,
    widget_text,
    write_kinawley,
)


async def test_hostile_answers_appear_literally(tmp_path: Path, db_path: str) -> None:
    kg_path, replay = write_kinawley(tmp_path)
    app = make_app(kg=str(kg_path), model=f"replay:{replay}", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)

        # Ireland (cursor) -> Ulster -> Kinawley: the relations into Kinawley.
        await pilot.press("down", "down")
        await wait_until(
            pilot,
            lambda: "Ireland ⊃ Kinawley" in widget_text(results.query_one("#detail-text")),
            what="Kinawley's detail",
        )
        detail = widget_text(results.query_one("#detail-text"))
        assert MARKUP in detail  # markup shown as typed, not interpreted
        # The paper's example: yes to Ireland > Ulster and Ulster > Kinawley, no to
        # "Is there a Kinawley in Ireland?" (t2) is one ontological error, shown by label.
        assert (
            "✗ implied facts: its yes-answers chain Ireland → Ulster → Kinawley, yet it said "
            "no to “Ireland contains Kinawley”"
        ) in detail

        await pilot.press("up")
        await wait_until(
            pilot,
            lambda: "Kinawley" not in widget_text(results.query_one("#detail-text")).split("\n")[0],
            what="Ulster's detail",
        )
        detail = widget_text(results.query_one("#detail-text"))
        assert "Yes, indeed." in detail  # escape codes removed, the words kept
        assert "pwned" not in detail
        assert "\x1b" not in detail and "\x07" not in detail
        screen = app.export_screenshot()
        assert "pwned" not in screen and "\x1b" not in screen


async def test_hostile_answers_in_the_live_log(tmp_path: Path, db_path: str) -> None:
    kg_path, replay = write_kinawley(tmp_path)
    spec = SessionSpec(str(kg_path), model=f"replay:{replay}")
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        run = LiveRunScreen(spec, auto_results=False)
        await app.push_screen(run)
        await wait_until(pilot, lambda: run.finished, what="the run")
        assert run.failed is None and run.end is not None
        assert run.tally.snapshot().answered == 18  # 3 relations x 6 calls
        await settle(pilot)
        shown = widget_text(run.query_one("#finished-log"))
        joined = "".join(line.strip() for line in shown.splitlines()).replace(" ", "")
        assert MARKUP.replace(" ", "") in joined  # markup shown as typed (lines may wrap)
        assert "Yes,indeed." in joined
        assert "\x1b" not in joined and "pwned" not in joined
