"""The Ollama and OpenAI clients against local servers that behave like the proxies met in use
(tests/models/model_test_servers.py ProxyHandler): streams without `message`, no Ollama API,
/api/show saying yes to any name, answers cut by the timeout or the length limit."""

from __future__ import annotations

import json
import sqlite3

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import Conversation, Query
from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatOptions, ChatRequest, Message
from kontest_tui.models.http_common import DEFAULT_CHAT_MAX_TOKENS
from kontest_tui.models.ollama import OllamaModel
from kontest_tui.models.openai import OpenAIModel
from kontest_tui.run.executor import Executor
from tests.models.model_test_servers import ProxyHandler


def ask(options: ChatOptions | None = None) -> ChatRequest:
    return ChatRequest((Message("user", "Does Ireland have a Ulster?"),), options or ChatOptions())


def client(kind: str, url: str, model: str, *, stream: bool = True):  # noqa: ANN201
    if kind == "ollama":
        return OllamaModel(model, url, stream=stream)
    return OpenAIModel(model, f"{url}/v1", stream=stream)


@pytest.mark.parametrize("stream", [True, False])
async def test_a_stream_without_message_is_a_failed_call(proxy_url: str, stream: bool) -> None:
    model = OllamaModel("generate-proxy", proxy_url, stream=stream)
    try:
        with pytest.raises(ModelError) as caught:
            await model.chat(ask())
    finally:
        await model.aclose()
    error = caught.value
    assert "without a `message`" in str(error) and "response" in str(error)
    assert "not Ollama's chat API" in str(error)
    assert error.fatal and not error.retryable


