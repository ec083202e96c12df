"""Failure mapping of the HTTP clients: one line each, with the right retryable flag."""

from __future__ import annotations

import pytest

from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatOptions, ChatRequest, Message
from kontest_tui.models.http_common import parse_retry_after
from kontest_tui.models.ollama import OllamaModel
from kontest_tui.models.openai import OpenAIModel

QUESTION = ChatRequest((Message("user", "Does A have a B?"),), ChatOptions(timeout=1.0))


def client(kind: str, url: str, model: str, api_key: str | None = None):
    if kind == "ollama":
        return OllamaModel(model, url)
    return OpenAIModel(model, f"{url}/v1", api_key=api_key)


async def fail(model, request: ChatRequest = QUESTION) -> ModelError:
    try:
        with pytest.raises(ModelError) as caught:
            await model.chat(request)
    finally:
        await model.aclose()
    message = str(caught.value)
    assert message and "\n" not in message and "Traceback" not in message
    return caught.value


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_connection_refused(kind: str, refused_url: str) -> None:
    error = await fail(client(kind, refused_url, "m"))
    assert "cannot reach" in str(error) and "connection refused" in str(error)
    assert refused_url in str(error)
    assert error.retryable


async def test_connection_refused_message_names_ollama(refused_url: str) -> None:
    error = await fail(client("ollama", refused_url, "m"))
    assert str(error) == f"cannot reach ollama at {refused_url}: connection refused"


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_unauthorized(kind: str, bad_url: str) -> None:
    error = await fail(client(kind, bad_url, "status-401"))
    assert "unauthorized" in str(error) and not error.retryable
    if kind == "openai":
        assert "check OPENAI_API_KEY" in str(error)


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_unknown_model_404(kind: str, bad_url: str) -> None:
    error = await fail(client(kind, bad_url, "status-404"))
    assert "unknown model 'status-404'" in str(error) and not error.retryable


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_rate_limited_with_retry_after(kind: str, bad_url: str) -> None:
    error = await fail(client(kind, bad_url, "status-429"))
    assert error.retryable and error.retry_after == 7.0


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_server_error_is_retryable(kind: str, bad_url: str) -> None:
    error = await fail(client(kind, bad_url, "status-503"))
    assert "503" in str(error) and error.retryable


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_bad_request_is_not_retryable(kind: str, bad_url: str) -> None:
    error = await fail(client(kind, bad_url, "status-400"))
    assert "400" in str(error) and not error.retryable


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_timeout_is_retryable(kind: str, bad_url: str) -> None:
    error = await fail(client(kind, bad_url, "sleep"))
    assert "timed out after 1 s" in str(error) and error.retryable


@pytest.mark.parametrize("kind", ["ollama", "openai"])
async def test_garbage_and_truncated_bodies(kind: str, bad_url: str) -> None:
    garbage = await fail(client(kind, bad_url, "garbage"))
    if kind == "ollama":
        assert "malformed JSON" in str(garbage) and garbage.retryable
    else:  # an SSE stream with no data lines: a wrong URL, retrying will not help
        assert "no SSE data lines" in str(garbage) and not garbage.retryable
    truncated = await fail(client(kind, bad_url, "truncated"))
    assert truncated.retryable


async def test_check_explains_what_is_wrong(bad_url: str, refused_url: str) -> None:
    model = OpenAIModel("known", f"{bad_url}/v1", api_key="wrong")
    with pytest.raises(ModelError, match="unauthorized .* check OPENAI_API_KEY"):
        await model.check()
    await model.aclose()
    model = OpenAIModel("known", f"{bad_url}/v1", api_key="good-key")
    assert "model known available" in await model.check()
    await model.aclose()
    model = OpenAIModel("missing", f"{bad_url}/v1", api_key="good-key")
    with pytest.raises(ModelError, match="unknown model 'missing'.*available: known"):
        await model.check()
    await model.aclose()
    ollama = OllamaModel("m", refused_url)
    with pytest.raises(ModelError, match="connection refused"):
        await ollama.check()
    await ollama.aclose()


def test_parse_retry_after() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("0.25") == 0.25
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
