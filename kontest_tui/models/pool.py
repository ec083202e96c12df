"""One model served by several endpoints: calls spread by free capacity, with health.

`--model openai:MODEL@URL1*8,URL2*4` (or `ollama:`) names the same model on several base URLs
(replicas of vLLM, Ollama, llama.cpp servers...). `*N` caps the calls in flight on that
endpoint (default: no cap of its own; the run's `--concurrency` bounds the total). Each call
goes to the healthy endpoint with the most free capacity (cap minus calls in flight; ties: the
one with fewer calls so far, then the first listed); when every endpoint is at its cap the call
waits for a free slot. An endpoint whose call fails with a retryable error that is its own
(connection refused or reset, timeout, 5xx, a broken stream) rests for a while (1 s, doubling
to 60 s while it keeps failing; a success ends it) and gets no calls while others are healthy;
the call's error goes to the executor, whose retry then goes elsewhere. Errors that are the
request's (a 4xx) do not count against the endpoint.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from kontest_tui.domain.records import Conversation
from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatModel, ChatRequest, ChatResult, TokenCallback

REST_FIRST = 1.0  # seconds an endpoint rests after its first failure
REST_MAX = 60.0


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

    def free(self) -> float:
        return math.inf if self.limit is None else self.limit - self.in_flight

    def healthy(self, now: float) -> bool:
        return now >= self.resting_until


def endpoint_failed(error: ModelError) -> bool:
    """Whether an error says the endpoint is unwell (not that the request was wrong)."""
    if not error.retryable:
        return False
    text = str(error).lower()
    return "429" not in text and "rate limit" not in text


class ModelPool:
    """A ChatModel over several endpoints of one model (see the module docstring)."""

    def __init__(self, spec: str, endpoints: Sequence[Endpoint]) -> None:
        if not endpoints:
            raise ValueError("a model pool needs at least one endpoint")
        self.spec = spec
        self.endpoints = list(endpoints)
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

    def pick(self, now: float) -> Endpoint | None:
        """The endpoint the next call goes to, or None when all are at their caps."""
        healthy = [e for e in self.endpoints if e.healthy(now)]
        if not healthy:  # all resting: the one that is back soonest
            healthy = [min(self.endpoints, key=lambda e: e.resting_until)]
        open_ = [e for e in healthy if e.free() > 0]
        if not open_:
            return None
        return max(open_, key=lambda e: (e.free(), -e.calls, -self.endpoints.index(e)))

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        async with self._slots:
            endpoint = self.pick(time.monotonic())
            while endpoint is None:
                await self._slots.wait()
                endpoint = self.pick(time.monotonic())
            endpoint.in_flight += 1
            endpoint.calls += 1
            endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
        try:
            result = await endpoint.model.chat(request, on_token)
        except ModelError as error:
            if endpoint_failed(error):
                endpoint.failures += 1
                endpoint.rest = min(REST_MAX, endpoint.rest * 2 if endpoint.rest else REST_FIRST)
                endpoint.resting_until = time.monotonic() + endpoint.rest
            raise
        else:
            endpoint.rest = 0.0
            endpoint.resting_until = 0.0
            return result
        finally:
            async with self._slots:
                endpoint.in_flight -= 1
                self._slots.notify_all()
