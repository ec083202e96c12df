"""Benchmark: the HTTP model clients against `kontest sim serve --profile slow` (50 ms per answer).

The same calls at concurrency 1 and 8 for the Ollama and OpenAI clients (streaming and not);
prints calls/s, the speedup of concurrency 8 over 1, and the client+server overhead per call
beyond the simulated 50 ms (mean latency - 50 ms). Also the raw cost per call with no latency.

    .venv/bin/python benchmarks/model_clients.py [--calls 400]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kontest_tui.models.base import ChatRequest, Message  # noqa: E402
from kontest_tui.models.ollama import OllamaModel  # noqa: E402
from kontest_tui.models.openai import OpenAIModel  # noqa: E402

SERVER_MS = 50.0


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "kontest_tui.cli", "sim", "serve", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def make(kind: str, url: str, model: str):
    stream = kind.endswith("stream")
    if kind.startswith("ollama"):
        return OllamaModel(model, url, stream=stream)
    return OpenAIModel(model, f"{url}/v1", stream=stream)


async def run(
    kind: str, url: str, model: str, calls: int, concurrency: int
) -> tuple[float, float, float]:
    """(wall seconds, mean latency ms, client CPU ms per call) for `calls` distinct questions."""
    client = make(kind, url, model)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(calls):
        queue.put_nowait(index)
    latencies: list[float] = []

    async def worker() -> None:
        while not queue.empty():
            index = queue.get_nowait()
            request = ChatRequest((Message("user", f"Does Bench{index} have a Mark{index}?"),))
            started = time.perf_counter()
            await client.chat(request, lambda _piece: None)
            latencies.append((time.perf_counter() - started) * 1000)

    await client.chat(ChatRequest((Message("user", "warm up"),)))
    started = time.perf_counter()
    cpu = time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - started
    await client.aclose()
    return wall, statistics.fmean(latencies), cpu / calls * 1000


async def main(calls: int) -> None:
    process, url = start_server()
    try:
        print(f"sim server {url}; {calls} calls per run; slow profile = {SERVER_MS:.0f} ms/answer")
        for kind in ("ollama-stream", "ollama-whole", "openai-stream", "openai-whole"):
            wall1, lat1, cpu1 = await run(kind, url, "slow", calls, 1)
            wall8, lat8, cpu8 = await run(kind, url, "slow", calls, 8)
            print(
                f"{kind:14} c=1 {calls / wall1:6.1f}/s  c=8 {calls / wall8:6.1f}/s  "
                f"speedup {wall1 / wall8:4.2f}x  latency-50ms c=1 {lat1 - SERVER_MS:5.2f} ms  "
                f"c=8 {lat8 - SERVER_MS:5.2f} ms  client CPU/call c=8 {cpu8:4.2f} ms"
            )
        for kind in ("ollama-stream", "openai-stream"):
            wall, _latency, cpu = await run(kind, url, "default", calls * 2, 8)
            print(
                f"{kind:14} no latency, c=8: {calls * 2 / wall:7.1f} calls/s, "
                f"{wall / (calls * 2) * 1000:5.2f} ms wall per call (client + server on one machine), "
                f"client CPU {cpu:4.2f} ms/call"
            )
        await compare_with_bare_httpx(url, calls * 2)
    finally:
        process.terminate()
        process.wait(timeout=10)


async def compare_with_bare_httpx(url: str, calls: int) -> None:
    """Client CPU per call: our Ollama client vs the same requests made with bare httpx."""
    import httpx

    bare = httpx.AsyncClient(base_url=url, trust_env=False)
    ours = OllamaModel("default", url)

    async def bare_call(index: int) -> None:
        body = {"model": "default", "messages": [{"role": "user", "content": f"q{index}"}]}
        async with bare.stream("POST", "/api/chat", json=body) as response:
            async for _line in response.aiter_lines():
                pass

    async def our_call(index: int) -> None:
        await ours.chat(ChatRequest((Message("user", f"q{index}"),)), lambda _piece: None)

    async def cpu_per_call(call) -> float:  # noqa: ANN001
        semaphore = asyncio.Semaphore(8)

        async def one(index: int) -> None:
            async with semaphore:
                await call(index)

        await one(-1)
        started = time.process_time()
        await asyncio.gather(*(one(index) for index in range(calls)))
        return (time.process_time() - started) / calls * 1000

    results = {"bare": [], "ours": []}
    for _ in range(3):  # interleaved, best of three: the machine is shared
        results["bare"].append(await cpu_per_call(bare_call))
        results["ours"].append(await cpu_per_call(our_call))
    await bare.aclose()
    await ours.aclose()
    bare_ms, ours_ms = min(results["bare"]), min(results["ours"])
    print(
        f"client CPU per streamed call at c=8: bare httpx {bare_ms:4.2f} ms, "
        f"ollama client {ours_ms:4.2f} ms -> our layer adds {ours_ms - bare_ms:+5.2f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    asyncio.run(main(parser.parse_args().calls))
