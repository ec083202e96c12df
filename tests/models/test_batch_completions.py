"""Batch mode for a completions-mode session: /v1/completions lines answered by `kontest sim
batch` give the answers of a direct completions run against `kontest sim serve`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_test_servers import running_sim_server

from kontest_tui.cli import run_cli
from kontest_tui.store import Store


def kontest(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run_cli([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return code, out, err


def only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_a_completions_session_writes_completions_lines_and_gets_the_direct_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A completions-mode session's batch lines are /v1/completions with the few-shot prompt,
    its stop and max tokens; answered by `sim batch`, they give the answers of a direct
    completions run against `sim serve` (before: chat lines, 0 valid)."""
    from kontest_tui.models.openai import load_completion_prompt

    with running_sim_server() as url:
        spec = f"openai-completions:default@{url}/v1"
        db = tmp_path / "b.db"
        code, _, err = kontest(
            capsys,
            "run",
            "--kg",
            "places",
            "--limit",
            "3",
            "--model",
            spec,
            "--db",
            db,
            "--batch-out",
            tmp_path,
        )
        assert code == 0, err
        first = only(tmp_path, "*-turn1.jsonl")
        session = first.name.removesuffix("-turn1.jsonl")
        lines = [json.loads(line) for line in first.read_text().splitlines()]
        prompt = load_completion_prompt()
        assert {line["url"] for line in lines} == {"/v1/completions"}
        assert all(line["body"]["prompt"].endswith("\nAnswer:") for line in lines)
        assert all(line["body"]["stop"] == list(prompt.stop) for line in lines)
        assert all(line["body"]["max_tokens"] == prompt.max_tokens for line in lines)
        for phase in (1, 2):
            request = only(tmp_path, f"*-turn{phase}.jsonl")
            out = tmp_path / f"out{phase}.jsonl"
            assert kontest(capsys, "sim", "batch", request, out)[0] == 0
            code, _, err = kontest(
                capsys, "run", "--resume", session, "--batch-in", out, "--db", db
            )
            assert code == 0, err
        code, _, err = kontest(
            capsys,
            "run",
            "--kg",
            "places",
            "--limit",
            "3",
            "--model",
            spec,
            "--db",
            tmp_path / "d.db",
            "-q",
        )
        assert code == 0, err
    with Store(db) as batch, Store(tmp_path / "d.db") as direct:
        batch_answers = {k: r.answer for k, r in batch.load_responses(session).items()}
        direct_id = direct.session_ids()[0]
        direct_answers = {k: r.answer for k, r in direct.load_responses(direct_id).items()}
    assert batch_answers == direct_answers
    assert sum(answer.value != "invalid" for answer in batch_answers.values()) > 0
