"""A replay's failed turns: a session exported with failed turns replays them as failed (never
as empty answers), and a replay that fails says which lines its recording lacks instead of
advising a resume alone (which replays the same file and fails the same way).

Kinawley (3 relations, 18 turns) replayed from tests/data/kinawley_replay.jsonl without two of
its lines: the atomic "Does Ireland have a Kinawley?" and the first turn of the sequential
conversation that starts "Is there a Kinawley in Ulster?". By hand: 3 failed turns, the two
missing lines ("not in the recording") and the conversation's second turn ("not asked"; the
file has its line, so only the first turn is lacking); 15 answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.run.run_toys import KINAWLEY_KG, KINAWLEY_REPLAY, PAPER
from tests.support.cli import kontest

DROPPED = (
    ("atomic", ["Does Ireland have a Kinawley?"]),
    ("sequential", ["Is there a Kinawley in Ulster?"]),
)


def partial_recording(tmp_path: Path) -> Path:
    kept = [
        line
        for line in Path(KINAWLEY_REPLAY).read_text(encoding="utf-8").splitlines()
        if (json.loads(line)["kind"], json.loads(line)["messages"]) not in DROPPED
    ]
    path = tmp_path / "partial.jsonl"
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path


def report(capsys: pytest.CaptureFixture[str], db: Path) -> dict[str, object]:
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_a_replay_that_fails_names_the_lines_its_recording_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    recording = partial_recording(tmp_path)
    code, _, err = kontest(
        capsys,
        "run",
        "--db",
        db,
        "--kg",
        KINAWLEY_KG,
        *PAPER,
        "--model",
        f"replay:{recording}",
        "-q",
    )
    assert code == 1
    assert "ask them again" not in err, err  # a resume alone replays the same file
    lines = err.splitlines()
    error = next(line for line in lines if line.startswith("kontest: error:"))
    assert "3 turns failed" in error and f"{recording} has no line for 2 of" in error, error
    assert error.endswith("a resume with the same file fails them the same way"), error
    start = lines.index(next(line for line in lines if f"the lines {recording} lacks" in line))
    assert lines[-1] == error  # the one error line last
    shown = [json.loads(line) for line in lines[start + 1 : -1]]
    assert shown == [{"kind": kind, "messages": messages} for kind, messages in DROPPED]
    assert report(capsys, db)["failed_reasons"] == {"not in the recording": 2, "not asked": 1}


def test_an_exported_session_replays_its_failed_turns_as_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "e.db"
    recording = partial_recording(tmp_path)
    run = ["run", "--db", db, "--kg", KINAWLEY_KG, *PAPER, "-q", "--model"]
    assert kontest(capsys, *run, f"replay:{recording}")[0] == 1
    first = report(capsys, db)
    exported = tmp_path / "export.jsonl"
    code, _, err = kontest(capsys, "export", "--db", db, "--out", exported)
    assert code == 0, err
    code, _, err = kontest(capsys, *run, f"replay:{exported}")
    assert code == 1, err  # the failed turns fail again: never "done, 0 failed"
    assert "2 failed in the recording too" in err and "--resume" not in err, err
    assert "ask them again" not in err
    again = report(capsys, db)
    for key in ("failed", "failed_reasons", "executions", "valid", "invalid", "tests", "errors"):
        assert again[key] == first[key], key
    assert again["failed"] == 3


def test_run_help_gives_the_replay_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = kontest(capsys, "run", "--help")
    assert code == 0
    help_text = out[out.index("Replay file (--model replay:FILE.jsonl)") :]
    for part in ('"kind": "atomic"', '"messages"', '"query"', '"error": "timeout"', "file order"):
        assert part in help_text, part
