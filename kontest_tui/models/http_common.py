"""What the HTTP model clients share: the pooled httpx client, streaming line reader, error mapping.

Every failure becomes one `ModelError` line with the right `retryable` flag (and
`retry_after` from a 429's Retry-After header), so the executor can decide on retries.
Bodies are decoded as UTF-8 with replacement: invalid bytes never crash a client. Any text
a server sent that is quoted in an error passes `redact.scrub` before it is cut to length (a
key cut in half would no longer match).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import httpx

from kontest_tui.domain.answers import MAX_ANSWER_CHARS
from kontest_tui.domain.margins import MARGIN_POSITIONS, first_margin
from kontest_tui.domain.records import Conversation
from kontest_tui.errors import ModelError
from kontest_tui.models.base import TokenCallback
from kontest_tui.models.http_client import ShardedClient
from kontest_tui.redact import scrub, scrub_values

MAX_CONNECTIONS = 64
ERROR_BODY_LIMIT = 300
# What a 401/403 tells to check, unless the client knows better (its API key's variable)
ACCESS_HINT = "check the server's access settings"
# The answer-length limit chat calls send when the session sets none (--max-tokens): room for
# "Yes, ... because ..." (the answer is read from the first word), not for a runaway model.
DEFAULT_CHAT_MAX_TOKENS = 64


def make_client(base_url: str, headers: dict[str, str] | None = None) -> ShardedClient:
    """The pooled client of one model instance (keep-alive connections, no env proxies)."""
    return ShardedClient(base_url, headers, max_connections=MAX_CONNECTIONS)


class HttpModel:
    """The set-up every HTTP model client shares: the model's name, the server's base URL
    (no trailing slash), whether answers stream, one pooled client (closed by `aclose`), and
    its failures worded alike. A client sets `spec`, `service` (its name in messages:
    "cannot reach ollama at URL") and, when it sends a key, `access_hint`."""

    service = "server"
    access_hint = ACCESS_HINT
    spec: str

    def __init__(
        self, model: str, url: str, *, stream: bool, headers: dict[str, str] | None = None
    ) -> None:
        self.model = model
        self.url = url.rstrip("/")
        self.stream = stream
        self._client = make_client(self.url, headers)

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        """Nothing to prepare."""

    async def aclose(self) -> None:
        await self._client.aclose()

    def status_error(self, response: httpx.Response, body: bytes) -> ModelError:
        """The ModelError for an HTTP error status from this server."""
        return error_for_status(
            response,
            body,
            service=self.service,
            url=self.url,
            model=self.model,
            access_hint=self.access_hint,
        )

    def transport_error(self, error: Exception, timeout: float) -> ModelError:
        """The ModelError for a transport failure talking to this server."""
        return error_for_exception(error, service=self.service, url=self.url, timeout=timeout)

    async def get_json(self, path: str, timeout: float) -> object:
        """GET `path` and decode its JSON; every failure is one readable ModelError."""
        try:
            response = await self._client.get(path, timeout=timeout)
        except httpx.HTTPError as error:
            raise self.transport_error(error, timeout) from None
        if response.status_code >= 400:
            raise self.status_error(response, response.content)
        return loads(response.content, f"{self.service} {path}")


def decode(data: bytes) -> str:
    """UTF-8 text with invalid bytes replaced by U+FFFD."""
    return data.decode("utf-8", "replace")


def quote(text: str, limit: int = ERROR_BODY_LIMIT) -> str:
    """Server text fit to quote in an error: one line, secrets scrubbed, then cut to `limit`."""
    return scrub(" ".join(text.split()))[:limit]


def loads(line: bytes | str, what: str) -> object:
    """Parse one JSON document or raise a retryable ModelError saying what broke."""
    text = decode(line) if isinstance(line, bytes) else line
    try:
        return json.loads(text)
    except ValueError:
        snippet = quote(text, 80)
        raise ModelError(
            f"{what}: malformed JSON from the server: {snippet!r}", retryable=True
        ) from None


async def iter_lines(response: httpx.Response) -> AsyncIterator[bytes]:
    """The non-empty lines of a streamed body, as bytes (split on LF, CR stripped)."""
    buffer = b""
    async for chunk in response.aiter_bytes():
        buffer += chunk
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                break
            line = buffer[:end].rstrip(b"\r")
            buffer = buffer[end + 1 :]
            if line:
                yield line
    if buffer.strip():
        yield buffer.rstrip(b"\r")


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: delay-seconds (int or decimal) or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_detail(body: bytes) -> str:
    """The server's error message from a JSON error body (OpenAI or Ollama shape), else the text."""
    text = decode(body[:65536])
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data.get("message"))
        if isinstance(error, dict):
            error = error.get("message") or error.get("code")
        if error:
            text = str(error)
    return quote(text)


