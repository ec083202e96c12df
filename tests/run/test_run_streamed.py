"""A run streamed in chunks of relations (run.session: how a million relations fit)
stores the same verdicts and report as a run of the whole session, fresh and resumed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kontest_tui.domain.records import Verdict
from kontest_tui.kg.io import load_graph
from kontest_tui.models.specs import open_model
from kontest_tui.results.evaluate import evaluate_session, evaluation_engine
from kontest_tui.run.api import SessionSpec, create_session
from kontest_tui.run.session import run_session
from kontest_tui.store import Store


def run(
    db: Path,
    chunk: int | None,
    *,
    per_path: bool = False,
    limit: int | None = 60,
    model: str = "sim:forgetful",
) -> tuple[list[Verdict], dict[str, object], dict[str, object]]:
    """(stored verdicts, stored report, the outcome's report) of a places session."""
    kg = load_graph("places")
    with Store(db) as store:
        session = create_session(
            store, SessionSpec(kg, model=model, seed=3, limit=limit, per_path=per_path)
        )
        outcome = asyncio.run(
            run_session(store, session, open_model(model, kg=kg, seed=3), chunk=chunk)
        )
        assert outcome.evaluation.streamed is (chunk is not None)
        stored = store.reports.read(session, engine=evaluation_engine())
        assert stored is not None
        report = {**stored.report, "session": None}
        verdicts = store.verdicts.load(session)
        fresh = evaluate_session(store, session)
        assert verdicts == fresh.verdicts
        assert report == {**fresh.to_json(), "session": None}
        return verdicts, report, {**outcome.evaluation.to_json(), "session": None}


@pytest.mark.parametrize("per_path", [False, True])
def test_a_run_in_chunks_of_three_relations_stores_what_a_whole_run_does(
    tmp_path: Path, per_path: bool
) -> None:
    whole = run(tmp_path / "whole.db", None, per_path=per_path)
    chunked = run(tmp_path / "chunked.db", 3, per_path=per_path)
    if per_path:  # one question on several paths: a repeat in a later chunk is asked again
        for report in (*whole[1:], *chunked[1:]):
            report.pop("answers_from_cache")
    assert chunked == whole
    errors = {v.oracle for v in whole[0] if v.error}
    assert len(errors) >= 3


def test_a_whole_places_session_in_chunks(tmp_path: Path) -> None:
    whole = run(tmp_path / "w.db", None, limit=None)
    assert run(tmp_path / "c.db", 50, limit=None) == whole
    assert any(v.error and v.oracle == "ontological" for v in whole[0])


def test_a_resumed_streamed_run_stores_what_a_whole_run_does(tmp_path: Path) -> None:
    kg = load_graph("places")
    with Store(tmp_path / "r.db") as store:
        session = create_session(store, SessionSpec(kg, model="sim:forgetful", seed=3, limit=40))
        model = open_model("sim:forgetful", kg=kg, seed=3)

        def stop_half_way(executor: object) -> None:
            original = executor.sink.save_response  # type: ignore[attr-defined]
            seen = [0]

            def save(response: object, *, cached: bool = False) -> None:
                original(response, cached=cached)
                seen[0] += 1
                if seen[0] == 70:
                    executor.cancel()  # type: ignore[attr-defined]

            executor.sink.save_response = save  # type: ignore[attr-defined]

        first = asyncio.run(run_session(store, session, model, chunk=4, on_executor=stop_half_way))
        assert first.status == "cancelled"
        assert store.reports.read(session, engine=evaluation_engine()) is not None
        assert store.verdicts.load(session) == evaluate_session(store, session).verdicts
        second = asyncio.run(run_session(store, session, model, chunk=4))
        assert second.status == "done"
        resumed = store.verdicts.load(session)
        report = store.reports.read(session, engine=evaluation_engine())
        assert report is not None
    assert (resumed, {**report.report, "session": None})[0] == run(
        tmp_path / "w.db", None, limit=40
    )[0]


def test_stream_false_keeps_the_verdict_list_of_a_session_above_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The explorer runs with stream=False: a session big enough to stream by default is
    run whole, so the results screen gets every verdict; the stored ones are the same."""
    from kontest_tui.run import session as session_module

    monkeypatch.setattr(session_module, "STREAM_ABOVE", 10)
    kg = load_graph("places")
    outcomes = {}
    for stream in (True, False):
        with Store(tmp_path / f"{stream}.db") as store:
            session = create_session(
                store, SessionSpec(kg, model="sim:forgetful", seed=3, limit=30)
            )
            outcome = asyncio.run(
                run_session(
                    store, session, open_model("sim:forgetful", kg=kg, seed=3), stream=stream
                )
            )
            outcomes[stream] = (outcome.evaluation, store.verdicts.load(session))
    streamed, whole = outcomes[True], outcomes[False]
    assert streamed[0].streamed and not streamed[0].verdicts
    assert not whole[0].streamed
    assert whole[0].verdicts == whole[1] == streamed[1]
    assert any(verdict.error for verdict in whole[0].verdicts)
