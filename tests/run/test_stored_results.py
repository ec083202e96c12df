"""Results read from the store (results/): the ensemble's and a pair comparison's inputs equal
those of a fresh evaluation, are read without evaluating when the stored report is current,
and reading a stale one never writes; `--seed` vs `--model-seed`; fresh conversations and
their stability test; Table 14's tokens count the calls made."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kontest_tui.results.answers as results_answers
from kontest_tui.cli import run_cli
from kontest_tui.kg.io import load_graph
from kontest_tui.mitigate.ensemble import cross_validate, cross_validate_sessions
from kontest_tui.models.base import ChatOptions
from kontest_tui.models.ollama import build_options
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.report.compare import compare_sessions, compare_stored_sessions
from kontest_tui.report.stored_compare import session_timing
from kontest_tui.results.answers import model_answers_from_evaluation, stored_model_answers
from kontest_tui.results.evaluate import evaluate_session, evaluation_engine
from kontest_tui.run.api import SessionSpec, load_session, start_session
from kontest_tui.store import Store


def run_sim(store: Store, model: str, **spec: object) -> str:
    outcome = asyncio.run(
        start_session(store, SessionSpec(load_graph("places"), model=model, limit=40, **spec))  # type: ignore[arg-type]
    )
    return outcome.session_id


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Store, list[str]]]:
    store = Store(tmp_path / "r.db")
    ids = [run_sim(store, "sim"), run_sim(store, "sim:forgetful")]
    yield store, ids
    store.close()


def no_evaluation(*args: object, **kwargs: object) -> None:
    raise AssertionError("read from the store, not evaluated")


def test_stored_answers_equal_an_evaluation_and_need_none(two, monkeypatch) -> None:  # noqa: ANN001
    store, ids = two
    evaluated = [model_answers_from_evaluation(evaluate_session(store, sid)) for sid in ids]
    monkeypatch.setattr(results_answers, "evaluate_session", no_evaluation)
    stored = [stored_model_answers(store, sid) for sid in ids]
    for left, right in zip(stored, evaluated, strict=True):
        assert left.name == right.name
        assert dict(left.errors) == dict(right.errors)
        assert dict(left.atomic) == dict(right.atomic)
        assert (left.relation_ids, left.templates) == (right.relation_ids, right.templates)
    assert sum(stored[1].errors.values()) > 0 and len(stored[0].atomic) == 80
    assert (
        cross_validate_sessions(store, ids, k=3).to_json()
        == cross_validate(evaluated, k=3).to_json()
    )


def test_a_stale_report_is_evaluated_in_memory_and_left_stale(two, monkeypatch) -> None:  # noqa: ANN001
    store, ids = two
    with store.transaction() as conn:
        conn.execute(
            "UPDATE responses SET answer = 'no' WHERE id = (SELECT MIN(id) FROM responses"
            " WHERE session = ? AND answer = 'yes')",
            (ids[0],),
        )
    assert store.reports.read(ids[0], engine=evaluation_engine()) is None
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Evaluation:
        calls.append(1)
        return evaluate_session(*args, **kwargs)

    monkeypatch.setattr(results_answers, "evaluate_session", counted)
    answers = stored_model_answers(store, ids[0])
    assert calls == [1]
    assert dict(answers.atomic) == dict(
        model_answers_from_evaluation(evaluate_session(store, ids[0])).atomic
    )
    assert store.reports.read(ids[0], engine=evaluation_engine()) is None  # never written


def test_pair_comparison_from_the_store_equals_the_loaded_one(two, monkeypatch) -> None:  # noqa: ANN001
    store, ids = two
    loaded = compare_sessions(load_session(store, ids[0]), load_session(store, ids[1]))
    monkeypatch.setattr(results_answers, "evaluate_session", no_evaluation)
    stored = compare_stored_sessions(store, ids[0], ids[1])
    assert (
        (stored.shared, stored.templates) == (loaded.shared, loaded.templates) == (40, ["t1", "t2"])
    )
    assert stored.left == loaded.left and stored.right == loaded.right
    assert [(d.relation, d.answers) for d in stored.differences] == [
        (d.relation, d.answers) for d in loaded.differences
    ]
    assert stored.differences  # the two profiles disagree somewhere


def test_seed_seeds_the_sample_and_model_seed_the_model(tmp_path: Path) -> None:
    """`--seed` draws another sample of the same fixed model; the model's seed is sent only
    when `--model-seed` gives it."""
    with Store(tmp_path / "s.db") as store:
        same = [run_sim(store, "sim", seed=seed) for seed in (0, 5)]
        seeded = run_sim(store, "sim", options=ChatOptions(seed=5))
        answers = [store.responses.answers(sid) for sid in (*same, seeded)]
        assert answers[0] == answers[1]  # the same model whatever --seed
        assert answers[2] != answers[0]  # another model seed, other answers
        options = [store.sessions.get(sid)["options_json"]["seed"] for sid in (*same, seeded)]
        assert options == [None, None, 5]
    assert "seed" not in build_options(ChatOptions())
    assert build_options(ChatOptions(seed=5))["seed"] == 5


def test_fresh_conversations_ask_every_turn_and_add_the_stability_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "f.db")
    # 32 in flight: the flaky model's waits overlap (its answers are the same at any number)
    base = ["run", "--db", db, "--kg", "places", "--limit", "20", "--model", "sim:flaky", "-q"]
    base += ["--concurrency", "32"]
    assert run_cli(base) == 0
    assert run_cli([*base, "--fresh-conversations"]) == 0
    capsys.readouterr()
    assert run_cli(["sessions", "--db", db, "--json"]) == 0
    shared, fresh = json.loads(capsys.readouterr().out)
    assert (shared["fresh_conversations"], fresh["fresh_conversations"]) == (0, 1)
    reports = []
    for row in (shared, fresh):
        assert run_cli(["report", row["id"], "--db", db, "--format", "json"]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    # Shared: each sequential conversation's first turn is its atomic answer, reused (40);
    # no two relations ask the same text (the papers' set asks "Does Luxembourg have a
    # Garnich?" for two Garnichs: 8 more answers reused there); no stability test.
    assert reports[0]["answers_from_cache"] == 40 and "stability" not in reports[0]["tests"]
    # Fresh: every turn asked; each of the 40 first turns held to its atomic answer (38 with
    # both answers valid). The simulated model is a function of the chat, so the same
    # question gets the same answer: no error; KONTEST's figures are unchanged.
    assert reports[1]["answers_from_cache"] == 0
    assert reports[1]["tests"]["stability"] == 38
    assert reports[1]["consistency"]["stability"] == {"tests": 38, "errors": 0, "rate": 0.0}
    assert reports[1]["errors"]["total"] == reports[0]["errors"]["total"]
    assert reports[1]["rates"]["stability"]["interval"][0] == 0.0
    with Store(db, create=False) as store:
        timing = [session_timing(store, row["id"]) for row in (shared, fresh)]
    assert (timing[0]["cached"], timing[1]["cached"]) == (40, 0)
    assert timing[0]["answers"] == timing[1]["answers"] == 120
    assert timing[1]["calls"] >= 120 > timing[0]["calls"]  # retries count as calls too


def test_table_14_tokens_count_the_calls_made(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        session_id = run_sim(store, "sim")
        rows = list(store.responses.rows(session_id))
        made = sum(int(r["tokens"]) for r in rows if not r["cached"])
        reused = sum(int(r["tokens"]) for r in rows if r["cached"])
        assert reused > 0  # first turns reused from the atomic answers carry tokens
        timing = session_timing(store, session_id)
    assert timing["tokens"] == made
    assert timing["calls"] == sum(int(r["attempts"]) for r in rows)