def error_for_status(
    response: httpx.Response,
    body: bytes,
    *,
    service: str,
    url: str,
    model: str,
    access_hint: str = ACCESS_HINT,
) -> ModelError:
    """The ModelError for an HTTP error status (4xx/5xx); `access_hint` is what a 401/403
    tells to check."""
    status = response.status_code
    detail = _error_detail(body)
    suffix = f": {detail}" if detail else ""
    if status in (401, 403):
        return ModelError(
            f"unauthorized (HTTP {status}) at {url}: {access_hint}{suffix}",
            fatal=True,
            rejected=True,
        )
    if status == 404:
        return ModelError(
            f"unknown model {model!r} at {service} {url} (HTTP 404){suffix}",
            fatal=True,
            rejected=True,
        )
    if status == 429:
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        after = f", retry after {retry_after:g} s" if retry_after is not None else ""
        return ModelError(
            f"rate limited (HTTP 429) by {service} at {url}{after}{suffix}",
            retryable=True,
            retry_after=retry_after,
        )
    if status >= 500 or status == 408:
        return ModelError(
            f"server error (HTTP {status}) from {service} at {url}{suffix}",
            retryable=True,
            rejected=True,
        )
    return ModelError(
        f"request rejected (HTTP {status}) by {service} at {url}{suffix}"
        f"{rejection_hint(status, detail)}",
        rejected=True,
    )


def rejection_hint(status: int, detail: str) -> str:
    """What to change when a 400 names an option the request sent: reasoning models (OpenAI's
    o-series and gpt-5, ...) take only their default temperature."""
    if status == 400 and "temperature" in detail.lower():
        return (
            " (the request sent a temperature; a model that takes only its default one is "
            "asked with --temperature default, which sends none)"
        )
    return ""


def is_stale_connection(error: httpx.RemoteProtocolError) -> bool:
    """True when the server closed a kept-alive connection before sending any response
    (safe to resend once; llama.cpp's server closes idle connections after 5 s)."""
    return "without sending a response" in str(error)


