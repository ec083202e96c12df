"""One model served by several endpoints: calls spread by load, with health.

`--model openai:MODEL@URL1*8,URL2*4` (or `ollama:`) names the same model on several base URLs
(replicas of vLLM, Ollama, llama.cpp servers...). `*N` caps the calls in flight on that
endpoint (default: no cap of its own; the run's `--concurrency` bounds the total). Each call
goes to the healthy endpoint whose next answer is expected soonest: its measured answer time
times (its calls in flight + 1), the "peak EWMA" load of Finagle's and tower's balancers (the
estimate jumps up to a slower answer at once, comes down by an average of the faster ones,
and decays while the endpoint gets no answers, so a slow endpoint is tried again now and
then); ties (nothing measured yet: the fewest calls in flight) go to the most free capacity,
then the fewest calls so far, then the first listed. A replica 4x slower than the other so
holds a slot or two of eight instead of half of them. When every endpoint is at its cap the
call waits for a free slot.

Health: an endpoint whose call fails with an error of its own (connection refused or reset,
timeout, 5xx, a broken stream; and 401/403/404, a replica without the key or the model)
rests for a while (1 s, doubling to 60 s while it keeps failing; a success ends it) and gets
no calls while others are healthy. The call is then tried again at once on another healthy
endpoint (each endpoint once per call); only when none is left does the error go to the
executor (whose retry then goes elsewhere). A call that hangs (no token and no answer for
`hang_after`: HANG_FACTOR times the pool's typical answer time, at least HANG_MIN_S) is
moved off its endpoint the same way, and the endpoint rests. Errors that are the request's
(a 400, a 429 rate limit) do not count against the endpoint.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kontest_tui.domain.records import Conversation
from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatModel, ChatRequest, ChatResult, TokenCallback

REST_FIRST = 1.0  # seconds an endpoint rests after its first failure
REST_MAX = 60.0
HANG_FACTOR = 8.0  # a call idle this many typical answer times hangs
HANG_MIN_S = 5.0  # ... and never less than this
DECAY_S = 10.0  # an answer-time estimate with no new answer falls by e every DECAY_S seconds
FALL_WEIGHT = 0.3  # weight of a faster answer in the estimate (a slower one replaces it)


@dataclass(slots=True)
class Endpoint:
    """One base URL of the pool: its client, cap, load and health."""

    url: str
    model: ChatModel
    limit: int | None = None  # calls in flight at most (None: no cap of its own)
    in_flight: int = 0
    calls: int = 0
    failures: int = 0
    max_in_flight: int = 0
    resting_until: float = 0.0
    rest: float = 0.0
    moved: int = 0  # calls moved off it (they hung)
    answer_s: float | None = None  # its answer time (peak EWMA), None until it answers
    measured_at: float = 0.0

    def free(self) -> float:
        return math.inf if self.limit is None else self.limit - self.in_flight

    def expected_s(self, now: float, unknown: float) -> float:
        """Its answer time now (decayed since its last answer); `unknown` before any."""
        if self.answer_s is None:
            return unknown
        return self.answer_s * math.exp(-(now - self.measured_at) / DECAY_S)

    def measure(self, took: float, now: float) -> None:
        """An answer that took `took` seconds: a slower one than expected is the estimate at
        once (the peak), a faster one brings it down by FALL_WEIGHT."""
        expected = self.expected_s(now, took)
        self.answer_s = took if took >= expected else expected + FALL_WEIGHT * (took - expected)
        self.measured_at = now

    def healthy(self, now: float) -> bool:
        return now >= self.resting_until

    def rest_more(self) -> None:
        """Rest after a failure of its own: 1 s, doubling up to REST_MAX."""
        self.failures += 1
        self.rest = min(REST_MAX, self.rest * 2 if self.rest else REST_FIRST)
        self.resting_until = time.monotonic() + self.rest


def endpoint_failed(error: ModelError) -> bool:
    """Whether an error says the endpoint is unwell (not that the request was wrong): a
    retryable failure that is not a rate limit, or a replica's 401/403/404 (`fatal`: every
    call to it would fail the same way; another replica may hold the key and the model)."""
    if error.fatal:
        return True
    if not error.retryable:
        return False
    text = str(error).lower()
    return "429" not in text and "rate limit" not in text


class CallHung(Exception):
    """A call made no progress for the pool's hang bound (moved to another endpoint)."""


