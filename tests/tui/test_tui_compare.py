"""Compare and Ensemble tabs over stored sessions: sessions made beforehand by the engine
(run.session with simulated profiles on the first relations of places), then opened in the
explorer; what the tabs show must equal the engine's own figures."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from textual.widgets import OptionList, Select, SelectionList

from kontest_tui.mitigate.ensemble import cross_validate
from kontest_tui.report.compare import compare_sessions
from kontest_tui.report.render import render_ensemble
from kontest_tui.report.words import oracle_name
from kontest_tui.results.evaluate import evaluate_session, session_graph
from kontest_tui.store import Store
from kontest_tui.tui import sessions as tui_sessions
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.sessions import find_comparable_sessions, read_session
from kontest_tui.tui.widgets.counts import report_oracles
from tests.support import sessions as support_sessions
from tests.support.tui import wait_until, widget_text

LIMIT = 40  # relations per session: enough for differing answers, quick to run


def store_sessions(
    db: str, specs: list[str], kg_name: str = "places", limit: int = LIMIT
) -> list[str]:
    """Run each simulated model on the first `limit` relations of a sample, stored in `db`."""
    return support_sessions.store_sessions(db, [(spec, limit) for spec in specs], kg_name)


async def open_session(pilot, session_id: str) -> ResultsScreen:
    app = pilot.app
    app.open_stored_session(session_id)
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, ResultsScreen)
            and app.screen.ready
            and app.screen.session_id == session_id
        ),
        what="the stored session's results",
    )
    return app.screen


def cell(report: Mapping[str, Any], name: str) -> str:
    """The figure the compare table shows for `name`, read from the engine's report."""
    errors, tests = report["errors"], report["tests"]
    if name in tests or name in errors:
        return f"{errors.get(name, 0)}/{tests.get(name, 0)}"
    raise KeyError(name)


@pytest.fixture
def no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare and Ensemble read stored reports and answers (never whole sessions through
    load_session, which evaluates them again): loading one fails the test."""

    def loaded(*args: object, **kwargs: object) -> None:
        raise AssertionError("a whole session was loaded")

    monkeypatch.setattr(tui_sessions, "load_session", loaded)


@pytest.fixture
def stored(db_path: str) -> list[str]:
    """Three stored sessions on places: sim, sim:forgetful, sim:careful (oldest first), and
    one on music, which must not be offered."""
    ids = store_sessions(db_path, ["sim", "sim:forgetful", "sim:careful"])
    store_sessions(db_path, ["sim"], kg_name="music", limit=10)
    return ids


@pytest.mark.usefixtures("no_loading")
async def test_compare_with_a_stored_session_shows_the_engines_figures(
    db_path: str, stored: list[str]
) -> None:
    first, forgetful, careful = stored
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        results = await open_session(pilot, first)
        await pilot.press("c")
        select = results.query_one("#compare-select", Select)
        # Newest first; the session on music and this one are not offered (the blank line,
        # then careful, then forgetful: walked with the keyboard below).
        offered = select.query_one(OptionList)
        await wait_until(pilot, lambda: offered.option_count == 3, what="the stored sessions")
        note = widget_text(results.query_one("#compare-note"))
        assert "2 stored sessions on places" in note
        assert "1 session on other KGs (music)" in note
        assert select.value == careful
        assert app.focused is select

        # Choose the forgetful one with the keyboard.
        await pilot.press("enter", "down", "enter")
        assert select.value == forgetful
        view = results.query_one("#compare-view")
        await wait_until(
            pilot,
            lambda: (
                "Atomic answers differ" in widget_text(view) and "forgetful" in widget_text(view)
            ),
            what="the comparison",
        )
        shown = widget_text(view)
        with Store(db_path) as store:
            mine = evaluate_session(store, first)
            theirs = evaluate_session(store, forgetful)
        left, right = mine.to_json(), theirs.to_json()
        lines = shown.splitlines()

        def row(name: str) -> str:
            return next(line for line in lines if line.startswith(f"{name} "))

        for oracle in report_oracles(left):
            cells = row(oracle_name(oracle))[len(oracle_name(oracle)) :].split()
            assert cells == [cell(left, oracle), cell(right, oracle)], oracle
        assert row("total errors").split()[2:] == [
            str(left["errors"]["total"]),
            str(right["errors"]["total"]),
        ]
        for template_id in left["gap"]["per_template"]:
            shown_gap = row(f"gap {template_id}")
            for report in (left, right):
                figures = report["gap"]["per_template"][template_id]
                assert f"{figures['missing']} ({figures['pct']:.1f}%)" in shown_gap

        # The differing relations are exactly those whose atomic answers differ.
        a, b = mine.atomic_answers(), theirs.atomic_answers()
        differing = {
            relation_id
            for (relation_id, template_id), answer in a.items()
            if answer is not None
            and b.get((relation_id, template_id)) is not None
            and b[(relation_id, template_id)] != answer
        }
        assert differing, "the two profiles should disagree somewhere on 40 relations"
        assert f"Atomic answers differ on {len(differing)} of {LIMIT} shared relations" in shown
        with Store(db_path) as store:
            kg = session_graph(store, first)
        labels = [kg.label(node) for node in kg.nodes]

        def name(node: str) -> str:
            """A node's label; two nodes of one label are told apart by their parents (and
            by the node's type under a parent of the same label)."""
            label = kg.label(node)
            if labels.count(label) == 1:
                return label
            parent = kg.label(kg.parents(node)[0])
            if parent == label:
                return f"{label} ({kg.nodes[node].type} in {parent})"
            return f"{label} (in {parent})"

        for relation_id in differing:
            relation = mine.relation(relation_id)
            assert relation is not None
            assert f"{name(relation.parent)} ⊃ {name(relation.child)}" in shown


