"""Names from a KG file are text, never Textual markup: a KG named `[/]` (its source, ids and
types too) goes through the wizard, a run, the results and the start screen's session list
without a crash, shown as typed."""

from __future__ import annotations

import json
from pathlib import Path

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.start import StartScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import wait_for_screen, wait_for_workers, wait_until

MARKUP = "[/]"


def write_markup_kg(tmp_path: Path) -> Path:
    kg = {
        "name": MARKUP,
        "domain": "places",
        "source": "[b]source[/b] [/]",
        "built": "[/i]",
        "nodes": [
            {"id": "[/]Q27", "label": "Ireland [/]", "aliases": ["[red]"], "type": "country"},
            {"id": "Q1[/]", "label": "[@click=quit]Ulster", "aliases": [], "type": "[/]"},
            {"id": "Q2", "label": "Kinawley", "aliases": [], "type": "locality"},
        ],
        "edges": [
            {"parent": "[/]Q27", "child": "Q1[/]", "relation": "[/]"},
            {"parent": "Q1[/]", "child": "Q2", "relation": "contains"},
        ],
    }
    path = tmp_path / "markup.json"
    path.write_text(json.dumps(kg), encoding="utf-8")
    return path


async def test_a_kg_named_markup_runs_and_is_listed(tmp_path: Path, db_path: str) -> None:
    failures: list[str] = []
    app = make_app(kg=str(write_markup_kg(tmp_path)), model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        app.notify = lambda message, *a, **k: failures.append(str(message))  # type: ignore[method-assign]
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kg is not None, what="the graph")
        await wait_for_workers(pilot)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        await wait_until(pilot, lambda: results.ready, what="the results")
        for key in ("down", "down", "x", "escape"):
            await pilot.press(key)
            await wait_for_workers(pilot)
        app.action_go_home()
        start = await wait_for_screen(pilot, StartScreen)
        await wait_for_workers(pilot)
        await pilot.pause()
        assert app.is_running and app.return_code is None
        shown = " ".join(str(widget.render()) for widget in start.query("*"))
        assert failures == [] or not any("markup" in f.lower() for f in failures), failures
        assert app.screen is start and shown
