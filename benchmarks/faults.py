"""Benchmark: a places run through a faulty OpenAI-compatible server, killed with -9 and resumed.

A local server (127.0.0.1 only: the simulated model of `kontest sim serve`, answering as
`sim:` does) injects a seeded mix of faults into chat calls: 429 with Retry-After, 500 with a
body that echoes the request's Authorization header, hangs past the client timeout, streams
cut mid-answer (half of them after an in-stream error that echoes the key). `kontest run`
(a real subprocess, `--concurrency 8`, the key in OPENAI_API_KEY) asks the first N places
relations through it; it is killed with SIGKILL at random moments and resumed
(`kontest run --resume`) until the session is done; a run that ends with failed turns is
resumed too (that asks them again). The same run against the same server without faults is
the reference.

Prints: calls made, faults injected by type, turns failed (before --resume asked them again),
kills, answers lost (turns without an answer at the end; must be 0), duplicate rows (must be
0), whether the report equals the fault-free one, secrets found at rest or in output (the
database files after every run, `kontest report`/`export` output and everything the runs
printed; must be 0)
and the time against the fault-free run. Every loop is bounded; it stops by itself.

    .venv/bin/python benchmarks/faults.py [--limit 120] [--kills 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kontest_tui.models.sim.http import HttpRequest, Reply, encode_json  # noqa: E402
from kontest_tui.models.sim.server import SimServer  # noqa: E402

SECRET = "sk-faultbench-" + "7Q2x9LmA4kP0vR8sT1uW"  # a fake key, the thing that must not leak
TIMEOUT_S = 2.0  # client timeout (--timeout); a hang lasts longer
HANG_S = TIMEOUT_S + 1.5
FAULTS = (  # (name, share of chat calls)
    ("429", 0.10),
    ("500 echo", 0.07),
    ("hang", 0.02),
    ("cut stream", 0.04),
    ("stream error echo", 0.03),
)
MAX_RUNS = 12  # kontest invocations per scenario, whatever happens
RUN_TIMEOUT_S = 600.0


class FaultServer(SimServer):
    """The simulated model, with seeded faults injected into chat completions."""

    def __init__(self, seed: int, faults: bool) -> None:
        super().__init__(profile="default", seed=0)
        self.random = random.Random(seed)
        self.faults_on = faults
        self.calls = 0
        self.injected: Counter[str] = Counter()

    def pick_fault(self) -> str | None:
        if not self.faults_on:
            return None
        draw = self.random.random()
        for name, share in FAULTS:
            if draw < share:
                return name
            draw -= share
        return None

    async def _openai_chat(self, request: HttpRequest, reply: Reply) -> None:
        self.calls += 1
        fault = self.pick_fault()
        if fault is None:
            await super()._openai_chat(request, reply)
            return
        self.injected[fault] += 1
        echoed = request.headers.get("authorization", "")
        if fault == "429":
            body = {"error": {"message": "slow down", "type": "rate_limit"}}
            await reply.send(429, encode_json(body), headers={"Retry-After": "0.2"})
        elif fault == "500 echo":
            body = {"error": {"message": f"upstream refused request with Authorization: {echoed}"}}
            await reply.send(500, encode_json(body))
        elif fault == "hang":
            await asyncio.sleep(HANG_S)
            reply.abort()
        else:
            await reply.start_stream("text/event-stream")
            first = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Ye"}}]}
            await reply.chunk(b"data: " + encode_json(first) + b"\n\n")
            if fault == "stream error echo":
                error = {"error": {"message": f"backend lost the stream ({echoed})"}}
                await reply.chunk(b"data: " + encode_json(error) + b"\n\n")
            reply.abort()


class ServerThread:
    """A FaultServer on its own event loop in a daemon thread (it outlives killed clients)."""

    def __init__(self, seed: int, faults: bool) -> None:
        self.server = FaultServer(seed, faults)
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.server.start())
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        ready.wait(30)
        self.url = self.server.url

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


def kontest_command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "kontest_tui.cli", *args]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["OPENAI_API_KEY"] = SECRET
    env["PYTHONPATH"] = str(ROOT)
    return env


class Scenario:
    """One database, the kontest invocations made on it and everything they printed."""

    def __init__(self, db: Path, url: str, limit: int) -> None:
        self.db = db
        self.url = url
        self.limit = limit
        self.output: list[str] = []
        self.runs = 0
        self.kills = 0
        self.failed_turns = 0
        self.secrets_at_rest = 0  # copies found in the database files after each run

    def start(self, resume: bool) -> subprocess.Popen[str]:
        self.runs += 1
        if resume:
            args = [
                "run",
                "--resume",
                "--retry-errors",
                "--db",
                str(self.db),
                "-q",
                "--concurrency",
                "8",
                "--timeout",
                str(TIMEOUT_S),
                "--no-cache",
            ]
        else:
            args = [
                "run",
                "--kg",
                "places",
                "--limit",
                str(self.limit),
                "--model",
                f"openai:sim@{self.url}/v1",
                "--db",
                str(self.db),
                "-q",
                "--concurrency",
                "8",
                "--timeout",
                str(TIMEOUT_S),
                "--no-cache",
            ]
        return subprocess.Popen(
            kontest_command(args),
            cwd=ROOT,
            env=environment(),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def finish(self, process: subprocess.Popen[str], kill_after: float | None) -> int:
        """Wait for the run (killing it with SIGKILL after `kill_after` s); its exit code."""
        try:
            out, err = process.communicate(timeout=kill_after if kill_after else RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            if kill_after is None:
                process.kill()
                raise
            process.send_signal(signal.SIGKILL)
            out, err = process.communicate()
            self.kills += 1
        self.output += [out, err]
        self.secrets_at_rest += self.secrets_in_files()  # before a resume deletes failed rows
        for line in err.splitlines():
            if line.startswith("kontest: error: ") and " turns failed" in line:
                self.failed_turns += int(line.split()[2])
            elif line.startswith("kontest: error: ") and " turn failed" in line:
                self.failed_turns += 1
        return process.returncode

    def status(self) -> str | None:
        if not self.db.exists():
            return None
        conn = sqlite3.connect(self.db)
        try:
            row = conn.execute(
                "SELECT status FROM sessions ORDER BY created DESC LIMIT 1"
            ).fetchone()
        except sqlite3.Error:
            return None
        finally:
            conn.close()
        return row[0] if row else None

    def run_to_done(self, kills: int, rng: random.Random, kill_window: float) -> float:
        """First run, then resumes until done: the first `kills` runs are killed at a random
        moment within `kill_window` seconds. Returns the wall time."""
        started = time.perf_counter()
        resume = False
        for _ in range(MAX_RUNS):
            if resume and self.status() is None:
                resume = False  # killed before the session was stored: start again
            kill_after = rng.uniform(0.3, kill_window) if self.kills < kills else None
            code = self.finish(self.start(resume), kill_after)
            resume = True
            if code == 0 and self.status() == "done":
                break
        return time.perf_counter() - started

    def report(self) -> dict[str, object]:
        done = subprocess.run(
            kontest_command(["report", "--db", str(self.db), "--format", "json"]),
            cwd=ROOT,
            env=environment(),
            text=True,
            capture_output=True,
            timeout=120,
            check=True,
        )
        self.output.append(done.stdout + done.stderr)
        report = json.loads(done.stdout)
        report.pop("session", None)
        report.pop("model", None)  # names the server's port
        for fmt in ("jsonl", "csv"):
            exported = subprocess.run(
                kontest_command(["export", "--db", str(self.db), "--format", fmt]),
                cwd=ROOT,
                env=environment(),
                text=True,
                capture_output=True,
                timeout=120,
            )
            self.output.append(exported.stdout + exported.stderr)
        return report

    def counts(self) -> tuple[int, int, int]:
        """(planned turns, turns without an answer, duplicate response rows)."""
        conn = sqlite3.connect(self.db)
        try:
            planned = conn.execute("SELECT planned FROM sessions").fetchone()[0]
            answered = conn.execute(
                "SELECT COUNT(*) FROM responses WHERE error IS NULL"
            ).fetchone()[0]
            duplicates = conn.execute(
                "SELECT COUNT(*) - COUNT(DISTINCT session || '/' || conversation || '/' || turn)"
                " FROM responses"
            ).fetchone()[0]
        finally:
            conn.close()
        return planned, planned - answered, duplicates

    def secrets_in_files(self) -> int:
        """Copies of the key in the database files (free pages and the WAL included)."""
        found = 0
        for path in self.db.parent.glob(self.db.name + "*"):
            found += path.read_bytes().count(SECRET.encode())
        return found

    def secrets_printed(self) -> int:
        """Copies of the key in everything the runs, the report and the exports printed."""
        return "\n".join(self.output).count(SECRET)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=120, help="places relations (6 turns each)")
    parser.add_argument("--kills", type=int, default=3, help="kill -9 this many runs")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kontest-faults-") as tmp:
        clean_server = ServerThread(args.seed, faults=False)
        clean = Scenario(Path(tmp) / "clean.db", clean_server.url, args.limit)
        clean_time = clean.run_to_done(0, rng, 1.0)
        clean_report = clean.report()
        clean_calls = clean_server.server.calls
        clean_server.stop()

        faulty_server = ServerThread(args.seed, faults=True)
        faulty = Scenario(Path(tmp) / "faulty.db", faulty_server.url, args.limit)
        faulty_time = faulty.run_to_done(args.kills, rng, max(0.5, clean_time * 0.8))
        faulty_report = faulty.report()
        server = faulty_server.server
        faulty_server.stop()
        planned, lost, duplicates = faulty.counts()
        at_rest = faulty.secrets_at_rest + faulty.secrets_in_files()
        printed = faulty.secrets_printed()

    injected = ", ".join(f"{name} {server.injected[name]}" for name, _ in FAULTS)
    same = faulty_report == clean_report
    print(
        f"places, {args.limit} relations ({planned} turns), concurrency 8, timeout {TIMEOUT_S:g} s"
    )
    print(f"fault-free run: {clean_calls} calls, {clean_time:.1f} s")
    print(
        f"faulty run:     {server.calls} calls, {sum(server.injected.values())} faults injected "
        f"({injected})"
    )
    print(
        f"                {faulty.runs} kontest runs, {faulty.kills} killed with SIGKILL, "
        f"{faulty.failed_turns} turns failed after all attempts (asked again by --resume)"
    )
    print(f"answers lost: {lost} (must be 0); duplicate rows: {duplicates} (must be 0)")
    print(f"report equals the fault-free run's: {'yes' if same else 'NO'}")
    print(
        f"secrets at rest: {at_rest} (database files after every run; must be 0); "
        f"printed or exported: {printed} (must be 0)"
    )
    print(
        f"time: {faulty_time:.1f} s vs {clean_time:.1f} s fault-free "
        f"(x{faulty_time / max(clean_time, 1e-9):.2f})"
    )
    if lost or duplicates or not same or at_rest or printed:
        sys.exit(1)


if __name__ == "__main__":
    main()
