"""Benchmark: a pool of two replicas of one model, one much slower than the other.

Two `kontest sim serve` servers (in this process, each on its own event loop in a thread,
127.0.0.1): a fast one answering in `--fast-ms` and a slow one in `--slow-ms` (25x by
default). The same `--calls` distinct questions go through the executor at `--concurrency`
(a) to the fast server alone and (b) to the pool `ollama:sim@SLOW,FAST` (models/pool.py).
Prints each run's wall time, the calls each replica answered, and the pool's time over the
fast one's alone: a pool that gives the slow replica slots by its answer time is about as
fast as the fast replica alone, one that gives it half the slots about twice as slow.

    .venv/bin/python benchmarks/pool_balance.py [--calls 400] [--concurrency 8]
        [--fast-ms 10] [--slow-ms 250]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kontest_tui.domain.records import Conversation, Query  # noqa: E402
from kontest_tui.models.sim.server import SimServer  # noqa: E402
from kontest_tui.models.sim.switches import ServeSwitches  # noqa: E402
from kontest_tui.models.specs import open_model  # noqa: E402
from kontest_tui.run.executor import Executor, ExecutorConfig  # noqa: E402


class ServerThread:
    """A SimServer answering `latency_ms` late, on its own event loop in a daemon thread."""

    def __init__(self, latency_ms: float) -> None:
        self.server = SimServer(switches=ServeSwitches(latency_ms=latency_ms))
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(timeout=30)
        self.url = self.server.url

    @property
    def chats(self) -> int:
        return self.server.posts["/api/chat"]

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)


def questions(count: int, tag: str) -> list[Conversation]:
    return [
        Conversation(
            f"{tag}{i}/t1",
            f"{tag}{i}",
            "atomic",
            "Q1",
            (Query(f"{tag}{i}", "t1", f"Does {tag}{i} have a Part{i}?"),),
        )
        for i in range(count)
    ]


async def timed_run(spec: str, conversations: list[Conversation], concurrency: int) -> float:
    """Seconds to ask every conversation through `spec` (no answer shared, none failed)."""
    model = open_model(spec, stream=False)
    config = ExecutorConfig(concurrency=concurrency, share_answers=False)
    started = time.perf_counter()
    try:
        result = await Executor(model, config=config).run(conversations)
    finally:
        await model.aclose()
    elapsed = time.perf_counter() - started
    if result.progress.failed:
        raise SystemExit(f"{spec}: {result.progress.failed} calls failed")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--fast-ms", type=float, default=10.0)
    parser.add_argument("--slow-ms", type=float, default=250.0)
    args = parser.parse_args()
    fast, slow = ServerThread(args.fast_ms), ServerThread(args.slow_ms)
    try:
        alone = asyncio.run(
            timed_run(f"ollama:sim@{fast.url}", questions(args.calls, "Alone"), args.concurrency)
        )
        before = fast.chats
        pooled = asyncio.run(
            timed_run(
                f"ollama:sim@{slow.url},{fast.url}",
                questions(args.calls, "Pooled"),
                args.concurrency,
            )
        )
        to_fast, to_slow = fast.chats - before, slow.chats
    finally:
        fast.close()
        slow.close()
    print(
        f"{args.calls} calls at concurrency {args.concurrency}; replicas answering in "
        f"{args.fast_ms:g} ms and {args.slow_ms:g} ms"
    )
    print(f"fast replica alone: {alone:.2f} s")
    print(
        f"pool of both:       {pooled:.2f} s ({to_fast} calls to the fast one, {to_slow} to the slow)"
    )
    print(f"pool / fast alone:  {pooled / alone:.2f}x the time")


if __name__ == "__main__":
    main()
