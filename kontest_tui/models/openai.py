"""OpenAI-compatible client (`openai:MODEL[@BASE_URL]`, `openai-completions:MODEL[@BASE_URL]`).

Chat mode: /chat/completions with SSE streaming (`data:` lines ending in `[DONE]`); works with
OpenAI, vLLM, llama.cpp server, LM Studio. Completions mode: /completions with a few-shot
prompt (models/completion_prompt.py: one per answer format, the chat rendered as
Question/Answer turns), for base models without a chat template. Both ask for the first tokens' log-probabilities (chat `logprobs`/`top_logprobs`,
completions `logprobs`) and give the answer's margin (`ChatResult.p_yes`); a server refusing
them (HTTP 400 naming logprobs: OpenAI's reasoning models) is asked without them from then on.
The API key (OPENAI_API_KEY) lives only in the client's headers: never in `spec`, `repr` or
error messages.
"""

from __future__ import annotations

import time

import httpx

from kontest_tui.domain.margins import MARGIN_POSITIONS
from kontest_tui.errors import ModelError, ModelSpecError
from kontest_tui.models.base import ChatRequest, ChatResult, TokenCallback
from kontest_tui.models.completion_prompt import (
    CompletionPrompt,
    load_completion_prompt,
    render_completion_prompt,
)
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
from kontest_tui.models.provider import CHAT, COMPLETIONS
from kontest_tui.models.providers import openai_completions
from kontest_tui.models.providers.openai import (
    API_KEY_ENV,
    DEFAULT_URL,
    PREFIX,
    max_tokens_field,
)
from kontest_tui.models.providers.servers import normalise_base_url, server_spec_text
from kontest_tui.redact import register_secret

SERVICE = PREFIX  # "cannot reach openai at URL"
MODES = (CHAT, COMPLETIONS)