async def test_compare_at_80x24_and_without_other_sessions(db_path: str) -> None:
    (only,) = await asyncio.to_thread(store_sessions, db_path, ["sim"], "places", 10)
    await asyncio.to_thread(store_sessions, db_path, ["sim"], "music", 5)
    app = make_app(db=db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        results = await open_session(pilot, only)
        await pilot.press("c")
        note = results.query_one("#compare-note")
        await wait_until(pilot, lambda: "No other stored session" in widget_text(note))
        assert "on other KGs (music)" in widget_text(note)
        await pilot.press("m")
        ensemble_note = results.query_one("#ensemble-note")
        await wait_until(pilot, lambda: "needs two or more sessions" in widget_text(ensemble_note))
        assert widget_text(results.query_one("#ensemble-view")) == (
            "The ensemble needs two or more ticked sessions."
        )


@pytest.mark.usefixtures("no_loading")
async def test_ensemble_over_stored_sessions_equals_render_ensemble(
    db_path: str, stored: list[str]
) -> None:
    first, forgetful, careful = stored
    app = make_app(db=db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        results = await open_session(pilot, first)
        await pilot.press("m")
        choices = results.query_one("#ensemble-select", SelectionList)
        view = results.query_one("#ensemble-view")
        await wait_until(pilot, lambda: choices.option_count == 3, what="the stored sessions")
        assert app.focused is choices
        # This session and both others ticked: the ensemble of all three, in list order, with
        # its spread over 8 fold splits (as `kontest ensemble` prints it).
        await wait_until(pilot, lambda: widget_text(view).startswith("Ensemble of 3"))
        with Store(db_path) as store:
            evaluations = {sid: evaluate_session(store, sid) for sid in stored}
        expected = render_ensemble(
            cross_validate(
                [evaluations[first], evaluations[careful], evaluations[forgetful]], k=5, splits=8
            ),
            "text",
        )
        assert widget_text(view) == expected

        # Untick the last one (forgetful) with the keyboard: the ensemble of two follows.
        await pilot.press("end", "space")
        await wait_until(pilot, lambda: widget_text(view).startswith("Ensemble of 2"))
        expected = render_ensemble(
            cross_validate([evaluations[first], evaluations[careful]], k=5, splits=8), "text"
        )
        assert widget_text(view) == expected

        # One ticked: a clear message, no ensemble.
        await pilot.press("home", "space")
        await wait_until(pilot, lambda: "two or more ticked" in widget_text(view))


def test_sessions_on_part_of_the_relations_are_offered_with_the_overlap(db_path: str) -> None:
    full, part = (
        store_sessions(db_path, ["sim"], limit=LIMIT)[0],
        store_sessions(db_path, ["sim:careful"], limit=LIMIT // 2)[0],
    )
    (other,) = store_sessions(db_path, ["sim"], kg_name="music", limit=5)
    mine = read_session(db_path, full)
    found = find_comparable_sessions(db_path, ["places"], full)
    assert [choice.id for choice in found.offered] == [part]
    (choice,) = found.offered
    assert (choice.shared, choice.relations) == (LIMIT // 2, LIMIT // 2)
    assert choice.describe(LIMIT).endswith(f"{LIMIT // 2}/{LIMIT} relations shared")
    assert found.left_out == [
        "1 session on other KGs (music): their answers are about other relations"
    ]
    assert other not in {choice.id for choice in found.offered}

    comparison = compare_sessions(mine, read_session(db_path, part))
    assert comparison.shared == LIMIT // 2
    assert comparison.left == mine.evaluation.to_json()


async def test_ensemble_does_not_tick_a_session_of_another_scope(db_path: str) -> None:
    """A session that asked only part of the relations (which Compare refuses) is offered
    unticked; the same-scope one starts ticked with this session."""
    full, same = await asyncio.to_thread(store_sessions, db_path, ["sim", "sim:careful"])
    (part,) = await asyncio.to_thread(store_sessions, db_path, ["sim:forgetful"], "places", 12)
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        results = await open_session(pilot, full)
        await pilot.press("m")
        await wait_until(pilot, lambda: bool(results.query("#ensemble-select")), what="tab")
        choices = results.query_one("#ensemble-select", SelectionList)
        await wait_until(pilot, lambda: choices.option_count == 3, what="the stored sessions")
        assert set(choices.selected) == {"this", same}
        assert part not in choices.selected
        view = results.query_one("#ensemble-view")
        await wait_until(pilot, lambda: widget_text(view).startswith("Ensemble of 2"))
