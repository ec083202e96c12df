"""The results header of a session without KONTEST questions shows the questions its kinds
asked, not KONTEST's executions and validity, which are 0 (a logic-only session would show
`executions 0 · valid 0` above its hallucination rate)."""

from __future__ import annotations

import asyncio
from typing import cast

from kontest_tui.domain.records import TestKind
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.results.evaluate import evaluate_session
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.widgets.counts import render_counts
from tests.support.sessions import store_sessions
from tests.support.tui import wait_until, widget_text


def test_a_report_without_kontest_counts_its_kinds_questions() -> None:
    report = cast(
        ReportJSON,
        {
            "kinds": ["logic", "factcheck"],
            "relations": 5,
            "executions": 0,
            "valid": 0,
            "invalid": 0,
            "accuracy": {
                "logic": {"asked": 13, "valid": 9, "refusals": 4, "invalid": 0},
                "factcheck": {"asked": 10, "valid": 8, "invalid": 2},
            },
            "headline": {
                "measure": "logic",
                "title": "hallucination rate",
                "rate": 0.0,
                "count": 0,
                "of": 13,
            },
            "tests": {"logic": 9},
            "errors": {"logic": 0},
        },
    )
    first = render_counts(report).plain.splitlines()[0]
    assert first == "relations 5 · questions 23 · valid 17 · I don't know 4 · invalid 2"
    assert "executions" not in render_counts(report).plain


async def test_a_logic_only_session_header(db_path: str) -> None:
    (session_id,) = await asyncio.to_thread(
        store_sessions, db_path, [("sim", 5)], "places", (TestKind.LOGIC,)
    )
    with Store(db_path) as store:
        report = evaluate_session(store, session_id).to_json()
    logic = report["accuracy"]["logic"]
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        app.open_stored_session(session_id)
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, ResultsScreen) and app.screen.ready,
            what="the results",
        )
        shown = widget_text(app.screen.query_one("#result-counts"))
    assert "executions" not in shown
    assert shown.startswith(
        f"relations {report['relations']} · questions {logic['asked']} · valid {logic['valid']}"
    )
    assert "hallucination rate" in shown