class OpenAIModel(HttpModel):
    """A ChatModel for OpenAI-compatible servers, in chat or completions mode."""

    service = SERVICE
    access_hint = f"check {API_KEY_ENV}"

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        mode: str = CHAT,
        stream: bool = True,
        prompt: CompletionPrompt | None = None,
        spec: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ModelSpecError(f"unknown OpenAI mode {mode!r} (use chat or completions)")
        register_secret(api_key)  # masked in every error text from now on
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        super().__init__(model, normalise_base_url(base_url), stream=stream, headers=headers)
        self.mode = mode
        self.prompt = prompt
        # Ask for the first tokens' log-probabilities (the answers' margins) until the server
        # refuses them (HTTP 400 naming logprobs): then never again for this model.
        self.logprobs = True
        prefix = PREFIX if mode == CHAT else openai_completions.PREFIX
        self.spec = spec or server_spec_text(prefix, model, self.url, DEFAULT_URL)
        self._max_tokens_field = max_tokens_field(self.url)

    @property
    def base_url(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r})"

    async def list_models(self) -> list[str]:
        """Model ids the server offers (/models)."""
        data = await self.get_json("/models", timeout=10.0)
        items = data.get("data", []) if isinstance(data, dict) else []
        return sorted(str(item.get("id")) for item in items if isinstance(item, dict))

    async def check(self) -> str:
        """One line: reachable, authorised, model known; ModelError saying what is wrong."""
        names = await self.list_models()
        if self.model in names:
            return f"openai-compatible server at {self.base_url}: model {self.model} available"
        try:
            response = await self._client.get(f"/models/{self.model}", timeout=10.0)
        except httpx.HTTPError as error:
            raise self.transport_error(error, 10.0) from None
        if response.status_code == 200:
            return f"openai-compatible server at {self.base_url}: model {self.model} available"
        shown = ", ".join(names[:8]) or "none listed"
        raise ModelError(f"unknown model {self.model!r} at {self.base_url} (available: {shown})")

    def build_payload(self, request: ChatRequest) -> tuple[str, dict[str, object]]:
        """The endpoint path and JSON body for one request."""
        options = request.options
        payload: dict[str, object] = {"model": self.model, "stream": self.stream}
        if self.mode == CHAT:
            messages = [
                {"role": m.role, "content": m.content}
                for m in request.messages
                if m.role != "system"
            ]
            if options.system_prompt:
                messages.insert(0, {"role": "system", "content": options.system_prompt})
            payload["messages"] = messages
            payload[self._max_tokens_field] = options.max_tokens or DEFAULT_CHAT_MAX_TOKENS
            if self.logprobs:
                payload["logprobs"] = True
                payload["top_logprobs"] = TOP_LOGPROBS
            path = "/chat/completions"
        else:
            prompt = self.prompt or load_completion_prompt(request.answer_format)
            payload["prompt"] = render_completion_prompt(request.messages, prompt)
            payload["max_tokens"] = options.max_tokens or prompt.max_tokens
            if prompt.stop:
                payload["stop"] = list(prompt.stop)
            if self.logprobs:
                payload["logprobs"] = TOP_LOGPROBS
            path = "/completions"
        if options.temperature is not None:  # None: the server's default
            payload["temperature"] = options.temperature
        if options.seed is not None:
            payload["seed"] = options.seed
        return path, payload

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        started = time.perf_counter()
        try:
            collector, tokens = await self._ask(request, on_token, started)
        except ModelError as error:
            if not (self.logprobs and _refuses_logprobs(error)):
                raise
            self.logprobs = False  # this server refuses them: ask without, now and from now on
            collector, tokens = await self._ask(request, on_token, started)
        return ChatResult(
            text=collector.text,
            tokens=tokens or len(collector.pieces),
            latency_ms=(time.perf_counter() - started) * 1000,
            first_token_ms=collector.first_token_ms,
            stopped=collector.stopped,
            dropped=collector.dropped,
            p_yes=collector.p_yes,
        )

    async def _ask(
        self, request: ChatRequest, on_token: TokenCallback | None, started: float
    ) -> tuple[StreamCollector, int]:
        """One call within the request's timeout: what arrived, and the tokens counted."""
        timeout = request.options.timeout
        path, payload = self.build_payload(request)
        collector = StreamCollector(on_token, started)
        tokens = await send_bounded(
            lambda: self._send(path, payload, timeout, collector),
            collector,
            timeout=timeout,
            service=SERVICE,
            url=self.base_url,
        )
        raise_if_only_thinking(collector, service=SERVICE, url=self.base_url, hint=THINKING_HINT)
        return collector, tokens

    async def _send(
        self, path: str, payload: dict[str, object], timeout: float, collector: StreamCollector
    ) -> int:
        if self.stream:
            return await self._stream(path, payload, timeout, collector)
        return await self._complete(path, payload, timeout, collector)

    async def _complete(
        self, path: str, payload: dict[str, object], timeout: float, collector: StreamCollector
    ) -> int:
        response = await self._client.post(path, json=payload, timeout=timeout)
        if response.status_code >= 400:
            raise self.status_error(response, response.content)
        data = loads(response.content, f"{path} response")
        self._raise_inline_error(data)
        collector.add(self._choice_text(data, streamed=False))
        collector.thinking = collector.thinking or _reasons(data, streamed=False)
        collector.add_positions(positions_in(_choice_logprobs(data)))
        if _finish_reason(data) == "length":
            collector.stopped = "length"
        usage = data.get("usage") if isinstance(data, dict) else None
        return int(usage.get("completion_tokens") or 0) if isinstance(usage, dict) else 0

    async def _stream(
        self, path: str, payload: dict[str, object], timeout: float, collector: StreamCollector
    ) -> int:
        async with self._client.stream("POST", path, json=payload, timeout=timeout) as response:
            if response.status_code >= 400:
                body = await response.aread()
                raise self.status_error(response, body)
            finished = saw_data = False
            async for line in iter_lines(response):
                if not line.startswith(b"data:"):
                    continue  # SSE comments, event names, ids
                data_text = line[5:].strip()
                saw_data = True
                if data_text == b"[DONE]":
                    finished = True  # read on to the end of the body: keeps the connection
                    continue
                data = loads(data_text, "SSE stream")
                self._raise_inline_error(data)
                collector.add(self._choice_text(data, streamed=True))
                collector.thinking = collector.thinking or _reasons(data, streamed=True)
                if len(collector.alternatives) < MARGIN_POSITIONS:
                    collector.add_positions(positions_in(_choice_logprobs(data)))
                reason = _finish_reason(data)
                if reason == "length":
                    collector.stopped = "length"
                finished = finished or reason is not None
        if finished:  # [DONE], or a finish_reason from servers that send no [DONE]
            return 0
        if not saw_data:
            raise ModelError(
                f"{self.base_url} sent no SSE data lines: not an OpenAI-compatible stream"
            )
        raise ModelError(
            f"stream broken: {self.base_url} ended the stream before [DONE]", retryable=True
        )

    def _choice_text(self, data: object, *, streamed: bool) -> str:
        if not isinstance(data, dict):
            return ""
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        choice = choices[0]
        if self.mode == COMPLETIONS:
            text = choice.get("text")
        else:
            holder = choice.get("delta" if streamed else "message")
            text = holder.get("content") if isinstance(holder, dict) else None
        return text if isinstance(text, str) else ""

    def _raise_inline_error(self, data: object) -> None:
        if isinstance(data, dict) and data.get("error"):
            error = data["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise ModelError(
                f"{self.base_url}: {quote(str(message))}", retryable=True, rejected=True
            )


# What to change when a reasoning model's answer ended inside its reasoning.
THINKING_HINT = (
    "try --max-tokens higher (e.g. 1024) or serve the model with its thinking off "
    "(llama-server: --reasoning-budget 0)"
)


def _reasons(data: object, *, streamed: bool) -> bool:
    """Whether a chat completion (or a streamed chunk) carries the model's reasoning, which
    servers send beside the answer: `reasoning_content` (vLLM's reasoning parsers, LiteLLM,
    llama-server's --reasoning-format deepseek) or `reasoning` (newer vLLM, OpenRouter)."""
    if not isinstance(data, dict):
        return False
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    holder = choices[0].get("delta" if streamed else "message")
    return isinstance(holder, dict) and bool(
        holder.get("reasoning_content") or holder.get("reasoning")
    )


def _refuses_logprobs(error: ModelError) -> bool:
    """A request rejected (HTTP 400) because it asked for log-probabilities."""
    text = str(error).lower()
    return not error.retryable and "400" in text and "logprob" in text


def _choice_logprobs(data: object) -> object:
    """The first choice's `logprobs` value (None when there is none)."""
    if isinstance(data, dict):
        choices = data.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            return choices[0].get("logprobs")
    return None


def _finish_reason(data: object) -> object:
    if isinstance(data, dict):
        choices = data.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            return choices[0].get("finish_reason")
    return None