def _is_refused(error: BaseException) -> bool:
    """True when a connect failure (or anything in its cause chain) was a refused connection."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or "refused" in str(current).lower():
            return True
        nested = getattr(current, "exceptions", None)  # ExceptionGroup / OSError lists
        if isinstance(nested, list | tuple) and any(
            isinstance(item, BaseException) and _is_refused(item) for item in nested
        ):
            return True
        current = current.__cause__ or current.__context__
    return False


def error_for_exception(error: Exception, *, service: str, url: str, timeout: float) -> ModelError:
    """The ModelError for a transport failure (refused, timeout, broken stream)."""
    if isinstance(error, httpx.ConnectTimeout):
        return ModelError(f"cannot reach {service} at {url}: connection timed out", retryable=True)
    if isinstance(error, httpx.TimeoutException):
        return ModelError(f"{service} at {url} timed out after {timeout:g} s", retryable=True)
    if isinstance(error, httpx.ConnectError):
        reason = (
            "connection refused"
            if _is_refused(error)
            else (" ".join(str(error).split()) or "connection failed")
        )
        return ModelError(f"cannot reach {service} at {url}: {reason}", retryable=True)
    if isinstance(error, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return ModelError(
            f"stream broken: {service} at {url} closed the connection mid-answer", retryable=True
        )
    if isinstance(error, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ModelError(f"bad {service} URL {url}: {error}")
    if isinstance(error, httpx.HTTPError):
        return ModelError(f"{service} at {url}: {' '.join(str(error).split())}", retryable=True)
    return ModelError(f"{service} at {url}: {type(error).__name__}: {error}")


async def send_bounded(
    send: Callable[[], Awaitable[int]],
    collector: StreamCollector,
    *,
    timeout: float,
    service: str,
    url: str,
) -> int:
    """Run one call (`send` returns the token count) within `timeout` seconds in all.

    A timeout after tokens arrived ends the answer there: the partial text is kept (the
    collector's `stopped` = "timeout") instead of asking again from scratch. A timeout with
    nothing received is a retryable ModelError. A kept-alive connection the server had just
    closed is tried once more on a fresh one; other transport failures become ModelErrors.
    """
    try:
        async with asyncio.timeout(timeout):
            try:
                return await send()
            except httpx.RemoteProtocolError as error:
                if not is_stale_connection(error):
                    raise
                return await send()
    except (TimeoutError, httpx.TimeoutException) as error:
        if collector.pieces and not isinstance(error, httpx.ConnectTimeout):
            collector.stopped = "timeout"
            return 0
        if isinstance(error, httpx.TimeoutException):
            raise error_for_exception(error, service=service, url=url, timeout=timeout) from None
        raise ModelError(
            f"{service} at {url} timed out after {timeout:g} s", retryable=True
        ) from None
    except httpx.HTTPError as error:
        raise error_for_exception(error, service=service, url=url, timeout=timeout) from None


def raise_if_only_thinking(
    collector: StreamCollector, *, service: str, url: str, hint: str
) -> None:
    """A thinking model that spent the answer's budget (or time) thinking and said nothing:
    a failed call saying so (`hint`: what to change), never an empty answer parsed invalid."""
    if collector.thinking and not collector.text.strip():
        raise ModelError(
            f"{service} at {url}: the answer ended inside the model's thinking "
            f"({collector.stopped or 'done'}, no answer given); {hint}"
        )


# Characters of a streamed answer held in memory: what the store keeps, and room for a key
# that straddles the limit to be masked whole before the answer is cut.
KEEP_CHARS = MAX_ANSWER_CHARS + 1024


class StreamCollector:
    """Collects streamed pieces, forwarding each to the token callback and timing the first;
    `stopped` says why the answer ended early ("timeout", "length"), None when it did not.
    Past KEEP_CHARS pieces are only counted (`dropped`), so memory per answer is bounded.
    The first tokens' log-probabilities, where the server sends them, are kept in
    `alternatives` (models.logprobs positions) for the answer's margin (`p_yes`)."""

    __slots__ = (
        "pieces",
        "on_token",
        "started",
        "first_token_ms",
        "stopped",
        "thinking",
        "kept",
        "dropped",
        "alternatives",
    )

    def __init__(self, on_token: TokenCallback | None, started: float) -> None:
        self.pieces: list[str] = []
        self.on_token = on_token
        self.started = started
        self.first_token_ms: float | None = None
        self.stopped: str | None = None
        # the model sent thinking (Ollama's `message.thinking`, OpenAI-compatible servers'
        # `reasoning_content` / `reasoning`)
        self.thinking = False
        self.kept = 0  # characters held in `pieces`
        self.dropped = 0  # characters received past KEEP_CHARS, never held
        self.alternatives: list[list[tuple[str, float]]] = []

    def add(self, piece: str) -> None:
        if not piece:
            return
        if self.first_token_ms is None:
            self.first_token_ms = (time.perf_counter() - self.started) * 1000
        if self.kept < KEEP_CHARS:
            self.pieces.append(piece)
            self.kept += len(piece)
        else:  # the store keeps MAX_ANSWER_CHARS: an endless answer costs no memory
            self.dropped += len(piece)
        if self.on_token is not None:
            self.on_token(piece)

    def add_positions(self, positions: list[list[tuple[str, float]]]) -> None:
        """Log-probabilities of the next tokens (only the first MARGIN_POSITIONS are kept)."""
        room = MARGIN_POSITIONS - len(self.alternatives)
        if room > 0 and positions:
            self.alternatives.extend(positions[:room])

    @property
    def p_yes(self) -> float | None:
        """P(yes | yes or no) from the first tokens' alternatives (None: none given)."""
        return first_margin(self.alternatives) if self.alternatives else None

    @property
    def text(self) -> str:
        """The answer, with the values of the API keys in use masked (a server echoing one)."""
        return scrub_values("".join(self.pieces))
