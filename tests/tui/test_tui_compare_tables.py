"""The Compare tab's tables for ticked sessions: the numbers must be those of
`kontest compare --format json` for the same sessions; sessions of another scope are refused
with a notification saying what differs, with both values."""

from __future__ import annotations

import json

import pytest
from textual.widgets import SelectionList

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import TestKind
from kontest_tui.oracles.evaluate import ORACLES
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.widgets.compare_tables import CompareTables
from tests.support import sessions as support_sessions
from tests.support.tui import notifications, wait_until, widget_text

KINDS = (TestKind.KONTEST, TestKind.VARIANT)


def store_sessions(db: str, specs: list[tuple[str, int]]) -> list[str]:
    """Run each (simulated model, relation limit) on music with KONTEST and variant questions."""
    return support_sessions.store_sessions(db, specs, "music", KINDS)


def compare_json(capsys: pytest.CaptureFixture[str], db: str, ids: list[str]) -> dict:
    capsys.readouterr()
    assert run_cli(["compare", *ids, "--db", db, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def stored(db_path: str, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], dict]:
    """Two sessions on the same 6 relations, one on 4 of them (another scope), and the
    compare JSON of the first two."""
    ids = store_sessions(db_path, [("sim", 6), ("sim:forgetful", 6), ("sim:careful", 4)])
    return ids, compare_json(capsys, db_path, ids[:2])


async def test_ticked_sessions_show_the_numbers_of_kontest_compare(
    db_path: str, stored: tuple[list[str], dict]
) -> None:
    (first, forgetful, narrow), expected = stored
    app = make_app(db=db_path)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.open_stored_session(first)
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, ResultsScreen) and app.screen.ready,
            what="the stored session's results",
        )
        results = app.screen
        await pilot.press("c")
        await wait_until(pilot, lambda: bool(results.query(CompareTables)), what="the compare tab")
        tables = results.query_one(CompareTables)
        ticks = tables.query_one("#compare-ticks", SelectionList)
        # This session first, then the stored ones newest first.
        await wait_until(pilot, lambda: ticks.option_count == 3, what="the offered sessions")
        assert [ticks.get_option_at_index(i).value for i in range(3)] == [first, narrow, forgetful]
        assert "Tick two or more" in widget_text(tables.query_one("#compare-tables-note"))

        # Tick this session and the forgetful one with the keyboard.
        ticks.focus()
        await wait_until(pilot, lambda: app.focused is ticks, what="the focus on the ticks")
        await pilot.press("space", "down", "down", "space")
        await wait_until(pilot, lambda: tables.data is not None, what="the comparison")
        assert tables.data is not None
        # The tab's comparison is the engine's: the same JSON as `kontest compare`.
        assert json.loads(json.dumps(tables.data)) == expected
        shown = widget_text(tables.query_one("#compare-tables-view"))
        lines = shown.splitlines()
        # KONTEST errors / tests per oracle: each model's row shows its report's numbers.
        for report in expected["sessions"]:
            row = next(
                line
                for line in lines
                if line.startswith(f"{report['model']} ({report['session']})")
            )
            for oracle in ORACLES:
                assert f"{report['errors'][oracle]}/{report['tests'][oracle]} " in row, oracle
        # The thesis's Table 4: failure rate per covering-array row, each model's count/of.
        block = expected["variant_table"]["oracles"]["variant"]
        start = next(
            i
            for i, line in enumerate(lines)
            if line.startswith("Variant x model, reworded variants")
        )
        for row in [*block["rows"], {"label": "total", "sessions": block["total"]}]:
            line = next(line for line in lines[start:] if line.startswith(f"{row['label']} "))
            cells = [
                f"{row['sessions'][i]['count']}/{row['sessions'][i]['of']}"
                for i in (first, forgetful)
            ]
            assert [part for part in line.split() if "/" in part] == cells, row["label"]

        # Showing the Ensemble tab (which lists the sessions again) keeps the ticks.
        await pilot.press("m")
        await wait_until(
            pilot, lambda: bool(results.query("#ensemble-select")), what="the ensemble tab"
        )
        await pilot.press("c")
        assert tuple(ticks.selected) == (first, forgetful) and tables.data is not None
        ticks.focus()
        await wait_until(pilot, lambda: app.focused is ticks, what="the focus on the ticks")

        # Ticking the session of another scope: refused, the notification says why.
        await pilot.press("up", "space")
        await wait_until(
            pilot,
            lambda: any("other relations" in str(n.message) for n in notifications(app)),
            what="the refusal",
        )
        assert tables.data is None
        note = widget_text(tables.query_one("#compare-tables-note"))
        assert note.startswith("Not compared:") and narrow in note
        # one line per difference, with both values (6 relations asked against 4)
        assert f"relations: 6 relations ({first}, {forgetful}) vs 4 relations ({narrow})" in note
