"""Throughput of the executor: the same 2,000 calls against `kontest sim serve` (slow profile,
about 50 ms per answer) at concurrency 1, 8 and 64, each response stored in a session DB (run.writer: batched by time); then a
real places session (atomic and sequential conversations, cache on, a fresh DB each time) at
concurrency 1 and 8, with the model calls made against the distinct requests of the session
(every call asked once: a sequential conversation's first turn reuses its atomic answer).

Prints the speedup of concurrency 8 and 64 over 1 (targets >= 6x, >= 40x) and the tool's overhead per call
beyond the server's latency (target < 0.5 ms), measured four ways:
- executor: wall time at concurrency 1 minus the time spent inside the client's chat()
  (queueing, context, parsing, events, the batched SQLite writes);
- whole tool: wall time at concurrency 1 minus bare sequential httpx calls with the same
  payloads (adds the HTTP client's own work; noisy on a shared machine);
- whole tool, CPU: this process's CPU time per call at concurrency 1 (executor, model client,
  HTTP, SQLite) minus that of the bare httpx calls: the least noisy of the whole-tool figures;
- in process, with a model that answers instantly (executor + parsing + batched SQLite writes only).
The speedup at 64 is bounded by the CPU one call costs this process (its event loop runs on one
core): 40x over 1 at 50 ms per answer needs < 1.3 ms per call, HTTP client included.

Run: .venv/bin/python benchmarks/throughput.py [--calls 2000] [--model-kind ollama|openai]
     [--places-only]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kontest_tui.domain.records import Conversation, Query, Relation  # noqa: E402
from kontest_tui.kg.io import load_graph  # noqa: E402
from kontest_tui.models.base import ChatOptions, ChatRequest, ChatResult, Message  # noqa: E402
from kontest_tui.models.specs import open_model  # noqa: E402
from kontest_tui.run.executor import Executor, ExecutorConfig, cache_key  # noqa: E402
from kontest_tui.run.session import (  # noqa: E402
    create_session,
    options_from_dict,
    run_session,
)
from kontest_tui.run.spec import SessionSpec  # noqa: E402
from kontest_tui.run.writer import BatchWriter  # noqa: E402
from kontest_tui.store import Store  # noqa: E402
from kontest_tui.store.records import NewSession  # noqa: E402

CPU_SECONDS: dict[object, float] = {}  # CPU time of this process per run (key: concurrency, "bare")
OPTIONS = ChatOptions(seed=0, timeout=30.0, system_prompt="Answer with yes or no.")


def build_workload(calls: int) -> tuple[list[Relation], list[Conversation]]:
    """`calls` distinct atomic questions (one per relation)."""
    relations = [
        Relation(f"R{i}>C{i}", f"R{i}", f"C{i}", "contains", (f"R{i}", f"C{i}"))
        for i in range(calls)
    ]
    conversations = [
        Conversation(
            f"{r.id}/t1",
            r.id,
            "atomic",
            "Q1",
            (Query(r.id, "t1", f"Does Region {r.parent} have a town called {r.child}?"),),
        )
        for r in relations
    ]
    return relations, conversations


def new_session(store: Store, relations: list[Relation], conversations: list[Conversation]) -> str:
    return store.sessions.create(
        NewSession(
            kg_name="benchmark",
            kg_json={},
            templates_json={},
            template_ids=["t1"],
            model="benchmark",
            options={},
            labels={},
        ),
        relations=relations,
        conversations=conversations,
    )


async def run_executor(model, conversations, concurrency: int, db: Path) -> float:  # noqa: ANN001
    """Seconds to ask every conversation through the executor into a fresh session."""
    relations = [Relation(c.relation_id, "a", "b", "contains", ("a", "b")) for c in conversations]
    with Store(db) as store:
        session = new_session(store, relations, conversations)
        executor = Executor(
            model,
            OPTIONS,
            config=ExecutorConfig(concurrency=concurrency, use_cache=False, share_answers=False),
            sink=(writer := BatchWriter(store, session)),
            cache=writer,
        )
        started = time.perf_counter()
        cpu = time.process_time()
        result = await executor.run(conversations)
        writer.close()
        elapsed = time.perf_counter() - started
        CPU_SECONDS[concurrency] = time.process_time() - cpu
        assert result.progress.done == len(conversations), result.progress
        assert not result.progress.errors, result.progress.errors
    return elapsed


async def run_bare(url: str, conversations: list[Conversation]) -> float:
    """Seconds for the same requests as bare sequential httpx calls (Ollama, non-streaming)."""
    async with httpx.AsyncClient(base_url=url, timeout=30.0) as client:
        started = time.perf_counter()
        cpu = time.process_time()
        for conversation in conversations:
            payload = {
                "model": "slow",
                "stream": False,
                "options": {"temperature": 0.0, "seed": 0},
                "messages": [
                    {"role": "system", "content": OPTIONS.system_prompt},
                    {"role": "user", "content": conversation.turns[0].text},
                ],
            }
            response = await client.post("/api/chat", json=payload)
            response.raise_for_status()
        CPU_SECONDS["bare"] = time.process_time() - cpu
        return time.perf_counter() - started


class TimedModel:
    """Wraps a model and adds up the time spent inside its chat() and the calls made."""

    def __init__(self, model) -> None:  # noqa: ANN001
        self.model = model
        self.spec = model.spec
        self.seconds = 0.0
        self.calls = 0

    def prepare(self, conversations) -> None:  # noqa: ANN001
        self.model.prepare(conversations)

    async def chat(self, request: ChatRequest, on_token=None) -> ChatResult:  # noqa: ANN001
        started = time.perf_counter()
        self.calls += 1
        try:
            return await self.model.chat(request, on_token)
        finally:
            self.seconds += time.perf_counter() - started

    async def check(self) -> str:
        return await self.model.check()

    async def aclose(self) -> None:
        await self.model.aclose()


class InstantModel:
    """Answers at once: what is left of a call's time is the tool's own overhead."""

    spec = "instant"

    def prepare(self, conversations) -> None:  # noqa: ANN001
        return None

    async def chat(self, request: ChatRequest, on_token=None) -> ChatResult:  # noqa: ANN001
        return ChatResult(text="Yes.", tokens=1)

    async def check(self) -> str:
        return "instant"

    async def aclose(self) -> None:
        return None


def distinct_requests(store: Store, session: str, spec: str) -> int:
    """How many different chats (system prompt, earlier turns and answers) the session asks."""
    options = options_from_dict(store.sessions.get(session)["options_json"])
    answers = {(r["conversation"], r["turn"]): r["raw"] for r in store.responses.rows(session)}
    keys: set[str] = set()
    for conversation in store.relations.load_conversations(session):
        messages: list[Message] = []
        if conversation.system_prompt and not options.system_prompt:
            messages.append(Message("system", conversation.system_prompt))
        elif options.system_prompt:
            messages.append(Message("system", options.system_prompt))
        for turn, query in enumerate(conversation.turns):
            messages.append(Message("user", query.text))
            keys.add(cache_key(spec, ChatOptions(), messages))
            messages.append(Message("assistant", answers[conversation.id, turn]))
    return len(keys)


async def run_places(spec: str, concurrency: int, db: Path) -> tuple[float, int, int, int]:
    """A places session (cache on, fresh DB): seconds, model calls, distinct requests, turns."""
    kg = load_graph("places")
    model = TimedModel(open_model(spec, seed=0, stream=False))
    try:
        with Store(db) as store:
            session = create_session(store, SessionSpec(kg, model=spec))
            started = time.perf_counter()
            outcome = await run_session(
                store, session, model, config=ExecutorConfig(concurrency=concurrency)
            )
            elapsed = time.perf_counter() - started
            assert not outcome.result.progress.errors, outcome.result.progress.errors
            distinct = distinct_requests(store, session, spec)
            turns = outcome.result.progress.total
    finally:
        await model.aclose()
    return elapsed, model.calls, distinct, turns


async def places_report(url: str, kind: str, folder: Path) -> None:
    spec = f"ollama:slow@{url}" if kind == "ollama" else f"openai:slow@{url}/v1"
    c1, calls1, distinct, turns = await run_places(spec, 1, folder / "p1.db")
    c8, calls8, distinct8, _ = await run_places(spec, 8, folder / "p8.db")
    assert distinct == distinct8
    print(
        f"places session (atomic + sequential, cache on): {turns} turns, {distinct} distinct requests"
    )
    print(
        f"  concurrency 1: {c1:.2f} s, {calls1} model calls ({calls1 / distinct:.2f} per distinct request)"
    )
    print(
        f"  concurrency 8: {c8:.2f} s, {calls8} model calls ({calls8 / distinct:.2f} per distinct request)"
    )
    print(f"  speedup 8 vs 1: {c1 / c8:.2f}x  (target >= 6x)")


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kontest_tui.cli",
            "sim",
            "serve",
            "--port",
            "0",
            "--profile",
            "slow",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


async def main(calls: int, kind: str, places_only: bool) -> None:
    _, conversations = build_workload(calls)
    process, url = start_server()
    if places_only:
        try:
            with tempfile.TemporaryDirectory() as folder:
                await places_report(url, kind, Path(folder))
        finally:
            process.terminate()
            process.wait(timeout=10)
        return
    try:
        spec = f"ollama:slow@{url}" if kind == "ollama" else f"openai:slow@{url}/v1"
        with tempfile.TemporaryDirectory() as folder:
            model = TimedModel(open_model(spec, seed=0, stream=False))
            try:
                # Warm up as a long run would be: imports done, 64 connections open.
                await run_executor(model, conversations[:128], 64, Path(folder) / "warm.db")
                model.seconds = 0.0
                c1 = await run_executor(model, conversations, 1, Path(folder) / "c1.db")
                inside = model.seconds
                c8 = await run_executor(model, conversations, 8, Path(folder) / "c8.db")
                c64 = await run_executor(model, conversations, 64, Path(folder) / "c64.db")
            finally:
                await model.aclose()
            bare = await run_bare(url, conversations)
            instant = await run_executor(
                InstantModel(), conversations, 8, Path(folder) / "instant.db"
            )
            await places_report(url, kind, Path(folder))
    finally:
        process.terminate()
        process.wait(timeout=10)
    per_c1 = c1 / calls * 1000
    per_bare = bare / calls * 1000
    print(f"calls: {calls} via {spec.split('@')[0]} against kontest sim serve (slow profile)")
    print(f"concurrency 1: {c1:.2f} s  ({calls / c1:.1f} calls/s, {per_c1:.2f} ms per call)")
    print(f"concurrency 8: {c8:.2f} s  ({calls / c8:.1f} calls/s)")
    print(f"speedup 8 vs 1: {c1 / c8:.2f}x  (target >= 6x)")
    print(f"concurrency 64: {c64:.2f} s  ({calls / c64:.1f} calls/s)")
    print(f"speedup 64 vs 1: {c1 / c64:.2f}x  (target >= 40x)")
    print(f"bare httpx, sequential: {bare:.2f} s  ({per_bare:.2f} ms per call)")
    print(
        f"executor overhead per call beyond the model call (c=1 wall minus time in chat()): "
        f"{(c1 - inside) / calls * 1000:.3f} ms  (target < 0.5 ms)"
    )
    print(
        f"whole tool vs bare httpx (c=1, includes the HTTP client, noisy): "
        f"{per_c1 - per_bare:+.3f} ms per call"
    )
    tool_cpu = CPU_SECONDS[1] / calls * 1000
    bare_cpu = CPU_SECONDS["bare"] / calls * 1000
    print(
        f"CPU per call at concurrency 1: whole tool {tool_cpu:.3f} ms, bare httpx {bare_cpu:.3f} ms; "
        f"the tool's own: {tool_cpu - bare_cpu:+.3f} ms  (target < 0.5 ms)"
    )
    print(
        f"in-process overhead per call (instant model, executor + parse + batched SQLite writes): "
        f"{instant / calls * 1000:.3f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--model-kind", choices=("ollama", "openai"), default="ollama")
    parser.add_argument("--places-only", action="store_true", help="only the places session")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.model_kind, arguments.places_only))
