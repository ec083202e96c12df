"""Real HTTP against `kontest sim serve`: both clients, streaming and not, equal the in-process sim."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatOptions, ChatRequest, Message
from kontest_tui.models.completion_prompt import parse_completion_prompt, render_completion_prompt
from kontest_tui.models.ollama import OllamaModel
from kontest_tui.models.openai import OpenAIModel
from kontest_tui.models.sim import (
    MEGABYTE,
    SimulatedModel,
    decide_answer,
    decide_fault,
    load_profile,
)
from kontest_tui.models.specs import alist_models, list_models, open_model
from tests.models.model_test_servers import ROOT, start_sim_server

CHATS: list[tuple[str, ...]] = [
    ("Does Ireland have a Ulster?",),
    ("Is there a Ulster in Ireland?",),
    ("Does Ireland have a Kinawley?", "Is there a Kinawley in Ireland?"),
    ("Is there a Kinawley in Ireland?", "Does Ireland have a Kinawley?"),
    ('Does the album, "Raise Vibration" have a song called "It\'s Enough!"?',),
    ('Is "Whiskey Glasses" a song by Morgan Wallen?',),
    ("What is the tallest mountain of Qatar?",),
] + [(f"Does Land{i} have a Village{i}?", f"Is there a Village{i} in Land{i}?") for i in range(12)]

CLIENTS = ["ollama-stream", "ollama-whole", "openai-stream", "openai-whole"]


def make_client(kind: str, url: str, model: str = "sim") -> OllamaModel | OpenAIModel:
    stream = kind.endswith("stream")
    if kind.startswith("ollama"):
        return OllamaModel(model, url, stream=stream)
    return OpenAIModel(model, f"{url}/v1", stream=stream)


async def ask(model, chat: tuple[str, ...], options: ChatOptions | None = None, on_token=None):
    """Ask a chat turn by turn (each turn sees the earlier ones); the last result."""
    messages: list[Message] = []
    result = None
    for question in chat:
        messages.append(Message("user", question))
        request = ChatRequest(tuple(messages), options or ChatOptions(system_prompt="Be concise."))
        result = await model.chat(request, on_token)
        messages.append(Message("assistant", result.text))
    return result


@pytest.mark.parametrize("kind", CLIENTS)
async def test_http_answers_equal_in_process(sim_url: str, kind: str) -> None:
    expected = [(await ask(SimulatedModel("default", seed=0), chat)).text for chat in CHATS]
    client = make_client(kind, sim_url)
    try:
        got = [(await ask(client, chat)).text for chat in CHATS]
    finally:
        await client.aclose()
    assert got == expected
    assert len(set(got)) > 2  # a mixed bag of answers, not one constant


@pytest.mark.parametrize("kind", ["ollama-stream", "openai-stream"])
async def test_tokens_arrive_in_several_pieces(sim_url: str, kind: str) -> None:
    client = make_client(kind, sim_url)
    try:
        for index in range(100):
            pieces: list[str] = []
            result = await ask(
                client, (f"Does Stream{index} have a Piece{index}?",), on_token=pieces.append
            )
            if " " in result.text:
                break
    finally:
        await client.aclose()
    assert len(pieces) >= 3
    assert "".join(pieces) == result.text
    assert result.first_token_ms is not None and result.latency_ms >= result.first_token_ms


async def test_profile_selected_by_model_name_and_seed_option(sim_url: str) -> None:
    chats = [(f"Does Realm{i} have a Hamlet{i}?",) for i in range(25)]
    options = ChatOptions(seed=4)
    expected = [(await ask(SimulatedModel("yes-sayer"), chat, options)).text for chat in chats]
    client = make_client("ollama-stream", sim_url, model="yes-sayer:latest")
    try:
        got = [(await ask(client, chat, options)).text for chat in chats]
    finally:
        await client.aclose()
    assert got == expected


async def test_completions_mode_round_trip(sim_url: str) -> None:
    messages = (
        Message("user", "Does Ireland have a Ulster?"),
        Message("assistant", "Yes, that's right.\nmore"),
        Message("user", "Is there a Ulster in Ireland?"),
    )
    prompt = render_completion_prompt(messages)
    assert prompt.startswith("Answer each question with Yes or No.\nQuestion: Is Paris in France?")
    assert prompt.endswith(
        "Question: Does Ireland have a Ulster?\nAnswer: Yes, that's right.\n"
        "Question: Is there a Ulster in Ireland?\nAnswer:"
    )
    assert parse_completion_prompt(prompt) == [
        Message("user", "Does Ireland have a Ulster?"),
        Message("assistant", "Yes, that's right."),
        Message("user", "Is there a Ulster in Ireland?"),
    ]
    options = ChatOptions(max_tokens=3)
    model = open_model(f"openai-completions:sim@{sim_url}")
    try:
        for chat in CHATS:
            got = await ask(model, chat, options)
            expected = await ask(SimulatedModel(), chat, options)
            assert got.text == expected.text
    finally:
        await model.aclose()


async def test_list_models_and_check(sim_url: str) -> None:
    assert "flaky:latest" in await alist_models(f"ollama:@{sim_url}")
    assert "careful" in await alist_models(f"openai:@{sim_url}")
    assert "default" in await alist_models("sim")
    for spec in (f"ollama:flaky@{sim_url}", f"openai:careful@{sim_url}", f"openai:sim@{sim_url}"):
        model = open_model(spec)
        try:
            line = await model.check()
        finally:
            await model.aclose()
        assert "available" in line and "\n" not in line
    # a name the server does not serve fails the check, as on a real server
    for spec in (f"ollama:whatever@{sim_url}", f"openai:whatever@{sim_url}"):
        model = open_model(spec)
        try:
            with pytest.raises(ModelError, match="unknown model 'whatever'"):
                await model.check()
        finally:
            await model.aclose()


# the megabyte answer needs a length limit above the clients' yes/no default
UNLIMITED = ChatOptions(system_prompt="Be concise.", max_tokens=10**9)


def _question(fault: str, prefix: str) -> str:
    profile = load_profile("flaky")
    for index in range(5000):
        question = f"Does {prefix}{index} have a Spot{index}?"
        if decide_fault(profile, 0, [question], 0) == fault:
            return question
    raise AssertionError(fault)


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "dropped_stream"])
async def test_faults_over_http(sim_url: str, kind: str, fault: str) -> None:
    question = _question(fault, f"{kind}-{fault}-")
    client = make_client(kind, sim_url, model="flaky")
    try:
        with pytest.raises(ModelError) as caught:
            await ask(client, (question,))
        error = caught.value
        assert error.retryable
        assert "\n" not in str(error)
        if fault == "rate_limit":
            assert "429" in str(error)
            assert error.retry_after == pytest.approx(0.2)  # parsed from the Retry-After header
        elif fault == "server_error":
            assert "500" in str(error)
        else:
            assert "stream broken" in str(error)
        # the server's attempt counter: a retrying client gets the answer in the end
        for _ in range(3):
            try:
                result = await ask(client, (question,))
                break
            except ModelError:
                continue
        else:
            raise AssertionError("fault repeated forever")
    finally:
        await client.aclose()
    assert result.text == decide_answer(load_profile("flaky"), 0, [question])


@pytest.mark.parametrize("kind", CLIENTS)
async def test_hostile_answers_arrive_raw(sim_url: str, kind: str) -> None:
    client = make_client(kind, sim_url, model="hostile")
    seen: set[str] = set()
    try:
        for index in range(40):
            question = (f"Does Evil{index} have a Trap{index}?",)
            result = await ask(client, question, UNLIMITED)
            text = result.text
            if "\x1b[31m" in text:
                seen.add("ansi")
            if "[bold red]No[/bold red]" in text:
                seen.add("markup")
            if len(text) + result.dropped > len(MEGABYTE):  # a stream holds the kept part only
                seen.add("megabyte")
            if text.startswith("\ufffd\ufffdYes"):
                seen.add("invalid-utf8")
    finally:
        await client.aclose()
    assert seen == {"ansi", "markup", "megabyte", "invalid-utf8"}


async def test_server_rejects_bad_requests(sim_url: str) -> None:
    async with httpx.AsyncClient(base_url=sim_url) as client:
        bad_json = await client.post("/api/chat", content=b"{nope")
        assert bad_json.status_code == 400
        no_messages = await client.post("/v1/chat/completions", json={"model": "x"})
        assert (
            no_messages.status_code == 400 and "messages" in no_messages.json()["error"]["message"]
        )
        unknown = await client.get("/no/such/route")
        assert unknown.status_code == 404
        tags = await client.get("/api/tags")
        assert tags.status_code == 200


def test_serve_cli_rejects_bad_profile_in_one_line() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kontest_tui.cli",
            "sim",
            "serve",
            "--port",
            "0",
            "--profile",
            "nope",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "unknown simulated-model profile 'nope'" in done.stderr
    assert "Traceback" not in done.stderr


async def test_serve_cli_seed_and_profile_options() -> None:
    process, url = start_sim_server("--profile", "careful", "--seed", "3")
    try:
        client = make_client("openai-whole", url)
        try:
            got = [(await ask(client, chat)).text for chat in CHATS]
        finally:
            await client.aclose()
    finally:
        process.terminate()
        process.wait(timeout=10)
    expected = [(await ask(SimulatedModel("careful", seed=3), chat)).text for chat in CHATS]
    assert got == expected


def test_list_models_blocking_form(sim_url: str, refused_url: str) -> None:
    assert "slow:latest" in list_models(f"ollama:@{sim_url}")
    assert "slow" in list_models(f"openai:m@{sim_url}")
    with pytest.raises(ModelError, match="connection refused"):
        list_models(f"ollama:@{refused_url}")


@pytest.mark.parametrize("kind", ["ollama-stream", "openai-stream"])
async def test_concurrent_requests_get_the_in_process_answers(sim_url: str, kind: str) -> None:
    import asyncio

    chats = [
        (f"Does Crowd{i} have a Member{i}?", f"Is there a Member{i} in Crowd{i}?")
        for i in range(24)
    ]
    expected = [(await ask(SimulatedModel(), chat)).text for chat in chats]
    client = make_client(kind, sim_url)
    try:
        results = await asyncio.gather(*(ask(client, chat) for chat in reversed(chats)))
    finally:
        await client.aclose()
    assert [result.text for result in reversed(results)] == expected
