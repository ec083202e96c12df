"""Ollama client (`ollama:MODEL[@URL]`): /api/chat with NDJSON token streaming, /api/tags, /api/show.

Options map to Ollama's: temperature, seed, num_predict (max tokens); the system prompt is
the first message. One pooled httpx client per instance, closed by `aclose()`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import httpx

from kontest_tui.domain.records import Conversation
from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatOptions, ChatRequest, ChatResult, TokenCallback
from kontest_tui.models.http_common import (
    StreamCollector,
    error_for_exception,
    error_for_status,
    get_json,
    is_stale_connection,
    iter_lines,
    loads,
    make_client,
    quote,
)

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
SERVICE = "ollama"


def build_messages(request: ChatRequest) -> list[dict[str, str]]:
    """The wire messages: the system prompt (if any) first, then the chat."""
    messages = [
        {"role": m.role, "content": m.content} for m in request.messages if m.role != "system"
    ]
    if request.options.system_prompt:
        messages.insert(0, {"role": "system", "content": request.options.system_prompt})
    return messages


def build_options(options: ChatOptions) -> dict[str, object]:
    wire: dict[str, object] = {"temperature": options.temperature}
    if options.seed is not None:
        wire["seed"] = options.seed
    if options.max_tokens is not None:
        wire["num_predict"] = options.max_tokens
    return wire


class OllamaModel:
    """A ChatModel talking to an Ollama server (or anything speaking its /api/chat)."""

    def __init__(self, model: str, url: str = DEFAULT_OLLAMA_URL, *, stream: bool = True) -> None:
        self.model = model
        self.url = url.rstrip("/")
        self.stream = stream
        self.spec = (
            f"ollama:{model}" if self.url == DEFAULT_OLLAMA_URL else f"ollama:{model}@{self.url}"
        )
        self._client = make_client(self.url)

    def __repr__(self) -> str:
        return f"OllamaModel(model={self.model!r}, url={self.url!r}, stream={self.stream})"

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        """Nothing to prepare."""

    async def aclose(self) -> None:
        await self._client.aclose()

    async def list_models(self) -> list[str]:
        """Model names installed on the server (/api/tags)."""
        data = await self._get_json("/api/tags", timeout=10.0)
        models = data.get("models", []) if isinstance(data, dict) else []
        return sorted(str(m.get("name") or m.get("model")) for m in models if isinstance(m, dict))

    async def check(self) -> str:
        """One line: reachable and the model is installed; ModelError saying what is wrong."""
        names = await self.list_models()
        wanted = {self.model, f"{self.model}:latest"}
        if wanted & set(names):
            return f"ollama at {self.url}: model {self.model} available"
        try:
            response = await self._client.post(
                "/api/show", json={"model": self.model}, timeout=10.0
            )
        except httpx.HTTPError as error:
            raise error_for_exception(error, service=SERVICE, url=self.url, timeout=10.0) from None
        if response.status_code == 200:
            return f"ollama at {self.url}: model {self.model} available"
        shown = ", ".join(names[:8]) or "none installed"
        raise ModelError(f"unknown model {self.model!r} at ollama {self.url} (available: {shown})")

    async def _get_json(self, path: str, timeout: float) -> object:
        return await get_json(
            self._client, path, timeout=timeout, service=SERVICE, url=self.url, model=self.model
        )

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        started = time.perf_counter()
        timeout = request.options.timeout
        payload = {
            "model": self.model,
            "messages": build_messages(request),
            "stream": self.stream,
            "options": build_options(request.options),
        }
        collector = StreamCollector(on_token, started)
        tokens = 0
        try:
            try:
                tokens = await self._send(payload, timeout, collector)
            except httpx.RemoteProtocolError as error:
                if not is_stale_connection(error):
                    raise
                # a kept-alive connection the server had just closed: try once on a fresh one
                tokens = await self._send(payload, timeout, collector)
        except httpx.HTTPError as error:
            raise error_for_exception(
                error, service=SERVICE, url=self.url, timeout=timeout
            ) from None
        return ChatResult(
            text=collector.text,
            tokens=tokens or len(collector.pieces),
            latency_ms=(time.perf_counter() - started) * 1000,
            first_token_ms=collector.first_token_ms,
        )

    async def _send(
        self, payload: dict[str, object], timeout: float, collector: StreamCollector
    ) -> int:
        if self.stream:
            return await self._stream(payload, timeout, collector)
        return await self._complete(payload, timeout, collector)

    async def _complete(
        self, payload: dict[str, object], timeout: float, collector: StreamCollector
    ) -> int:
        response = await self._client.post("/api/chat", json=payload, timeout=timeout)
        if response.status_code >= 400:
            raise error_for_status(
                response, response.content, service=SERVICE, url=self.url, model=self.model
            )
        data = loads(response.content, "ollama /api/chat")
        self._raise_inline_error(data)
        collector.add(_content(data))
        return int(data.get("eval_count") or 0) if isinstance(data, dict) else 0

    async def _stream(
        self, payload: dict[str, object], timeout: float, collector: StreamCollector
    ) -> int:
        async with self._client.stream(
            "POST", "/api/chat", json=payload, timeout=timeout
        ) as response:
            if response.status_code >= 400:
                body = await response.aread()
                raise error_for_status(
                    response, body, service=SERVICE, url=self.url, model=self.model
                )
            done: int | None = None
            async for line in iter_lines(response):  # read to the end: keeps the connection
                data = loads(line, "ollama stream")
                self._raise_inline_error(data)
                collector.add(_content(data))
                if isinstance(data, dict) and data.get("done"):
                    done = int(data.get("eval_count") or 0)
            if done is not None:
                return done
        raise ModelError(
            f"stream broken: ollama at {self.url} ended the stream before done", retryable=True
        )

    def _raise_inline_error(self, data: object) -> None:
        if isinstance(data, dict) and data.get("error"):
            message = quote(str(data["error"]))
            if "not found" in message:
                raise ModelError(f"unknown model {self.model!r} at ollama {self.url}: {message}")
            raise ModelError(f"ollama at {self.url}: {message}", retryable=True)


def _content(data: object) -> str:
    if not isinstance(data, dict):
        return ""
    message = data.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        return content if isinstance(content, str) else ""
    return ""
