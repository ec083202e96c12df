"""Unauthorized (401/403) and unknown-model (404) failures are not retried, and a few in a row
stop the run with one clear line instead of asking every turn (against a real local server)."""

from __future__ import annotations

import pytest

from tests.models.model_test_servers import MisbehavingHandler
from tests.support.cli import kontest


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("status-401", "unauthorized (HTTP 401)"),
        ("status-403", "unauthorized (HTTP 403)"),
        ("status-404", "unknown model 'status-404'"),
    ],
)
def test_three_fatal_failures_in_a_row_stop_the_run(
    model: str,
    said: str,
    bad_url: str,
    tmp_path,
    capsys,
    monkeypatch,  # noqa: ANN001
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "good-key")  # the connection check passes
    before = MisbehavingHandler.posts[model]
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "10",
        "--model",
        f"openai:{model}@{bad_url}/v1",
        "--db",
        tmp_path / "s.db",
        "--concurrency",
        "1",
        "-q",
    )
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("kontest: error:")]
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith("kontest: error: run stopped: 3 calls in a row failed with")
    assert said in lines[0]
    # asked three times in all: no retry of any turn, no fourth turn
    assert MisbehavingHandler.posts[model] - before == 3


def test_fatal_failures_between_answers_do_not_stop_the_run(
    bad_url: str,
    tmp_path,
    capsys,
    monkeypatch,  # noqa: ANN001
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "good-key")
    MisbehavingHandler.posts["alternate-401"] = 0
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "2",
        "--model",
        f"openai:alternate-401@{bad_url}/v1",
        "--db",
        tmp_path / "s.db",
        "--concurrency",
        "1",
        "--no-cache",
        "-q",
    )
    assert "run stopped" not in err and "Traceback" not in err
    asked = MisbehavingHandler.posts["alternate-401"]
    assert asked >= 6  # every 401 was asked once: the run went on to the end


def test_a_model_that_stops_answering_is_said_once(
    bad_url: str,
    tmp_path,
    capsys,
    monkeypatch,  # noqa: ANN001
) -> None:
    """Every call failing with an error worth retrying (a server in trouble, cutting every
    answer) must not go on silently. With one attempt per turn, 3 relations ask 12
    first turns (the later turns of a failed conversation are not asked): the 10th failure in
    a row says once that the model stopped answering, with the command that asks the failed
    turns again; the run goes on to the end and is left to resume. (The same rejection from
    the server every time stops the run instead: test_server_behaviours.py.)"""
    monkeypatch.setenv("OPENAI_API_KEY", "good-key")
    before = MisbehavingHandler.posts["truncated"]
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "3",
        "--model",
        f"openai:truncated@{bad_url}/v1",
        "--db",
        tmp_path / "s.db",
        "--concurrency",
        "1",
        "--max-attempts",
        "1",
        "-q",
    )
    assert code == 1 and "Traceback" not in err
    warnings = [line for line in err.splitlines() if "stopped answering" in line]
    assert len(warnings) == 1, err
    assert warnings[0].startswith(
        "kontest: warning: the model stopped answering: 10 turns in a row failed (stream broken"
    )
    assert "kontest run --resume " in warnings[0]
    assert MisbehavingHandler.posts["truncated"] - before == 12
