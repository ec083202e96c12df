"""`kontest run / report / sessions / export / ensemble` end to end on the paper's running example.

Kinawley path Ireland -> Ulster -> Kinawley, templates t1 "Does {parent} have a {child}?" and
t2 "Is there a {child} in {parent}?", answers in tests/data/kinawley_replay.jsonl. By hand:
relations R1 Ireland>Ulster, R2 Ireland>Kinawley, R3 Ulster>Kinawley; 6 calls each = 18.
- R1: every answer yes -> atomic 1 test, intra 2 (A, B), inter 2 (Q2/A2, Q1/B2), no error.
- R2: Q1 no, Q2 yes -> atomic error; A = [no, yes] -> intra error, B = [yes, yes] ok;
  Q2/A2 yes/yes ok, Q1/B2 no/yes -> inter error. 1 + 2 + 2 tests.
- R3: all yes but A2 "I'm not sure." (invalid) -> atomic 1 test, intra only B, inter only Q1/B2.
- ontological: only R2 has a node between; t1: no, while yes-edges Ireland>Ulster>Kinawley
  exist -> 1 error; t2: yes -> test, no error. 2 tests.
Totals: tests 3 / 5 / 5 / 2 = 15, errors 1 / 1 / 1 / 1 = 4; gap t1 = R2 (1 of 3), t2 = 0.
"""

from __future__ import annotations

import json
import re

import pytest

from kontest_tui.store import Store
from tests.run.run_toys import KINAWLEY_KG, KINAWLEY_REPLAY, PAPER
from tests.support.cli import kontest

EXPECTED = {
    "relations": 3,
    "queries": 6,
    "executions": 18,
    "valid": 17,
    "invalid": 1,
    "tests": {"atomic": 3, "sequential_intra": 5, "sequential_inter": 5, "ontological": 2},
    "errors": {
        "atomic": 1,
        "sequential_intra": 1,
        "sequential_inter": 1,
        "ontological": 1,
        "total": 4,
    },
    "error_rate": round(4 / 15, 6),
    "gap": {
        "per_template": {"t1": {"missing": 1, "pct": 33.33}, "t2": {"missing": 0, "pct": 0.0}},
        "intersection": {"missing": 0, "pct": 0.0},
    },
    "coverage": {"covered": 3, "pct": 100.0},
}


def report_json(capsys: pytest.CaptureFixture[str], db, session: str = "") -> dict:  # noqa: ANN001
    args = ["report", "--db", db, "--format", "json"] + ([session] if session else [])
    code, out, err = kontest(capsys, *args)
    assert code == 0, err
    return json.loads(out)


