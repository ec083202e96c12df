"""Benchmark: the OpenAI clients against xllamacpp's real llama.cpp server (Gemma 3 270M).

Needs the [local] extra. Starts one llama.cpp server per slot count in this process
(models.local.start_server) and runs a places session (`--limit` relations) through the
engine (create_session + run_session, a throw-away store):

1. `openai:` chat with no --max-tokens and `openai-completions:`: seconds per call (wall
   time / calls at the given concurrency), valid share (answers whose first word is yes/no),
   failed calls, answers stopped by the length limit;
2. reproducibility: completions at concurrency 1, 2, 4 against a server with 4 slots (batched
   decoding) and against one with 1 slot (what `local:` uses), counting answers that differ
   from concurrency 1;
3. with `--threads`: compute threads, the one setting a user's own llama-server most often
   gets wrong on a busy machine: completions at concurrency 4 against 4 slots on llama.cpp's
   default threads (one per core, what `llama-server` starts with) and on 1 thread (what
   `local:` uses), seconds per call and the ratio.

    .venv/bin/python benchmarks/local_model.py [--limit 20] [--skip-chat] [--skip-repro]
        [--threads]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kontest_tui.domain.records import Answer  # noqa: E402
from kontest_tui.kg.io import load_graph  # noqa: E402
from kontest_tui.models.base import ChatOptions  # noqa: E402
from kontest_tui.models.local import local_extra_available, model_file, start_server  # noqa: E402
from kontest_tui.models.openai import OpenAIModel  # noqa: E402
from kontest_tui.run.api import SessionSpec, create_session  # noqa: E402
from kontest_tui.run.executor import ExecutorConfig  # noqa: E402
from kontest_tui.run.session import run_session  # noqa: E402
from kontest_tui.store.database import Store  # noqa: E402


def run_places(
    url: str, mode: str, limit: int, concurrency: int, timeout: float = 60.0
) -> dict[str, object]:
    """One places session through `mode` at `concurrency`: timing, counts and the answers."""
    kg = load_graph("places")
    spec = "openai" if mode == "chat" else "openai-completions"
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "b.db") as store:
        options = ChatOptions(timeout=timeout)
        session = create_session(
            store,
            SessionSpec(
                kg, model=f"{spec}:gemma@{url}/v1", kg_name="places", limit=limit, options=options
            ),
        )
        model = OpenAIModel("gemma", f"{url}/v1", mode=mode)
        config = ExecutorConfig(concurrency=concurrency, use_cache=False)

        async def go() -> None:
            try:
                await run_session(store, session, model, config=config)
            finally:
                await model.aclose()

        started = time.perf_counter()
        asyncio.run(go())
        elapsed = time.perf_counter() - started
        responses = store.responses.load(session)
    failed = sum(r.error is not None for r in responses.values())
    latency = [r.latency_ms for r in responses.values() if r.error is None]
    valid = sum(r.error is None and r.answer is not Answer.INVALID for r in responses.values())
    return {
        "calls": len(responses),
        "elapsed": elapsed,
        "per_call": elapsed / max(len(responses), 1),
        "valid": valid,
        "failed": failed,
        "latency": sum(latency) / max(len(latency), 1) / 1000,
        "answers": {key: (r.raw if r.error is None else None) for key, r in responses.items()},
    }


def report(name: str, result: dict[str, object]) -> None:
    calls = int(result["calls"])  # type: ignore[call-overload]
    print(
        f"{name:<30} {calls:>4} calls  {result['per_call']:.2f} s/call (wall), "
        f"{result['latency']:.2f} s mean latency  "
        f"valid {result['valid']}/{calls} = {100 * int(result['valid']) / max(calls, 1):.1f}%  "  # type: ignore[call-overload]
        f"failed {result['failed']}"
    )


def start_threaded_server(gguf: Path, threads: int, slots: int = 4) -> object:
    """A llama.cpp server on `threads` compute threads (-1: llama.cpp's default, one per
    core), as a user starts `llama-server -np SLOTS [-t THREADS]`; kept alive by the caller."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = 4096
    params.n_parallel = slots
    params.verbosity = -1
    params.warmup = False
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    return xllamacpp.Server(params)


def compare_threads(gguf: Path, limit: int, timeout: float) -> None:
    """Completions at c=4 on 4 slots: llama.cpp's default threads against one thread."""
    seconds = {}
    for threads in (-1, 1):
        server = start_threaded_server(gguf, threads)
        url = str(server.listening_address).rstrip("/")  # type: ignore[attr-defined]
        result = run_places(url, "completions", limit, 4, timeout)
        name = "default threads" if threads < 0 else "1 thread"
        report(f"4 slots, c=4, {name}", result)
        seconds[threads] = float(result["elapsed"])  # type: ignore[arg-type]
        print(f"  {name}: {seconds[threads]:.1f} s for the session")
        del server
    print(f"default threads / 1 thread: {seconds[-1] / seconds[1]:.1f}x the time")


def differ(a: dict[object, str | None], b: dict[object, str | None]) -> int:
    return sum(a.get(key) != b.get(key) for key in set(a) | set(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--skip-chat", action="store_true")
    parser.add_argument("--skip-repro", action="store_true")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per call")
    parser.add_argument(
        "--threads", action="store_true", help="only compare default threads with one thread"
    )
    args = parser.parse_args()
    if not local_extra_available():
        print("skipped: the [local] extra is not installed")
        return
    gguf = model_file("gemma3-270m")
    if args.threads:
        compare_threads(gguf, args.limit, args.timeout)
        return
    batched = start_server(gguf, slots=4)
    print(f"llama.cpp server (xllamacpp, 4 slots) at {batched}; places --limit {args.limit}")
    if not args.skip_chat:
        for mode in ("chat", "completions"):
            report(
                f"openai{'' if mode == 'chat' else '-completions'} (c=2)",
                run_places(batched, mode, args.limit, 2, args.timeout),
            )
    if args.skip_repro:
        return
    for slots, url in ((4, batched), (1, start_server(gguf, slots=1))):
        runs = {c: run_places(url, "completions", args.limit, c, args.timeout) for c in (1, 2, 4)}
        base = runs[1]["answers"]
        for c, result in runs.items():
            report(f"completions {slots} slot(s) c={c}", result)
        line = ", ".join(
            f"c={c}: {differ(base, runs[c]['answers'])}/{runs[c]['calls']} differ"  # type: ignore[arg-type]
            for c in (2, 4)
        )
        print(f"  {slots} slot(s), answers unlike concurrency 1: {line}")


if __name__ == "__main__":
    main()
