"""Ollama client (`ollama:MODEL[@URL]`): /api/chat with NDJSON token streaming, /api/tags.

Options map to Ollama's: temperature, seed, num_predict (max tokens, default
`DEFAULT_CHAT_MAX_TOKENS`); the system prompt is the first message. Requests say
`"think": false` unless `--think`: a thinking model (qwen3, deepseek-r1) otherwise spends the
token budget thinking; an answer that ends inside the thinking (no content) is a failed call
saying so, never an empty answer. The check needs
/api/tags listing the model by name ("no Ollama API at URL" without it); an /api/chat answer
with no `message` object (a proxy sending `{"response": ...}` lines) is a failed call, never
an empty answer. Requests ask for the first tokens' log-probabilities (`"logprobs": true,
"top_logprobs"`: Ollama 0.12.11 and later send them, older servers ignore the fields), the
answer's margin (`ChatResult.p_yes`). One pooled httpx client per instance, closed by
`aclose()`.
"""

from __future__ import annotations

import json
import time

import httpx

from kontest_tui.domain.margins import MARGIN_POSITIONS
from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatOptions, ChatRequest, ChatResult, TokenCallback
from kontest_tui.models.http_common import (
    DEFAULT_CHAT_MAX_TOKENS,
    HttpModel,
    StreamCollector,
    iter_lines,
    loads,
    quote,
    raise_if_only_thinking,
    send_bounded,
)
from kontest_tui.models.logprobs import TOP_LOGPROBS, positions_in
from kontest_tui.models.providers.ollama import DEFAULT_URL, PREFIX
from kontest_tui.models.providers.servers import server_spec_text

SERVICE = PREFIX  # "cannot reach ollama at URL"


def build_messages(request: ChatRequest) -> list[dict[str, str]]:
    """The wire messages: the system prompt (if any) first, then the chat."""
    messages = [
        {"role": m.role, "content": m.content} for m in request.messages if m.role != "system"
    ]
    if request.options.system_prompt:
        messages.insert(0, {"role": "system", "content": request.options.system_prompt})
    return messages


def build_options(options: ChatOptions) -> dict[str, object]:
    wire: dict[str, object] = {}
    if options.temperature is not None:  # None: the model's default
        wire["temperature"] = options.temperature
    if options.seed is not None:
        wire["seed"] = options.seed
    wire["num_predict"] = options.max_tokens or DEFAULT_CHAT_MAX_TOKENS
    return wire


