"""Verdicts from memory at the end of a run, stored once; `kontest report` reads them back.

A store that keeps up: the run's evaluation is computed from the answers it
holds (not by reloading the session) and must equal a re-evaluation of the stored answers;
the stored report must render exactly as a re-evaluated one, on a fresh and on a resumed
session; a stale stored report (other engine, answers changed since) is never used.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import TestKind
from kontest_tui.generate.sample import SampleSpec
from kontest_tui.kg.io import load_graph
from kontest_tui.report.explain_store import render_named_report
from kontest_tui.report.render import FORMATS, render_report
from kontest_tui.results.evaluate import evaluate_session, evaluation_engine
from kontest_tui.results.reports import refresh_report, session_report
from kontest_tui.run.api import SessionSpec, resume_session, start_session
from kontest_tui.store import Store

ALL_KINDS = tuple(kind for kind in TestKind if kind is not TestKind.ANNOTATION)


@pytest.fixture
def store(tmp_path: Path):  # noqa: ANN201
    opened = Store(tmp_path / "s.db")
    yield opened
    opened.close()


def sim_spec(**changes: object) -> SessionSpec:
    settings: dict[str, object] = {"model": "sim:forgetful", "limit": 12, "kinds": ALL_KINDS}
    return SessionSpec(load_graph("places"), **{**settings, **changes})  # type: ignore[arg-type]


def renders(report: object) -> list[str]:
    return [render_report(report, fmt) for fmt in FORMATS]  # type: ignore[arg-type]


def assert_stored_equals_fresh(store: Store, session_id: str) -> None:
    fresh = evaluate_session(store, session_id)
    stored = store.reports.read(session_id, engine=evaluation_engine())
    assert stored is not None, "the run stored no (fresh) report"
    assert renders(stored) == renders(fresh)
    assert stored.total_errors == sum(1 for v in fresh.verdicts if v.error) > 0
    assert store.verdicts.load(session_id) == fresh.verdicts


@pytest.mark.parametrize("sampled", [False, True])
def test_a_run_evaluates_from_memory_and_stores_the_report_once(
    store: Store, sampled: bool
) -> None:
    spec = sim_spec(limit=None, sample=SampleSpec(count=12, seed=2)) if sampled else sim_spec()
    outcome = asyncio.run(start_session(store, spec))
    assert ("sample" in outcome.evaluation.to_json()) is sampled
    fresh = evaluate_session(store, outcome.session_id)
    assert outcome.evaluation.to_json() == fresh.to_json()
    assert outcome.evaluation.verdicts == fresh.verdicts
    assert_stored_equals_fresh(store, outcome.session_id)


def test_a_resumed_run_evaluates_stored_and_new_answers(store: Store) -> None:
    first = asyncio.run(start_session(store, sim_spec()))
    session_id = first.session_id
    with store.transaction() as conn:  # a run killed after a third of its answers
        conn.execute("DELETE FROM responses WHERE session = ? AND id % 3 != 0", (session_id,))
        conn.execute("UPDATE sessions SET status = 'cancelled' WHERE id = ?", (session_id,))
    assert store.reports.read(session_id, engine=evaluation_engine()) is None  # stale now
    resumed = asyncio.run(resume_session(store, session_id))
    assert resumed.result.progress.skipped > 0 and resumed.result.progress.done > 0
    # the same answers (the simulated model is seeded); which ones were reused differs
    mine, theirs = resumed.evaluation.to_json(), first.evaluation.to_json()
    del mine["answers_from_cache"], theirs["answers_from_cache"]
    assert mine == theirs
    assert resumed.evaluation.to_json() == evaluate_session(store, session_id).to_json()
    assert_stored_equals_fresh(store, session_id)


def test_a_stale_report_is_evaluated_again(store: Store) -> None:
    outcome = asyncio.run(start_session(store, sim_spec(kinds=(TestKind.KONTEST,))))
    session_id = outcome.session_id
    engine = evaluation_engine()
    assert store.reports.read(session_id, engine=engine) is not None
    assert store.reports.read(session_id, engine="other code") is None
    # an answer changed after the verdicts (same count of rows, a newer one)
    with store.transaction() as conn:
        row = conn.execute(
            "SELECT id, answer FROM responses WHERE session = ? AND answer = 'yes' LIMIT 1",
            (session_id,),
        ).fetchone()
        conn.execute("DELETE FROM responses WHERE id = ?", (row[0],))
    assert store.reports.read(session_id, engine=engine) is None  # a row less
    reference = evaluate_session(store, session_id)
    report = session_report(store, session_id)
    assert renders(report) == renders(reference)
    assert store.reports.read(session_id, engine=engine) is None  # reading never writes
    assert renders(refresh_report(store, session_id)) == renders(reference)
    assert store.reports.read(session_id, engine=engine) is not None  # the refresh stored it
    for edit in (  # rows changed in place (a trigger drops the report) or deleted
        "UPDATE responses SET answer = 'no' WHERE id = (SELECT MAX(id) FROM responses)",
        "UPDATE conversations SET label = 'x' WHERE pk = 1",
        "UPDATE sessions SET model = 'other'",
        "DELETE FROM verdicts WHERE id = (SELECT MAX(id) FROM verdicts)",
    ):
        refresh_report(store, session_id)
        assert store.reports.read(session_id, engine=engine) is not None
        with store.transaction() as conn:
            conn.execute(edit)
        assert store.reports.read(session_id, engine=engine) is None, edit


def test_kontest_report_reads_stored_verdicts_unless_asked(store: Store, capsys) -> None:  # noqa: ANN001
    outcome = asyncio.run(start_session(store, sim_spec()))
    db = str(store.path)
    outputs = {}
    for flags in ((), ("--re-evaluate",)):
        capsys.readouterr()
        assert run_cli(["report", outcome.session_id, "--db", db, *flags]) == 0
        outputs[flags] = capsys.readouterr().out
    named = render_named_report(store, outcome.session_id, outcome.evaluation)
    assert outputs[()] == outputs[("--re-evaluate",)] == named
    assert "Errors (" in named and "luxembourg>" not in named  # relations by their labels
    # the stored report is what `report` prints: a hand-edited one shows (no re-evaluation)
    with store.transaction() as conn:
        conn.execute("UPDATE session_reports SET report = json_set(report, '$.relations', 99)")
    capsys.readouterr()
    assert run_cli(["report", "--db", db, "--format", "json"]) == 0
    assert '"relations": 99' in capsys.readouterr().out
    assert run_cli(["report", "--db", db, "--format", "json", "--re-evaluate"]) == 0
    assert '"relations": 12' in capsys.readouterr().out