def test_kinawley_end_to_end_through_the_cli(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "k.db"
    code, out, err = kontest(
        capsys,
        "run",
        "--kg",
        KINAWLEY_KG,
        "--model",
        f"replay:{KINAWLEY_REPLAY}",
        "--templates",
        "paper",
        "--db",
        db,
    )
    assert code == 0, err
    assert "KONTEST report" in out and "implied facts" in out
    # The error list by labels and in words (report.words), not by ids and codes.
    assert (
        "Ireland > Kinawley · implied facts: its yes-answers chain Ireland → Ulster → "
        "Kinawley, yet it said no to “Ireland contains Kinawley”"
    ) in out
    assert "18/18" in err
    report = report_json(capsys, db)
    assert {key: report[key] for key in EXPECTED} == EXPECTED
    with Store(db) as store:
        session = store.sessions.latest()
        assert session is not None
        assert report["session"] == session
        row = store.sessions.get(session)
        assert (row["status"], row["answered"], row["planned"], row["failed"]) == (
            "done",
            18,
            18,
            0,
        )
        assert (row["oracle_error_rate"], row["oracle_errors"]) == (round(4 / 15, 6), 4)
        verdicts = store.verdicts.load(session)
        assert len(verdicts) == 15 and sum(v.error for v in verdicts) == 4
        onto = [v for v in verdicts if v.oracle == "ontological" and v.error]
        assert [(v.relation_id, v.template_id) for v in onto] == [("Q27>Q6410645", "t1")]
        assert store.sessions.kg_snapshot(session)["nodes"][2]["label"] == "Kinawley"
        assert row["template_ids"] == ["t1", "t2"]
        assert row["options_json"]["system_prompt"].startswith("Be concise")


def test_report_formats_sessions_and_export(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "k.db"
    replay = f"replay:{KINAWLEY_REPLAY}"
    assert (
        kontest(capsys, "run", "--kg", KINAWLEY_KG, "--model", replay, *PAPER, "--db", db, "-q")[0]
        == 0
    )
    for fmt, marker in (("markdown", "|"), ("csv", "tests.atomic,3"), ("text", "KONTEST")):
        code, out, _ = kontest(capsys, "report", "--db", db, "--format", fmt)
        assert code == 0 and marker in out
    code, out, _ = kontest(capsys, "sessions", "--db", db, "--json")
    sessions = json.loads(out)
    assert code == 0 and len(sessions) == 1 and sessions[0]["status"] == "done"
    code, out, _ = kontest(capsys, "sessions", "--db", db)
    assert sessions[0]["id"] in out and "18/18" in out
    # the JSONL export is itself a replay file: replaying it reproduces the report
    export = tmp_path / "export.jsonl"
    code, _, err = kontest(capsys, "export", sessions[0]["id"], "--db", db, "--out", export)
    assert code == 0, err
    lines = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 18
    assert lines[3]["messages"] == ["Does Ireland have a Ulster?", "Is there a Ulster in Ireland?"]
    assert (lines[3]["kind"], lines[3]["turn"], lines[3]["parsed"]) == ("sequential", 1, "yes")
    code, _, err = kontest(
        capsys, "run", "--kg", KINAWLEY_KG, "--model", f"replay:{export}", *PAPER, "--db", db, "-q"
    )
    assert code == 0, err
    again = report_json(capsys, db)
    assert {key: again[key] for key in EXPECTED} == EXPECTED
    code, out, _ = kontest(capsys, "export", "--db", db, "--format", "csv")
    assert out.splitlines()[0].startswith("session,conversation,relation,kind")
    assert len(out.splitlines()) == 19
    code, out, err = kontest(
        capsys, "ensemble", sessions[0]["id"], again["session"], "--db", db, "--k", "3"
    )
    assert code == 0, err
    assert "Ensemble of 2 models" in out


def test_resume_asks_only_what_is_missing(tmp_path, capsys) -> None:  # noqa: ANN001
    """A session stopped after 7 answers (one sequential conversation half done) resumes to
    the same report; every turn is stored exactly once."""
    import asyncio

    from kontest_tui.kg.io import load_graph
    from kontest_tui.models.replay import ReplayModel
    from kontest_tui.run.api import SessionSpec, create_session
    from kontest_tui.run.executor import Executor, ExecutorConfig, ExecutorEvents
    from kontest_tui.run.session import run_session

    db = tmp_path / "k.db"
    with Store(db) as store:
        session = create_session(
            store,
            SessionSpec(
                load_graph(KINAWLEY_KG), model=f"replay:{KINAWLEY_REPLAY}", template_set="paper"
            ),
        )
        holder: dict[str, Executor] = {}

        def stop(response) -> None:  # noqa: ANN001
            if len(holder["executor"].responses) == 7:
                holder["executor"].cancel()

        outcome = asyncio.run(
            run_session(
                store,
                session,
                ReplayModel(KINAWLEY_REPLAY),
                config=ExecutorConfig(concurrency=1),
                events=ExecutorEvents(on_response=stop),
                on_executor=lambda executor: holder.update(executor=executor),
            )
        )
        assert outcome.status == "cancelled"
        stored = {(r["conversation"], r["turn"]) for r in store.responses.rows(session)}
        # generation order at concurrency 1: R1's Q1, Q2, A (2 turns), B (2), then R2's Q1
        assert ("Q27>Q189458/t2+t1", 1) in stored and len(stored) == 7
    code, out, err = kontest(capsys, "run", "--resume", "--db", db, "-q")
    assert code == 0, err
    assert f"session {session}" in err
    with Store(db) as store:
        rows = list(store.responses.rows(session))
        assert len(rows) == 18
        assert len({(r["conversation"], r["turn"]) for r in rows}) == 18
        assert store.sessions.get(session)["status"] == "done"
    report = report_json(capsys, db, session)
    assert {key: report[key] for key in EXPECTED} == EXPECTED
    code, _, err = kontest(capsys, "run", "--resume", session, "--db", db)
    assert code == 2 and "already done" in err


def test_errors_are_one_line(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "k.db"
    code, _, err = kontest(capsys, "run", "--db", db)
    assert (
        code == 2
        and err.strip() == "kontest: error: --kg or --questions is required (or --resume a session)"
    )
    code, _, err = kontest(capsys, "run", "--resume", "--db", db)
    assert code == 1 and "no unfinished session" in err
    assert (
        kontest(
            capsys,
            "run",
            "--kg",
            KINAWLEY_KG,
            "--model",
            f"replay:{KINAWLEY_REPLAY}",
            *PAPER,
            "--db",
            db,
            "-q",
        )[0]
        == 0
    )
    with Store(db) as store:
        session = store.sessions.latest()
        assert session is not None
    code, _, err = kontest(capsys, "report", "nope", "--db", db)
    assert code == 1
    assert err.strip() == f"kontest: error: no session 'nope' in {db} (sessions: {session})"
    code, _, err = kontest(capsys, "report", "--db", tmp_path / "missing.db")
    assert code == 1 and "no session database" in err
    not_db = tmp_path / "notes.db"
    not_db.write_text("hello, not sqlite\n" * 100)
    code, _, err = kontest(capsys, "sessions", "--db", not_db)
    assert code == 1 and "not a kontest session database" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = kontest(capsys, "ensemble", session, "--db", db)
    assert code == 2 and "at least two" in err
    code, _, err = kontest(
        capsys, "run", "--kg", KINAWLEY_KG, "--model", "replay:nope.jsonl", "--db", db
    )
    assert code == 2 and "nope.jsonl" in err


def test_unreachable_model_fails_before_a_session_exists(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "k.db"
    code, out, err = kontest(
        capsys, "run", "--kg", KINAWLEY_KG, "--model", "ollama:x@http://127.0.0.1:9", "--db", db
    )
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("kontest: error: ")
    with Store(db) as store:
        assert store.sessions.ids() == []


def test_failed_turns_are_counted_apart_and_resume_asks_them(tmp_path, capsys) -> None:  # noqa: ANN001
    """A replay file without the answers for "Does Ireland have a Kinawley?" fails atomic Q1
    of R2 and turn 1 of A; turn 2 of A is not asked (its context is missing): 3 failed turns,
    in no count, test or gap. By hand, from the module docstring without R2's Q1 and A:
    15 answers (valid 14, invalid 1: R3's A2); atomic R1, R3 = 2 tests; intra R1 2 + R2 B +
    R3 B = 4; inter R1 2 + R3 Q1/B2 = 3; ontological R2 t2 only = 1; no error; gap t1 has
    R2 pending (not missing), so every gap is 0 and coverage 3 (R2 yes under t2).
    The run exits 1 with one line naming the resume command; `--resume` (no flag needed)
    asks the 3 turns again with the full file and gives the hand-computed report."""
    partial = tmp_path / "partial.jsonl"
    lines = KINAWLEY_REPLAY.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if '"messages": ["Does Ireland have a Kinawley?"]' not in line]
    assert len(kept) == len(lines) - 2
    partial.write_text("\n".join(kept) + "\n", encoding="utf-8")
    db = tmp_path / "k.db"
    code, out, err = kontest(
        capsys, "run", "--kg", KINAWLEY_KG, "--model", f"replay:{partial}", *PAPER, "--db", db, "-q"
    )
    with Store(db) as store:
        session = store.sessions.latest()
        assert session is not None
        failed = [
            (r["conversation"], r["turn"]) for r in store.responses.rows(session) if r["error"]
        ]
        assert failed == [
            ("Q27>Q6410645/t1", 0),
            ("Q27>Q6410645/t1+t2", 0),
            ("Q27>Q6410645/t1+t2", 1),
        ]
        errors = [r["error"] for r in store.responses.rows(session) if r["error"]]
        assert "not in the recording" in errors[0] and errors[2].startswith("not asked:")
        row = store.sessions.get(session)
        assert row["failed"] == 3 and row["status"] == "failed"
        assert row["message"] == "3 turns failed after all attempts"
    assert code == 1
    # a replay: the lines the file lacks, then the error (the last line); no resume of the
    # same file (it fails the same way)
    assert err.strip().splitlines()[-4:] == [
        f'kontest: the lines {partial} lacks (add each with its "answer", then '
        f"kontest run --resume {session} --db {db} asks those turns):",
        '{"kind": "atomic", "messages": ["Does Ireland have a Kinawley?"]}',
        '{"kind": "sequential", "messages": ["Does Ireland have a Kinawley?"]}',
        "kontest: error: 3 turns failed after all attempts (no answer): "
        f"{partial} has no line for 2 of their questions; a resume with the same file fails "
        "them the same way",
    ]
    assert (
        "executions 15 (valid 14, invalid 1, of which refusals 1)  failed 3" in out
    )  # "I'm not sure."
    report = report_json(capsys, db)
    assert {key: report[key] for key in ("executions", "valid", "invalid", "failed")} == {
        "executions": 15,
        "valid": 14,
        "invalid": 1,
        "failed": 3,
    }
    assert report["tests"] == {
        "atomic": 2,
        "sequential_intra": 4,
        "sequential_inter": 3,
        "ontological": 1,
    }
    assert report["errors"]["total"] == 0
    assert report["gap"]["per_template"]["t1"] == {"missing": 0, "pct": 0.0}
    assert report["coverage"] == {"covered": 3, "pct": 100.0}
    code, out, _ = kontest(capsys, "report", "--db", db, "--format", "csv")
    assert "failed,3\n" in out
    code, out, _ = kontest(capsys, "report", "--db", db, "--format", "markdown")
    assert "failed 3" in out and "3 turns got no answer" in out
    code, out, _ = kontest(capsys, "sessions", "--db", db)
    assert out.splitlines()[0].split()[5:7] == ["answered", "failed"]
    # answered, failed (split by the columns' spaces: the KG cell has spaces of its own)
    assert re.search(r" 15/18 +3 ", out.splitlines()[-1])
    code, _, err = kontest(
        capsys, "run", "--resume", "--model", f"replay:{KINAWLEY_REPLAY}", "--db", db, "-q"
    )
    assert code == 0, err
    with Store(db) as store:
        rows = list(store.responses.rows(session))
        assert len(rows) == 18 and not any(r["error"] for r in rows)
        assert store.sessions.get(session)["failed"] == 0
        assert store.sessions.get(session)["status"] == "done"
    report = report_json(capsys, db)
    assert {key: report[key] for key in EXPECTED} == EXPECTED
    assert report["failed"] == 0


def test_a_model_that_never_answers_fails_every_turn(tmp_path, capsys) -> None:  # noqa: ANN001
    """`--model replay:empty.jsonl` on 30 places relations is 180 failed turns
    (60 atomic calls, 60 first sequential turns, 60 second turns not asked), not
    "invalid 180, gap 100%, exit 0": nothing valid or invalid, no gap, exit 1."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    db = tmp_path / "k.db"
    code, out, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "30",
        "--model",
        f"replay:{empty}",
        "--db",
        db,
        "-q",
    )
    assert code == 1
    assert any(line.startswith("kontest: error: 180 turns failed") for line in err.splitlines())
    report = report_json(capsys, db)
    assert (report["valid"], report["invalid"], report["failed"], report["executions"]) == (
        0,
        0,
        180,
        0,
    )
    assert report["gap"]["intersection"] == {"missing": 0, "pct": 0.0}
    assert report["coverage"]["covered"] == 0 and report["pending_relations"] == 30
    assert sum(report["tests"].values()) == 0


def test_progress_line_shows_counts_errors_rate_and_eta(monkeypatch) -> None:  # noqa: ANN001
    from collections import Counter

    from kontest_tui.cli import run as cli_run
    from kontest_tui.run.executor import Progress

    monkeypatch.setattr("kontest_tui.run.executor.time.monotonic", lambda: 110.0)
    progress = Progress(
        total=100,
        done=40,
        skipped=10,
        errors=Counter({"429": 2, "5xx": 1}),
        retries=4,
        invalid=3,
        cached=5,
        started=100.0,
    )
    # 40 answered in 10 s = 4/s; 50 left -> 12.5 s -> 0:12
    assert cli_run.format_progress(progress, width=10) == (
        "[#####.....] 50/100 | errors 429x2 5xxx1 | invalid 3 | retries 4 | cached 5"
        " | 4.0/s | ETA 0:12"
    )


def test_db_given_before_the_subcommand(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "k.db"
    code, _, err = kontest(
        capsys,
        "--db",
        db,
        "run",
        "--kg",
        KINAWLEY_KG,
        "--model",
        f"replay:{KINAWLEY_REPLAY}",
        *PAPER,
        "-q",
    )
    assert code == 0, err
    code, out, _ = kontest(capsys, "--db", db, "sessions", "--json")
    assert code == 0 and json.loads(out)[0]["oracle_error_rate"] == round(4 / 15, 6)
    code, out, _ = kontest(capsys, "--db", db, "sessions")
    assert "26.7%" in out