class OllamaModel(HttpModel):
    """A ChatModel talking to an Ollama server (or anything speaking its /api/chat)."""

    service = SERVICE

    def __init__(self, model: str, url: str = DEFAULT_URL, *, stream: bool = True) -> None:
        super().__init__(model, url, stream=stream)
        self.spec = server_spec_text(PREFIX, model, self.url, DEFAULT_URL)

    def __repr__(self) -> str:
        return f"OllamaModel(model={self.model!r}, url={self.url!r}, stream={self.stream})"

    async def list_models(self) -> list[str]:
        """Model names installed on the server (/api/tags); "no Ollama API at URL" when the
        server has no /api/tags listing models (another kind of server, a wrong port)."""
        try:
            response = await self._client.get("/api/tags", timeout=10.0)
        except httpx.HTTPError as error:
            raise self.transport_error(error, 10.0) from None
        status = response.status_code
        if status in (401, 403) or status == 429 or status >= 500:
            raise self.status_error(response, response.content)
        try:
            data = json.loads(response.content) if status == 200 else None
        except ValueError:
            data = None
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, list):
            said = f"HTTP {status}" if status != 200 else "no model list"
            raise ModelError(f"no Ollama API at {self.url} (GET /api/tags: {said})", fatal=True)
        return sorted(str(m.get("name") or m.get("model")) for m in models if isinstance(m, dict))

    async def check(self) -> str:
        """One line: an Ollama API is there and lists the model by name (/api/tags; no
        /api/show, which some proxies answer 200 for any name); else a ModelError saying what."""
        names = await self.list_models()
        if _model_key(self.model) in {_model_key(name) for name in names}:
            return f"ollama at {self.url}: model {self.model} available"
        shown = ", ".join(names[:8]) or "none installed"
        raise ModelError(
            f"unknown model {self.model!r} at ollama {self.url} (available: {shown})", fatal=True
        )

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        started = time.perf_counter()
        timeout = request.options.timeout
        payload = {
            "model": self.model,
            "messages": build_messages(request),
            "stream": self.stream,
            "options": build_options(request.options),
            "think": request.options.think,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS,
        }
        collector = StreamCollector(on_token, started)
        tokens = await send_bounded(
            lambda: self._send(payload, timeout, collector),
            collector,
            timeout=timeout,
            service=SERVICE,
            url=self.url,
        )
        raise_if_only_thinking(
            collector, service=SERVICE, url=self.url, hint=_thinking_hint(request.options.think)
        )
        return ChatResult(
            text=collector.text,
            tokens=tokens or len(collector.pieces),
            latency_ms=(time.perf_counter() - started) * 1000,
            first_token_ms=collector.first_token_ms,
            stopped=collector.stopped,
            dropped=collector.dropped,
            p_yes=collector.p_yes,
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
            raise self.status_error(response, response.content)
        kind = response.headers.get("content-type", "")
        if "json" not in kind and not response.content.lstrip().startswith(b"{"):
            # A web page or another API's answer: every call would get it, asking again won't help.
            raise ModelError(
                f"ollama at {self.url}: /api/chat answered {kind or 'no content type'}, not "
                "JSON: not Ollama's chat API",
                fatal=True,
            )
        if _is_ndjson(kind, response.content):
            return self._read_ndjson(response.content, collector)
        data = loads(response.content, "ollama /api/chat")
        self._raise_inline_error(data)
        if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
            raise self._no_message(data, 1)
        collector.add(_content(data))
        collector.add_positions(positions_in(data.get("logprobs")))
        collector.thinking = collector.thinking or _thinks(data)
        if data.get("done_reason") == "length":
            collector.stopped = "length"
        return int(data.get("eval_count") or 0)

    async def _stream(
        self, payload: dict[str, object], timeout: float, collector: StreamCollector
    ) -> int:
        async with self._client.stream(
            "POST", "/api/chat", json=payload, timeout=timeout
        ) as response:
            if response.status_code >= 400:
                body = await response.aread()
                raise self.status_error(response, body)
            done: int | None = None
            lines = messages = 0
            first: object = None
            async for line in iter_lines(response):  # read to the end: keeps the connection
                data = loads(line, "ollama stream")
                self._raise_inline_error(data)
                lines += 1
                first = data if first is None else first
                if isinstance(data, dict) and isinstance(data.get("message"), dict):
                    messages += 1
                collector.add(_content(data))
                if isinstance(data, dict) and len(collector.alternatives) < MARGIN_POSITIONS:
                    collector.add_positions(positions_in(data.get("logprobs")))
                collector.thinking = collector.thinking or _thinks(data)
                if isinstance(data, dict) and data.get("done"):
                    done = int(data.get("eval_count") or 0)
                    if data.get("done_reason") == "length":
                        collector.stopped = "length"
            if lines and not messages:
                raise self._no_message(first, lines)
            if done is not None:
                return done
        raise ModelError(
            f"stream broken: ollama at {self.url} ended the stream before done", retryable=True
        )

    def _read_ndjson(self, body: bytes, collector: StreamCollector) -> int:
        """A whole answer that came as NDJSON lines (a proxy streaming although the request
        said `"stream": false`): read as a stream is, so it is an answer, not "malformed JSON"
        asked again and again; one without its `done` line is a broken answer."""
        done: int | None = None
        lines = [
            loads(line, "ollama /api/chat (NDJSON)") for line in body.splitlines() if line.strip()
        ]
        for data in lines:
            self._raise_inline_error(data)
            collector.add(_content(data))
            collector.thinking = collector.thinking or _thinks(data)
            if isinstance(data, dict) and data.get("done"):
                done = int(data.get("eval_count") or 0)
                if data.get("done_reason") == "length":
                    collector.stopped = "length"
        if lines and not any(
            isinstance(d, dict) and isinstance(d.get("message"), dict) for d in lines
        ):
            raise self._no_message(lines[0], len(lines))
        if done is None:
            raise ModelError(
                f"stream broken: ollama at {self.url} sent NDJSON lines without done",
                retryable=True,
            )
        return done

    def _no_message(self, first: object, lines: int) -> ModelError:
        """The failure of an /api/chat answer with no `message` object at all (a proxy sending
        /api/generate's `{"response": ...}` lines): not an answer, and every call would get it."""
        keys = ", ".join(sorted(str(key) for key in first)[:6]) if isinstance(first, dict) else ""
        shape = f" (its lines carry {keys})" if keys else ""
        return ModelError(
            f"ollama at {self.url}: /api/chat sent {lines} line{'s' if lines != 1 else ''} "
            f"without a `message`{shape}: not Ollama's chat API",
            fatal=True,
        )

    def _raise_inline_error(self, data: object) -> None:
        if isinstance(data, dict) and data.get("error"):
            message = quote(str(data["error"]))
            if "not found" in message:
                raise ModelError(
                    f"unknown model {self.model!r} at ollama {self.url}: {message}",
                    fatal=True,
                    rejected=True,
                )
            raise ModelError(f"ollama at {self.url}: {message}", retryable=True, rejected=True)


def _is_ndjson(content_type: str, body: bytes) -> bool:
    """Whether a whole /api/chat answer is NDJSON lines rather than one JSON object: said by
    its content type, or several lines each one object (pretty-printed JSON is not)."""
    if "ndjson" in content_type:
        return True
    lines = [line.strip() for line in body.strip().splitlines()]
    return len(lines) > 1 and all(line.startswith(b"{") and line.endswith(b"}") for line in lines)


def _thinking_hint(think: bool) -> str:
    """What to change when the answer ended inside the thinking: --think was given, or the
    model thinks although the request said `"think": false` (some always do)."""
    if think:
        return "try --max-tokens higher or leave out --think"
    return 'the model thinks although asked not to ("think": false): try --max-tokens higher'


def _content(data: object) -> str:
    if not isinstance(data, dict):
        return ""
    message = data.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        return content if isinstance(content, str) else ""
    return ""


def _thinks(data: object) -> bool:
    """Whether an /api/chat line carries the model's thinking (`message.thinking`)."""
    message = data.get("message") if isinstance(data, dict) else None
    return isinstance(message, dict) and bool(message.get("thinking"))


def _model_key(name: str) -> str:
    """A model name as Ollama matches it: case-folded, `:latest` when no tag is given, without
    the default registry's prefix (`registry.ollama.ai/library/`)."""
    name = name.strip().lower().removeprefix("registry.ollama.ai/").removeprefix("library/")
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"