def test_a_run_through_a_generate_proxy_stores_no_answer(proxy_url: str, tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "p.db"
    code = run_cli(
        [
            "run",
            "--kg",
            "places",
            "--limit",
            "3",
            "--model",
            f"ollama:generate-proxy@{proxy_url}",
            "--db",
            str(db),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert "kontest: error: run stopped: 3 calls in a row failed with ollama at" in err
    conn = sqlite3.connect(db)
    try:
        answers = conn.execute("SELECT count(*) FROM responses WHERE error IS NULL").fetchone()[0]
        failed = conn.execute("SELECT count(*) FROM responses WHERE error IS NOT NULL").fetchone()[
            0
        ]
    finally:
        conn.close()
    assert answers == 0 and failed >= 3


async def test_an_empty_message_is_an_empty_answer_not_a_failure(proxy_url: str) -> None:
    model = OllamaModel("empty", proxy_url)
    try:
        result = await model.chat(ask())
    finally:
        await model.aclose()
    assert result.text == "" and result.stopped is None


async def test_no_ollama_api_at_the_url(proxy_url: str, leaky_url: str) -> None:
    for url, said in ((f"{proxy_url}/none", "HTTP 404"), (leaky_url, "no model list")):
        model = OllamaModel("good", url)
        try:
            with pytest.raises(ModelError) as caught:
                await model.check()
        finally:
            await model.aclose()
        assert str(caught.value) == f"no Ollama API at {url} (GET /api/tags: {said})"


async def test_the_model_is_verified_by_name_not_by_api_show(proxy_url: str) -> None:
    model = OllamaModel("not-installed", proxy_url)  # /api/show would say 200
    try:
        with pytest.raises(ModelError, match=r"unknown model 'not-installed' .*available: empty"):
            await model.check()
    finally:
        await model.aclose()
    for name in ("good", "good:latest", "GOOD"):
        model = OllamaModel(name, proxy_url)
        try:
            assert "available" in await model.check()
        finally:
            await model.aclose()


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_chat_sends_a_default_length_limit(kind: str, proxy_url: str) -> None:
    sent = []
    for options in (ChatOptions(), ChatOptions(max_tokens=5)):
        ProxyHandler.payloads.clear()
        model = client(kind, proxy_url, "good")
        try:
            assert (await model.chat(ask(options))).text == "Yes"
        finally:
            await model.aclose()
        payload = ProxyHandler.payloads[-1]
        options_sent = payload.get("options", {}) if kind == "ollama" else payload
        sent.append(options_sent["num_predict" if kind == "ollama" else "max_tokens"])
    assert sent == [DEFAULT_CHAT_MAX_TOKENS, 5]


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_a_timeout_after_tokens_keeps_the_partial_answer(kind: str, proxy_url: str) -> None:
    model = client(kind, proxy_url, "slow")
    try:
        result = await model.chat(ask(ChatOptions(timeout=0.5)))
    finally:
        await model.aclose()
    assert (result.text, result.stopped) == ("Yes", "timeout")


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_the_length_limit_is_recorded(kind: str, proxy_url: str) -> None:
    model = client(kind, proxy_url, "length")
    try:
        result = await model.chat(ask())
    finally:
        await model.aclose()
    assert (result.text, result.stopped) == ("Yes, because", "length")


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_run_keeps_partial_answers_asks_each_turn_once_and_caches_none(
    kind: str,
    proxy_url: str,
    tmp_path,
    capsys,  # noqa: ANN001
) -> None:
    ProxyHandler.payloads.clear()
    spec = f"ollama:slow@{proxy_url}" if kind == "ollama" else f"openai:slow@{proxy_url}/v1"
    db = tmp_path / "t.db"
    for _ in range(2):  # the second run finds nothing in the cache: cut answers are not cached
        code = run_cli(
            [
                "run",
                "--kg",
                "places",
                "--limit",
                "1",
                "--model",
                spec,
                "--db",
                str(db),
                "--timeout",
                "0.5",
                "--concurrency",
                "4",
                "-q",
            ]
        )
        err = capsys.readouterr().err
        assert code == 0, err
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT raw, answer, error, attempts FROM responses").fetchall()
    finally:
        conn.close()
    assert rows and all(row == ("Yes", "yes", None, 1) for row in rows)
    assert len(ProxyHandler.payloads) == len(rows)  # no turn asked again from scratch


def run_one(spec: str, db, *extra: str) -> int:  # noqa: ANN001
    return run_cli(
        ["run", "--kg", "places", "--limit", "1", "--model", spec, "--db", str(db), "-q", *extra]
    )


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_stall_that_cut_the_answer_before_it_could_be_read_is_a_cut_answer(
    kind: str,
    proxy_url: str,
    tmp_path,
    capsys,  # noqa: ANN001
) -> None:
    """A stream that stalls after "Ye" until the timeout: asked again while attempts remain,
    then stored as a cut answer (answer "cut", no error): not an invalid answer (which would
    count in the gap), not a failed turn (which a resume would ask again forever); the report
    counts it apart, its row marked stopped = timeout."""
    spec = f"ollama:stall@{proxy_url}" if kind == "ollama" else f"openai:stall@{proxy_url}/v1"
    db = tmp_path / "t.db"
    code = run_one(spec, db, "--timeout", "0.3", "--max-attempts", "2", "--concurrency", "6")
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT answer, error, attempts, stopped FROM responses").fetchall()
    finally:
        conn.close()
    cut = [row for row in rows if row[3] == "timeout"]
    assert cut and all(row[0] == "cut" and row[1] is None and row[2] == 2 for row in cut)
    assert run_cli(["report", "--db", str(db), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["invalid"] == 0 and report["failed"] == 0 and report["valid"] == 0
    assert report["cut"] == len(rows) == len(cut)
    assert report["stopped"] == {"length": 0, "timeout": len(cut)}
    assert run_cli(["sessions", "--db", str(db)]) == 0
    listed = capsys.readouterr().out.splitlines()[1].split()
    assert listed[-1] == "-"  # no test ran: no error rate (before: 0.0%)
    assert f"{len(cut)} timeout" in " ".join(listed)


def test_answers_cut_by_the_length_limit_are_stored_reported_exported_and_listed(
    proxy_url: str,
    tmp_path,
    capsys,  # noqa: ANN001
) -> None:
    db = tmp_path / "t.db"
    assert run_one(f"ollama:length@{proxy_url}", db) == 0, capsys.readouterr().err
    capsys.readouterr()
    conn = sqlite3.connect(db)
    try:
        stopped = [row[0] for row in conn.execute("SELECT stopped FROM responses")]
    finally:
        conn.close()
    assert stopped and set(stopped) == {"length"}
    assert run_cli(["report", "--db", str(db), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["stopped"] == {"length": len(stopped), "timeout": 0}
    assert run_cli(["report", "--db", str(db)]) == 0
    assert (
        f"Stopped early: {len(stopped)} answers cut by the token limit" in capsys.readouterr().out
    )
    assert run_cli(["export", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["stopped"] for line in lines] == stopped
    assert run_cli(["sessions", "--db", str(db)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert "stopped" in table[0] and f"{len(stopped)} length" in table[1]


def test_ollama_asks_without_thinking_unless_told(proxy_url: str, tmp_path, capsys) -> None:  # noqa: ANN001
    """`"think": false` is sent by default (the thinker then answers); with --think it
    thinks until the length limit, which is a failed turn saying so, not an empty answer."""
    ProxyHandler.payloads.clear()
    db = tmp_path / "t.db"
    assert run_one(f"ollama:thinker@{proxy_url}", db) == 0, capsys.readouterr().err
    assert ProxyHandler.payloads and all(p["think"] is False for p in ProxyHandler.payloads)
    ProxyHandler.payloads.clear()
    assert run_one(f"ollama:thinker@{proxy_url}", tmp_path / "think.db", "--think") == 1
    capsys.readouterr()
    assert all(p["think"] is True for p in ProxyHandler.payloads)
    conn = sqlite3.connect(tmp_path / "think.db")
    try:
        errors = [row[0] for row in conn.execute("SELECT error FROM responses")]
    finally:
        conn.close()
    asked = [error for error in errors if not error.startswith("not asked")]
    assert asked and all("ended inside the model's thinking (length" in e for e in asked)


async def test_a_stream_longer_than_the_kept_size_is_not_held(proxy_url: str) -> None:
    """A streamed answer past the stored size is counted, not held: memory per answer is
    bounded (the pieces kept stop at KEEP_CHARS)."""
    from kontest_tui.models.http_common import KEEP_CHARS, StreamCollector

    collector = StreamCollector(None, 0.0)
    for _ in range(1000):
        collector.add("x" * 1000)
    assert collector.kept < KEEP_CHARS + 1000 and sum(map(len, collector.pieces)) == collector.kept
    assert collector.kept + collector.dropped == 1_000_000


async def test_a_web_page_answering_api_chat_is_not_retried(proxy_url: str) -> None:
    """Whole answers (stream=False) from a server that is not Ollama (an HTML page): one
    fatal error saying so, not a retryable "malformed JSON" asked again and again."""
    model = client("ollama", proxy_url, "webpage", stream=False)
    try:
        with pytest.raises(ModelError, match="not Ollama's chat API") as caught:
            await model.chat(ask())
    finally:
        await model.aclose()
    assert caught.value.fatal and not caught.value.retryable


@pytest.mark.parametrize("think", [True, False])
async def test_think_reaches_the_request_of_a_conversation_with_its_own_system_prompt(
    proxy_url: str, think: bool
) -> None:
    """A conversation with its own system prompt (FactChecker's, a logic rule's) is asked
    with the session's options plus that prompt: `--think` goes with them to the body."""
    question = Query("R", "fc", "Which is in Ireland? A) Ulster B) Bavaria")
    conversation = Conversation(
        "R/fc", "R", "factcheck", "FC", (question,), system_prompt="Answer with a letter."
    )
    model = OllamaModel("plain", proxy_url)
    ProxyHandler.payloads.clear()
    try:
        await Executor(model, ChatOptions(think=think)).run([conversation])
    finally:
        await model.aclose()
    (payload,) = ProxyHandler.payloads
    assert payload["think"] is think
    assert payload["messages"][0] == {"role": "system", "content": "Answer with a letter."}
