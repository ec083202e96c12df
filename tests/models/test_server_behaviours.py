"""The servers met in use, played by `kontest sim serve`'s switches over real HTTP on 127.0.0.1:
a model name the server does not serve, thinking models that answer in their reasoning, the
same rejection for every chat, NDJSON to a request for one object, replicas of different
speed, a model that takes only its default temperature."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import Conversation, Query
from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatOptions, ChatRequest, Message
from kontest_tui.models.ollama import OllamaModel
from kontest_tui.models.openai import OpenAIModel
from kontest_tui.models.pool import ModelPool
from kontest_tui.models.sim import SimulatedModel
from kontest_tui.models.specs import open_model
from kontest_tui.run.executor import Executor, ExecutorConfig
from tests.models.model_test_servers import sim_server_thread
from tests.support.cli import kontest


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_model_name_the_server_does_not_serve_fails_the_check(
    kind: str,
    sim_url: str,
    tmp_path,
    capsys,  # noqa: ANN001
) -> None:
    """A typo in the model name: the sim server answered 200 for any name, so the OpenAI
    check passed and the run asked a model that does not exist. Now a 404 as real servers
    answer it; the check says so in one line and nothing is stored."""
    url = sim_url if kind == "ollama" else f"{sim_url}/v1"
    db = tmp_path / "s.db"
    code, _, err = kontest(
        capsys, "run", "--kg", "places", "--limit", "2", "--model", f"{kind}:TYPO@{url}", "--db", db
    )
    assert code != 0 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("kontest: error:")]
    assert len(lines) == 1 and "unknown model 'TYPO'" in lines[0], err
    # `sim` (the server's profile) is served
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "1",
        "--model",
        f"{kind}:sim@{url}",
        "--db",
        tmp_path / "ok.db",
        "-q",
    )
    assert code == 0, err


def stored(db, sql: str) -> list[tuple[Any, ...]]:  # noqa: ANN001
    conn = sqlite3.connect(db)
    try:
        return list(conn.execute(sql))
    finally:
        conn.close()


def test_the_same_400_for_every_chat_stops_the_run(tmp_path, capsys) -> None:  # noqa: ANN001
    """A server refusing every chat the same way (Ollama's 400 "does not support thinking")
    was asked every turn of the session. Now 5 turns in a row failed the same way stop the
    run with one line naming the rejection; the failed turns stay stored, and the session
    is resumed on a server that answers."""
    rejection = '"qwen3" does not support thinking'
    db = tmp_path / "s.db"
    with sim_server_thread(reject_status=400, reject_message=rejection) as server:
        code, _, err = kontest(
            capsys,
            "run",
            "--kg",
            "places",
            "--limit",
            "3",
            "--model",
            f"ollama:sim@{server.url}",
            "--db",
            db,
            "--concurrency",
            "1",
            "-q",
        )
        asked = server.posts["/api/chat"]
    assert code == 1 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("kontest: error:")]
    assert len(lines) == 1, err
    assert lines[0].startswith("kontest: error: run stopped: 5 turns in a row failed the same way")
    assert "request rejected (HTTP 400)" in lines[0] and "does not support thinking" in lines[0]
    assert asked == 5  # not every turn of the session (12 first turns)
    errors = [str(row[0]) for row in stored(db, "SELECT error FROM responses")]
    asked_turns = [error for error in errors if not error.startswith("not asked")]
    assert len(asked_turns) == 5 and all("does not support thinking" in e for e in asked_turns)
    with sim_server_thread() as good:
        code, _, err = kontest(
            capsys,
            "run",
            "--resume",
            "--model",
            f"ollama:sim@{good.url}",
            "--db",
            db,
            "-q",
        )
    assert code == 0, err
    assert stored(db, "SELECT count(*) FROM responses WHERE error IS NULL") == [(18,)]


async def test_a_gateways_same_500_stops_the_run_after_its_retries() -> None:
    """A gateway answering an identical 500 for a dead upstream was asked 4 times per turn,
    every turn. Now the run stops once 5 turns in a row failed with it: 20 calls."""
    conversations = [
        Conversation(
            f"R{i}/t1", f"R{i}", "atomic", "Q1", (Query(f"R{i}", "t1", f"Does A{i} have a B{i}?"),)
        )
        for i in range(12)
    ]
    config = ExecutorConfig(
        concurrency=1, share_answers=False, backoff_base=0.001, backoff_max=0.002
    )
    message = "litellm.InternalServerError: upstream http://10.0.0.7:8000 unavailable"
    with sim_server_thread(reject_status=500, reject_message=message) as server:
        model = open_model(f"openai:sim@{server.url}/v1")
        executor = Executor(model, config=config)
        try:
            with pytest.raises(ModelError, match="run stopped: 5 turns in a row") as caught:
                await executor.run(conversations)
        finally:
            await model.aclose()
        asked = server.posts["/v1/chat/completions"]
    assert "server error (HTTP 500)" in str(caught.value) and "unavailable" in str(caught.value)
    assert asked == 5 * config.max_attempts
    assert len(executor.responses) == 5


def test_rejections_differing_only_in_ids_are_the_same() -> None:
    """Request ids and times do not make two rejections different; a status does."""
    from kontest_tui.run.executor import _same_failure

    one = "server error (HTTP 500) from openai at U: request req_8f3a9c2b1d7e failed"
    two = "server error (HTTP 500) from openai at U: request req_77aa01bc99ff failed"
    assert _same_failure(one) == _same_failure(two)
    assert _same_failure("HTTP 500 at 127.0.0.1:8000") != _same_failure(
        "HTTP 502 at 127.0.0.1:8000"
    )


def chat_request(question: str = "Does Ireland have a Ulster?", **options: object) -> ChatRequest:
    return ChatRequest((Message("user", question),), ChatOptions(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_an_answer_in_the_reasoning_only_is_a_failed_turn(stream: bool, field: str) -> None:
    """A thinking model behind an OpenAI-compatible server (vLLM's reasoning parsers, LiteLLM,
    llama-server --reasoning-format) whose budget ran out while it reasoned: content empty,
    the reasoning in `reasoning_content` / `reasoning`. It was an empty answer (stored as
    invalid); now a failed call saying so, as over Ollama. With an answer after the
    reasoning, the answer is the content alone."""
    with sim_server_thread(reasoning="only", reasoning_field=field) as server:
        model = OpenAIModel("sim", f"{server.url}/v1", stream=stream)
        try:
            with pytest.raises(ModelError, match="ended inside the model's thinking") as caught:
                await model.chat(chat_request())
        finally:
            await model.aclose()
    assert "(length, no answer given)" in str(caught.value) and "--max-tokens" in str(caught.value)
    assert not caught.value.retryable
    expected = await SimulatedModel().chat(chat_request())
    with sim_server_thread(reasoning="first", reasoning_field=field) as server:
        model = OpenAIModel("sim", f"{server.url}/v1", stream=stream)
        try:
            answered = await model.chat(chat_request())
        finally:
            await model.aclose()
    assert answered.text == expected.text and answered.text.strip()


def test_a_run_of_a_model_answering_in_its_reasoning_stores_failed_turns(tmp_path, capsys) -> None:  # noqa: ANN001
    """The issue's run: 18/18 empty answers stored as invalid, 0 failed. Now the turns asked
    are failed turns saying why, none an invalid answer, and the run stops after 5 of them in
    a row (every turn would end the same way)."""
    db = tmp_path / "s.db"
    with sim_server_thread(reasoning="only") as server:
        code, _, err = kontest(
            capsys,
            "run",
            "--kg",
            "places",
            "--limit",
            "3",
            "--model",
            f"openai:sim@{server.url}/v1",
            "--db",
            db,
            "--concurrency",
            "1",
            "-q",
        )
    assert code == 1 and "Traceback" not in err
    assert "the answer ended inside the model's thinking" in err
    rows = stored(db, "SELECT raw, error FROM responses WHERE error NOT LIKE 'not asked%'")
    assert len(rows) == 5 and all(raw == "" and "thinking" in error for raw, error in rows)


async def test_ollama_says_leave_out_think_only_when_it_was_given() -> None:
    """A model thinking until its budget ran out: "leave out --think" was said even when
    --think was not given (some models think although the request says "think": false)."""
    said = {}
    with sim_server_thread(reasoning="only") as server:
        model = OllamaModel("sim", server.url)
        try:
            for think in (False, True):
                with pytest.raises(ModelError, match="ended inside the model's thinking") as caught:
                    await model.chat(chat_request(think=think))
                said[think] = str(caught.value)
        finally:
            await model.aclose()
    assert "leave out --think" in said[True]
    assert "--think" not in said[False] and "asked not to" in said[False]


async def test_whole_ollama_answers_sent_as_ndjson_are_read() -> None:
    """A proxy answering /api/chat in NDJSON lines although the request said "stream": false:
    `OllamaModel(stream=False)` failed with a retryable "malformed JSON" (asked again and
    again). Now the lines are read as a stream is: the same answer as the in-process model."""
    questions = ["Does Ireland have a Ulster?", "Does Land7 have a Village7?"]
    with sim_server_thread(ndjson=True) as server:
        model = OllamaModel("sim", server.url, stream=False)
        try:
            got = [await model.chat(chat_request(question)) for question in questions]
        finally:
            await model.aclose()
    expected = [await SimulatedModel().chat(chat_request(question)) for question in questions]
    assert [result.text for result in got] == [result.text for result in expected]
    assert all(result.tokens > 0 for result in got)


async def test_a_slower_replica_gets_calls_by_its_answer_time() -> None:
    """A replica 4x slower than the other: shared out by calls in flight it held half the
    slots while it had calls (about a fifth of the calls, the fast one kept to half the
    concurrency). Weighted by measured answer time it holds a slot or two: under an eighth."""
    conversations = [
        Conversation(
            f"R{i}/t1", f"R{i}", "atomic", "Q1", (Query(f"R{i}", "t1", f"Does P{i} have a C{i}?"),)
        )
        for i in range(120)
    ]
    # Latencies well above a call's own CPU time, so a loaded machine keeps the 4x ratio.
    with sim_server_thread(latency_ms=400) as slow, sim_server_thread(latency_ms=100) as fast:
        pool = open_model(f"ollama:sim@{slow.url},{fast.url}", stream=False)
        assert isinstance(pool, ModelPool)
        config = ExecutorConfig(concurrency=8, share_answers=False)
        try:
            result = await Executor(pool, config=config).run(conversations)
        finally:
            await pool.aclose()
        asked_slow, asked_fast = slow.posts["/api/chat"], fast.posts["/api/chat"]
    assert result.progress.failed == 0 and asked_slow + asked_fast == 120
    assert asked_slow * 8 < 120, (asked_slow, asked_fast)


def test_a_model_taking_only_its_default_temperature(tmp_path, capsys) -> None:  # noqa: ANN001
    """Temperature 0 was always sent, and reasoning models (OpenAI's o-series, gpt-5) refuse
    any but their default: every turn a 400. Now the 400 says what to change, and
    `--temperature default` sends none (over both wire formats)."""
    with sim_server_thread(default_temperature_only=True) as server:
        code, _, err = kontest(
            capsys,
            "run",
            "--kg",
            "places",
            "--limit",
            "2",
            "--model",
            f"openai:sim@{server.url}/v1",
            "--db",
            tmp_path / "zero.db",
            "-q",
        )
        assert code == 1 and "Traceback" not in err
        lines = [line for line in err.splitlines() if line.startswith("kontest: error:")]
        assert len(lines) == 1 and "'temperature' does not support 0" in lines[0], err
        assert "--temperature default" in lines[0]
        for kind, url in (("openai", f"{server.url}/v1"), ("ollama", server.url)):
            db = tmp_path / f"{kind}.db"
            code, _, err = kontest(
                capsys,
                "run",
                "--kg",
                "places",
                "--limit",
                "2",
                "--model",
                f"{kind}:sim@{url}",
                "--temperature",
                "default",
                "--db",
                db,
                "-q",
            )
            assert code == 0, err
            assert stored(db, "SELECT count(*) FROM responses WHERE error IS NOT NULL") == [(0,)]
            assert stored(
                db, "SELECT json_extract(options_json, '$.temperature') FROM sessions"
            ) == [(None,)]


def test_answers_the_timeout_cut_are_counted_apart_from_failed_turns(tmp_path, capsys) -> None:  # noqa: ANN001
    """A model sending each answer's first piece and then stalling past the timeout: "Yes"
    is kept as an answer the timeout cut, "**" cannot be read and is a cut answer (stored
    with answer "cut", no error). The report said failed turns too were "kept as far as they
    went"; now "stopped" counts answers only (the kept and the cut ones), never a failed
    turn, in the report and the session list, and the cut ones are counted apart."""
    profile = tmp_path / "stalling.toml"
    profile.write_text(
        'name = "stalling"\nextends = "default"\ntoken_ms = 3000.0\nunsure_rate = 0.0\n'
        '[styles]\nyes = ["Yes, it is."]\nno = ["**No**"]\n',
        encoding="utf-8",
    )
    db = tmp_path / "s.db"
    with sim_server_thread(str(profile)) as server:
        code, _, err = kontest(
            capsys,
            "run",
            "--kg",
            "places",
            "--limit",
            "2",
            "--model",
            f"ollama:sim@{server.url}",
            "--timeout",
            "0.4",
            "--max-attempts",
            "1",
            "--concurrency",
            "8",
            "--db",
            db,
            "-q",
        )
    assert "Traceback" not in err
    kept = stored(db, "SELECT count(*) FROM responses WHERE stopped = 'timeout' AND error IS NULL")
    cut = stored(db, "SELECT count(*) FROM responses WHERE stopped = 'timeout' AND answer = 'cut'")
    failed = stored(db, "SELECT count(*) FROM responses WHERE error IS NOT NULL")
    assert kept[0][0] > cut[0][0] > 0  # both kinds happened
    assert run_cli(["report", "--db", str(db), "--format", "json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["stopped"]["timeout"] == kept[0][0]
    assert report["cut"] == cut[0][0] and report["failed"] == failed[0][0]
    assert run_cli(["report", "--db", str(db)]) in (0, 1)
    assert f"{kept[0][0]} by the timeout (kept as far as they went)" in capsys.readouterr().out
    assert run_cli(["sessions", "--db", str(db)]) == 0
    assert f"{kept[0][0]} timeout" in capsys.readouterr().out
