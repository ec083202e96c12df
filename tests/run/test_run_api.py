"""The session API (run.api): start, resume and load a session, compare two, export one.

Real parts: the simulated and replay models, a SQLite file; the CLI must print the same
report as the API computes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import Answer
from kontest_tui.errors import InvalidInputError, StoreError
from kontest_tui.kg.io import load_graph
from kontest_tui.report.compare import compare_sessions, find_comparable_sessions
from kontest_tui.report.export import EXPORT_COLUMNS, export_session
from kontest_tui.report.render import render_report
from kontest_tui.run.api import SessionSpec, load_session, resume_session, start_session
from kontest_tui.run.executor import ExecutorEvents
from kontest_tui.store.database import Store

DATA = Path(__file__).resolve().parent.parent / "data"
KINAWLEY_KG = DATA / "kinawley_kg.json"
KINAWLEY_REPLAY = DATA / "kinawley_replay.jsonl"


@pytest.fixture
def store(tmp_path: Path):  # noqa: ANN201
    opened = Store(tmp_path / "k.db")
    yield opened
    opened.close()


def kinawley_spec(**changes: object) -> SessionSpec:
    kg = load_graph(str(KINAWLEY_KG))
    changes.setdefault("template_set", "paper")  # the recording's texts
    return SessionSpec(kg, model=f"replay:{KINAWLEY_REPLAY}", **changes)  # type: ignore[arg-type]


def test_start_then_load_gives_the_stored_session(store: Store) -> None:
    created: list[str] = []
    outcome = asyncio.run(start_session(store, kinawley_spec(), on_created=created.append))
    assert created == [outcome.session_id] and outcome.status == "done"
    # the paper's Kinawley example: exactly one ontological error (Ireland > Kinawley)
    assert outcome.evaluation.to_json()["errors"]["ontological"] == 1
    loaded = load_session(store)  # the latest session
    assert loaded.id == outcome.session_id and loaded.status == "done"
    assert loaded.model == f"replay:{KINAWLEY_REPLAY}"
    assert loaded.template_ids == ["t1", "t2"] and loaded.template_set is not None
    assert len(loaded.relations) == 3 and len(loaded.responses) == 3 * 6
    assert loaded.answers[(loaded.conversations[0].id, 0)] in (Answer.YES, Answer.NO)
    assert loaded.evaluation.to_json() == outcome.evaluation.to_json()


def test_the_cli_report_is_the_loaded_sessions(store: Store, capsys) -> None:  # noqa: ANN001
    asyncio.run(start_session(store, kinawley_spec()))
    expected = render_report(load_session(store).evaluation, "json")
    capsys.readouterr()
    assert run_cli(["report", "--db", str(store.path), "--format", "json"]) == 0
    assert capsys.readouterr().out == expected


def test_an_unreachable_model_stores_nothing(store: Store) -> None:
    kg = load_graph(str(KINAWLEY_KG))
    spec = SessionSpec(kg, model="ollama:none@http://127.0.0.1:9")
    with pytest.raises(Exception):  # noqa: B017 - the model client's own error type
        asyncio.run(start_session(store, spec))
    assert list(store.sessions.listing()) == []


def test_resume_asks_only_what_is_missing(store: Store) -> None:
    outcome = asyncio.run(start_session(store, kinawley_spec(limit=1)))
    session_id = outcome.session_id
    # forget two answers, as a killed run would have
    with store.transaction() as conn:
        conn.execute(
            "DELETE FROM responses WHERE id IN (SELECT id FROM responses WHERE session = ? "
            "ORDER BY id DESC LIMIT 2)",
            (session_id,),
        )
        conn.execute("UPDATE sessions SET status = 'cancelled' WHERE id = ?", (session_id,))
    asked: list[str] = []
    events = ExecutorEvents(on_response=lambda response: asked.append(response.conversation_id))
    resumed = asyncio.run(resume_session(store, session_id, events=events))
    assert resumed.status == "done" and len(asked) == 2
    assert resumed.evaluation.to_json() == outcome.evaluation.to_json()
    with pytest.raises(InvalidInputError, match="already done"):
        asyncio.run(resume_session(store, session_id))


def test_load_an_unknown_session_names_the_failure(store: Store) -> None:
    with pytest.raises(StoreError):
        load_session(store, "nope")


def test_compare_two_models_on_one_kg(store: Store) -> None:
    places = load_graph("places")
    first = asyncio.run(start_session(store, SessionSpec(places, model="sim", limit=20)))
    second = asyncio.run(start_session(store, SessionSpec(places, model="sim:forgetful", limit=30)))
    mine, theirs = load_session(store, first.session_id), load_session(store, second.session_id)
    comparison = compare_sessions(mine, theirs)
    assert comparison.shared == 20 and comparison.templates == ["t1", "t2"]
    assert comparison.left == mine.evaluation.to_json()
    for difference in comparison.differences:
        for template_id in difference.differing_templates:
            left, right = difference.answers[template_id]
            assert left != right and None not in (left, right)
    found = find_comparable_sessions(
        store, ["places"], {relation.id for relation in mine.relations}, exclude=mine.id
    )
    assert [choice.id for choice in found.offered] == [theirs.id]
    assert found.offered[0].shared == 20 and found.offered[0].relations == 30


def test_export_rows_are_replay_records(store: Store) -> None:
    outcome = asyncio.run(start_session(store, kinawley_spec()))
    lines = export_session(store, outcome.session_id, "jsonl").splitlines()
    assert len(lines) == 18
    row = json.loads(lines[0])
    assert set(row) == set(EXPORT_COLUMNS) and row["messages"][-1] == row["question"]
    header = export_session(store, None, "csv").splitlines()[0]
    assert header == ",".join(EXPORT_COLUMNS)