class ModelPool:
    """A ChatModel over several endpoints of one model (see the module docstring)."""

    def __init__(
        self,
        spec: str,
        endpoints: Sequence[Endpoint],
        *,
        hang_min: float = HANG_MIN_S,
        hang_factor: float = HANG_FACTOR,
    ) -> None:
        if not endpoints:
            raise ValueError("a model pool needs at least one endpoint")
        self.spec = spec
        self.endpoints = list(endpoints)
        self.hang_min = hang_min
        self.hang_factor = hang_factor
        self.typical_s: float | None = None  # moving average of answer times
        self._slots = asyncio.Condition()

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        for endpoint in self.endpoints:
            endpoint.model.prepare(conversations)

    async def check(self) -> str:
        """Every endpoint's check; fails only when none answers."""
        results = await asyncio.gather(
            *(endpoint.model.check() for endpoint in self.endpoints), return_exceptions=True
        )
        good = [result for result in results if isinstance(result, str)]
        if not good:
            first = results[0]
            raise first if isinstance(first, BaseException) else ModelError(str(first))
        down = [
            e.url for e, r in zip(self.endpoints, results, strict=True) if not isinstance(r, str)
        ]
        note = f"; not answering: {', '.join(down)}" if down else ""
        return f"{len(good)} of {len(self.endpoints)} endpoints ready: {good[0]}{note}"

    async def aclose(self) -> None:
        for endpoint in self.endpoints:
            await endpoint.model.aclose()

    def pick(self, now: float, tried: Collection[Endpoint] = ()) -> Endpoint | None:
        """The endpoint the next call goes to (not one of `tried`), or None when all are at
        their caps."""
        candidates = [e for e in self.endpoints if e not in tried]
        healthy = [e for e in candidates if e.healthy(now)]
        if not healthy and candidates:  # all resting: the one that is back soonest
            healthy = [min(candidates, key=lambda e: e.resting_until)]
        open_ = [e for e in healthy if e.free() > 0]
        if not open_:
            return None
        unknown = self.typical_s or 1.0
        return min(
            open_,
            key=lambda e: (
                (e.in_flight + 1) * e.expected_s(now, unknown),
                -e.free(),
                e.calls,
                self.endpoints.index(e),
            ),
        )

    def another_healthy(self, tried: Collection[Endpoint]) -> bool:
        """Whether an endpoint not yet tried for this call is healthy now."""
        now = time.monotonic()
        return any(e.healthy(now) for e in self.endpoints if e not in tried)

    def hang_after(self, timeout: float) -> float:
        """Seconds without progress after which a call hangs (the timeout when unknown)."""
        if self.typical_s is None:
            return timeout
        return max(self.hang_min, self.hang_factor * self.typical_s)

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        tried: list[Endpoint] = []
        while True:
            endpoint = await self._take(tried)
            tried.append(endpoint)
            started = time.monotonic()
            try:
                result = await self._watched(endpoint, request, on_token, tried)
            except CallHung:
                endpoint.moved += 1
                endpoint.rest_more()
                continue  # on another endpoint
            except ModelError as error:
                if not endpoint_failed(error):
                    raise
                endpoint.rest_more()
                if self.another_healthy(tried):
                    continue  # a replica's own failure: ask another one now
                raise
            finally:
                await self._give_back(endpoint)
            endpoint.rest = 0.0
            endpoint.resting_until = 0.0
            took = time.monotonic() - started
            endpoint.measure(took, time.monotonic())
            self.typical_s = took if self.typical_s is None else 0.8 * self.typical_s + 0.2 * took
            return result

    async def _take(self, tried: Collection[Endpoint]) -> Endpoint:
        """A slot on the endpoint `pick` chooses, waiting for one when all are at their caps
        (endpoints tried for this call are left out while another is there)."""
        async with self._slots:
            exclude = tried if len(tried) < len(self.endpoints) else ()
            endpoint = self.pick(time.monotonic(), exclude)
            while endpoint is None:
                await self._slots.wait()
                endpoint = self.pick(time.monotonic(), exclude)
            endpoint.in_flight += 1
            endpoint.calls += 1
            endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
            return endpoint

    async def _give_back(self, endpoint: Endpoint) -> None:
        async with self._slots:
            endpoint.in_flight -= 1
            self._slots.notify_all()

    async def _watched(
        self,
        endpoint: Endpoint,
        request: ChatRequest,
        on_token: TokenCallback | None,
        tried: Collection[Endpoint],
    ) -> ChatResult:
        """The endpoint's answer; CallHung when it makes no progress (no token, no answer)
        for `hang_after` while another endpoint is healthy to take the call."""
        progress = [time.monotonic()]

        def forward(text: str) -> None:
            progress[0] = time.monotonic()
            if on_token is not None:
                on_token(text)

        call = asyncio.ensure_future(endpoint.model.chat(request, forward))
        try:
            while True:
                bound = self.hang_after(request.options.timeout)
                wait = min(0.5, max(0.05, progress[0] + bound - time.monotonic()))
                done, _ = await asyncio.wait({call}, timeout=wait)
                if done:
                    return call.result()
                idle = time.monotonic() - progress[0]
                if idle >= self.hang_after(request.options.timeout) and self.another_healthy(tried):
                    raise CallHung(endpoint.url)
        finally:
            if not call.done():
                call.cancel()
                call.add_done_callback(_consume)
                await asyncio.wait({call})  # its connection closed before the next try


def _consume(task: asyncio.Future[ChatResult]) -> None:
    """Retrieve the outcome of a call given up on, so asyncio does not report it."""
    if not task.cancelled():
        task.exception()
