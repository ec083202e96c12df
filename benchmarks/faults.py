"""Benchmark: a places run through a faulty OpenAI-compatible server, killed with -9 and resumed.

A local server (127.0.0.1 only: the simulated model of `kontest sim serve`, answering as
`sim:` does) injects a seeded mix of faults into chat calls: 429 with Retry-After, 500 with a
body that echoes the request's Authorization header, hangs past the client timeout, streams
cut mid-answer (half of them after an in-stream error that echoes the key), streams that stall
after "Ye" past the timeout (cut before they can be read: failed turns, asked again). `kontest run`
(a real subprocess, `--concurrency 8`, the key in OPENAI_API_KEY) asks the first N places
relations through it; it is killed with SIGKILL at random moments and resumed
(`kontest run --resume`) until the session is done; a run that ends with failed turns is
resumed too (that asks them again). The same run against the same server without faults is
the reference.

Four more cases: lease loss (a run paused with SIGSTOP while its lease is taken over by a
resume: it must stop asking and say so, the resume finishes; on a server that answers each
call after 0.1 s, so the run is still asking when it is paused, whatever --limit is), a pool
of three replicas (one answers 401 echoing the key, one never answers, one is healthy: every
turn answered), a migration race (12 processes opening one new database at once: 0
failures) and the session list on a running session of 600,000 answers (counted from
indexes; the time is printed beside a scan of its rows).

Hostile input: a hostile model (HostileServer: a KG whose labels hold terminal escapes, bidi
overrides and zero-width characters; answers wrapped in them with the key inside in one of 9
encodings; 500s echoing it in another; a connection check refused with the key in all of
them), then every way its answers go out (reports, exports to stdout and to files, cards,
the sessions list, a probe); a full disk (the run's files limited in size with
RLIMIT_FSIZE: the session must not stay "running"); and the corpus of
benchmarks/hostile_inputs.py (522 generated malformed inputs, each given to the command it
feeds). The 500s of the faulty run echo the key in the 9 encodings too, and every secret
count below counts all of them.

Prints: calls made, faults injected by type, turns failed (before --resume asked them again),
kills, answers lost (turns without an answer at the end; must be 0), duplicate rows (must be
0), whether the report equals the fault-free one, secrets found at rest or in output (the
database files after every run, `kontest report`/`export` output and everything the runs
printed; must be 0) and the time against the fault-free run; then the hostile-input cases
and one TOTAL line: tried / lost / duplicated / secrets / escapes passed / tracebacks, all
0 but tried (exit 1 otherwise). Every loop is bounded; it stops by itself.

    .venv/bin/python benchmarks/faults.py [--limit 120] [--kills 3] [--seed 7] [--rows 600000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hostile_inputs import count_secrets, print_summary, run_corpus, secret_forms  # noqa: E402

from kontest_tui.models.sim.http import HttpRequest, Reply, encode_json  # noqa: E402
from kontest_tui.models.sim.server import SimServer, Turn  # noqa: E402
from kontest_tui.safe_text import has_unsafe  # noqa: E402

SECRET = "sk-faultbench-" + "7Q2x9LmA4kP0vR8sT1uW"  # a fake key, the thing that must not leak
TIMEOUT_S = 2.0  # client timeout (--timeout); a hang lasts longer
HANG_S = TIMEOUT_S + 1.5
FAULTS = (  # (name, share of chat calls)
    ("429", 0.10),
    ("500 echo", 0.07),
    ("hang", 0.02),
    ("stall", 0.02),  # "Ye", then nothing past the timeout: cut before it could be read
    ("cut stream", 0.04),
    ("stream error echo", 0.03),
)
MAX_RUNS = 12  # kontest invocations per scenario, whatever happens
# The lease-loss case asks 40 relations, each chat call answered after 0.1 s: at concurrency
# 8 the run asks for 40 x 6 / 8 x 0.1 = 3 s at least, well past its pause at 0.4 s, whatever
# --limit is (at --limit 40 a fast server's run was done before the pause).
LEASE_RELATIONS = 40
LEASE_DELAY_S = 0.1
HOSTILE_RELATIONS = 20  # relations of the hostile-model case
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
        if fault in ("500 echo", "stream error echo"):  # as a re-encoding proxy echoes it
            forms = list(secret_forms(echoed.removeprefix("Bearer ")).values())
            echoed = f"Bearer {forms[self.injected[fault] % len(forms)]}"
        if fault == "429":
            body = {"error": {"message": "slow down", "type": "rate_limit"}}
            await reply.send(429, encode_json(body), headers={"Retry-After": "0.2"})
        elif fault == "500 echo":
            body = {"error": {"message": f"upstream refused request with Authorization: {echoed}"}}
            await reply.send(500, encode_json(body))
        elif fault == "hang":
            await asyncio.sleep(HANG_S)
            reply.abort()
        elif fault == "stall":
            await reply.start_stream("text/event-stream")
            first = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Ye"}}]}
            await reply.chunk(b"data: " + encode_json(first) + b"\n\n")
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


class ReplicaServer(FaultServer):
    """A replica of the pool case: `deny` answers every chat call 401 with the caller's key
    in the body (a replica without the key), `frozen` never answers."""

    def __init__(self, behaviour: str) -> None:
        super().__init__(0, faults=False)
        self.behaviour = behaviour

    async def _openai_chat(self, request: HttpRequest, reply: Reply) -> None:
        self.calls += 1
        if self.behaviour == "deny":
            echoed = request.headers.get("authorization", "")
            body = {"error": {"message": f"invalid key in {echoed}", "code": "invalid_api_key"}}
            await reply.send(401, encode_json(body))
        elif self.behaviour == "frozen":
            await asyncio.sleep(3600)
        else:
            await super()._openai_chat(request, reply)


class SlowServer(FaultServer):
    """The simulated model answering each chat call after `delay` seconds: a run on it is
    still asking when the lease-loss case pauses it, whatever --limit is."""

    def __init__(self, delay: float) -> None:
        super().__init__(0, faults=False)
        self.delay = delay

    async def _openai_chat(self, request: HttpRequest, reply: Reply) -> None:
        await asyncio.sleep(self.delay)
        await super()._openai_chat(request, reply)


class ServerThread:
    """A FaultServer on its own event loop in a daemon thread (it outlives killed clients)."""

    def __init__(self, seed: int, faults: bool, server: FaultServer | None = None) -> None:
        self.server = server or FaultServer(seed, faults)
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
        with contextlib.suppress(Exception):  # a frozen replica's calls are still waiting
            asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_cancel_the_rest(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


async def _cancel_the_rest() -> None:
    """End the server loop's other tasks (a frozen replica's calls) before it stops."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def kontest_command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "kontest_tui.cli", *args]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["OPENAI_API_KEY"] = SECRET
    env["PYTHONPATH"] = str(ROOT)
    return env


class Scenario:
    """One database, the kontest invocations made on it and everything they printed."""

    def __init__(self, db: Path, url: str, limit: int, model: str | None = None) -> None:
        self.db = db
        self.url = url
        self.limit = limit
        self.model = model or f"openai:sim@{url}/v1"
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
                self.model,
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
        """Copies of the key, in any encoding (hostile_inputs.secret_forms), in the database
        files (free pages and the WAL included)."""
        found = 0
        for path in self.db.parent.glob(self.db.name + "*"):
            found += count_secrets(path.read_bytes().decode("latin-1"), SECRET)
        return found

    def secrets_printed(self) -> int:
        """Copies of the key, in any encoding, in everything the runs, the report and the
        exports printed."""
        return count_secrets("\n".join(self.output), SECRET)

    def tracebacks(self) -> int:
        return "\n".join(self.output).count("Traceback")


def lease_loss_case(folder: Path, url: str, limit: int) -> dict[str, object]:
    """Run A is paused (SIGSTOP) mid-run and its lease aged past the stale bound, as if it
    had been stopped for minutes; run B resumes the session and finishes it; A is let go
    (SIGCONT). A must stop asking and say so, B's session stays done, nothing lost."""
    scenario = Scenario(folder / "lease.db", url, limit)
    first = scenario.start(resume=False)
    assert first.stderr is not None
    line = first.stderr.readline()  # "session ID: model ..." once the run asks
    session = line.split()[1].rstrip(":") if line.startswith("session ") else ""
    time.sleep(0.4)
    first.send_signal(signal.SIGSTOP)
    conn = sqlite3.connect(scenario.db, timeout=30)
    with conn:
        conn.execute("UPDATE session_leases SET renewed = '2000-01-01T00:00:00.000+00:00'")
    conn.close()
    resumed = 0
    for _ in range(3):  # a pause inside A's commit holds the write lock: try again
        resumed = scenario.finish(scenario.start(resume=True), None)
        if scenario.status() == "done":
            break
    first.send_signal(signal.SIGCONT)
    out, err = first.communicate(timeout=RUN_TIMEOUT_S)
    scenario.output += [line, out, err]
    planned, lost, duplicates = scenario.counts()
    return {
        "session": session,
        "first_exit": first.returncode,
        "first_said": next((x for x in err.splitlines() if "taken over" in x), ""),
        "resume_exit": resumed,
        "status": scenario.status(),
        "planned": planned,
        "lost": lost,
        "duplicates": duplicates,
        "secrets": scenario.secrets_in_files() + scenario.secrets_printed(),
    }


def migration_race_case(folder: Path, processes: int = 12) -> int:
    """Processes opening one new database at the same moment; how many failed."""
    path = folder / "raced.db"
    script = (
        "import sys, time\n"
        "from kontest_tui.store.database import Store\n"
        "time.sleep(max(0.0, float(sys.argv[2]) - time.time()))\n"
        "Store(sys.argv[1]).close()\n"
    )
    start = time.time() + 2.0
    running = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), str(start)],
            cwd=ROOT,
            env=environment(),
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    for process in running:
        process.communicate(timeout=120)
    return sum(process.returncode != 0 for process in running)


def pool_case(folder: Path, limit: int) -> dict[str, object]:
    """One model on three replicas: one answers 401 with the key in its body (no key there),
    one never answers (frozen), one is healthy. Every turn must be answered, none failed."""
    servers = [ServerThread(0, False, ReplicaServer(kind)) for kind in ("deny", "frozen", "ok")]
    urls = ",".join(f"{server.url}/v1" for server in servers)
    scenario = Scenario(folder / "pool.db", servers[-1].url, limit, model=f"openai:sim@{urls}")
    started = time.perf_counter()
    scenario.run_to_done(0, random.Random(0), 1.0)
    took = time.perf_counter() - started
    calls = [server.server.calls for server in servers]
    for server in servers:
        server.stop()
    planned, lost, duplicates = scenario.counts()
    return {
        "calls": calls,
        "runs": scenario.runs,
        "failed": scenario.failed_turns,
        "status": scenario.status(),
        "planned": planned,
        "lost": lost,
        "duplicates": duplicates,
        "secrets": scenario.secrets_at_rest
        + scenario.secrets_in_files()
        + scenario.secrets_printed(),
        "seconds": took,
    }


# What a hostile model wraps its answers in: a screen clear, an OSC 52 clipboard write, a
# window title, BEL, NUL, a one-byte C1 CSI, bidi overrides and isolates, zero-width
# characters and a tag character.
HOSTILE_PREFIX = "\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07"
HOSTILE_SUFFIX = "\x00\x9b31m \u202edlrow\u200b \u2066x\u2069\u200d\U000e0041"
HOSTILE_LABELS = {  # places nodes renamed with the same characters (where the KG enters)
    0: "Luxem\u202ebourg\x1b[2J",
    1: "Canton\u200b of\u2066 Capellen\u2069\x9b31m",
}


class HostileServer(FaultServer):
    """A model that answers as an adversary would: each answer wrapped in HOSTILE_PREFIX and
    HOSTILE_SUFFIX with the caller's key in one encoding inside, every fourth chat call a 500
    whose body holds the key in another (the caller's Authorization header, as a careless
    proxy echoes it). `deny`: the connection check is a 401 holding the key in every form.
    It keeps the questions it is asked (none may hold an escape)."""

    def __init__(self, deny: bool = False) -> None:
        super().__init__(0, faults=False)
        self.deny = deny
        self.questions: list[str] = []
        self.forms: list[str] = []

    def _remember(self, request: HttpRequest) -> None:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        self.forms = list(secret_forms(key).values())

    async def _refuse(self, request: HttpRequest, reply: Reply) -> None:
        self._remember(request)
        body = {"error": {"message": "invalid key: " + " | ".join(self.forms) + HOSTILE_PREFIX}}
        await reply.send(401, encode_json(body))

    async def _openai_models(self, request: HttpRequest, reply: Reply) -> None:
        if self.deny:
            await self._refuse(request, reply)
        else:
            await super()._openai_models(request, reply)

    async def _openai_model(self, request: HttpRequest, reply: Reply) -> None:
        if self.deny:
            await self._refuse(request, reply)
        else:
            await super()._openai_model(request, reply)

    async def _openai_chat(self, request: HttpRequest, reply: Reply) -> None:
        self.calls += 1
        self._remember(request)
        if self.deny:
            await self._refuse(request, reply)
            return
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            for message in json.loads(request.body)["messages"]:
                if message["role"] == "user":
                    self.questions.append(message["content"])
        if self.calls % 4 == 0:
            form = self.forms[self.calls % len(self.forms)]
            body = {"error": {"message": f"upstream refused {form} {HOSTILE_PREFIX}"}}
            await reply.send(500, encode_json(body))
            return
        await SimServer._openai_chat(self, request, reply)

    def plan_turn(
        self,
        model: object,
        messages: Any,
        seed: object,
        max_tokens: object,
        temperature: object = 0.0,
    ) -> Turn:
        turn = super().plan_turn(model, messages, seed, max_tokens, temperature)
        form = self.forms[(self.calls + 3) % len(self.forms)] if self.forms else ""
        pieces = [HOSTILE_PREFIX, *turn.pieces, f" ({form})", HOSTILE_SUFFIX]
        return Turn(turn.profile, pieces, turn.fault, turn.delay_s, turn.token_s)


def hostile_kg(folder: Path) -> Path:
    """The places sample with two labels (and an alias) made of hostile characters."""
    data = json.loads((ROOT / "kontest_tui" / "sample_kgs" / "places.json").read_text("utf-8"))
    for index, label in HOSTILE_LABELS.items():
        data["nodes"][index]["label"] = label
        data["nodes"][index]["aliases"] = [label + "\u200b"]
    path = folder / "hostile-places.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def escapes_in(texts: list[str]) -> int:
    """Lines holding a control or format character (safe_text.has_unsafe), in `texts`."""
    return sum(has_unsafe(line) for text in texts for line in text.splitlines())


def hostile_model_case(folder: Path, limit: int) -> dict[str, Any]:
    """A run of a hostile KG against HostileServer, then every way its answers go out:
    reports, exports (stdout and files), cards, the sessions list, a probe. Counts escapes
    and the key in any encoding in all of it and in the database, and escapes in the
    questions the model was sent; the connection check of a server that refuses with the
    key in every form."""
    server = ServerThread(0, False, HostileServer())
    kg = hostile_kg(folder)
    scenario = Scenario(
        folder / "hostile.db", server.url, limit, model=f"openai:sim@{server.url}/v1"
    )
    db = str(scenario.db)
    outputs: list[str] = []

    def kontest(*args: str) -> int:
        done = subprocess.run(
            kontest_command(list(args)),
            cwd=ROOT,
            env=environment(),
            text=True,
            capture_output=True,
            timeout=RUN_TIMEOUT_S,
        )
        outputs.extend((done.stdout, done.stderr))
        scenario.output.extend((done.stdout, done.stderr))
        return done.returncode

    common = ["--db", db, "--concurrency", "4", "--no-cache", "--max-attempts", "1"]
    kontest("run", "--kg", str(kg), "--limit", str(limit), "--model", scenario.model, *common)
    for _ in range(MAX_RUNS):  # the 500s leave failed turns: resume until done
        if scenario.status() == "done":
            break
        kontest("run", "--resume", *common)
    for fmt in ("text", "json", "markdown", "csv", "html"):
        kontest("report", "--db", db, "--format", fmt)
    exported = []
    for fmt in ("jsonl", "csv"):
        kontest("export", "--db", db, "--format", fmt)
        target = folder / f"hostile-export.{fmt}"
        kontest("export", "--db", db, "--format", fmt, "--out", str(target))
        exported.append(target.read_text("utf-8") if target.exists() else "")
    for fmt in ("text", "markdown", "html", "svg"):
        kontest("explain", "--db", db, "--format", fmt)
    kontest("sessions", "--db", db)
    kontest("sessions", "--db", db, "--json")
    relation = "luxembourg>luxembourg.canton-of-capellen"
    for fmt in ("text", "json"):
        kontest(
            "probe",
            "--kg",
            str(kg),
            "--relation",
            relation,
            "--model",
            scenario.model,
            "--format",
            fmt,
        )
    answers = len(server.server.questions)
    questions = escapes_in(server.server.questions)
    server.stop()
    refusing = ServerThread(0, False, HostileServer(deny=True))
    refused = kontest(
        "run",
        "--kg",
        "places",
        "--limit",
        "2",
        "--model",
        f"openai:sim@{refusing.url}/v1",
        "--db",
        str(folder / "denied.db"),
    )
    refusing.stop()
    planned, lost, duplicates = scenario.counts()
    texts = outputs + exported
    return {
        "status": scenario.status(),
        "outputs": len(texts),
        "answers": answers,
        "planned": planned,
        "lost": lost,
        "duplicates": duplicates,
        "escapes": escapes_in(texts),
        "escapes in questions": questions,
        "secrets": scenario.secrets_in_files() + count_secrets("\n".join(texts), SECRET),
        "check refused": refused,
        "tracebacks": scenario.tracebacks(),
    }


def full_disk_case(folder: Path) -> dict[str, Any]:
    """A run whose database files may not grow past a size (RLIMIT_FSIZE: what a full disk
    does to the writes) between the size of the stored session and that of the finished
    one: the session must not stay "running"; nothing stored twice."""
    import resource

    base = ["--kg", "subdivisions", "--model", "sim", "-q", "--no-cache"]
    created = folder / "created.db"
    subprocess.run(
        kontest_command(["run", *base, "--db", str(created), "--batch-out", str(folder / "b")]),
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        timeout=RUN_TIMEOUT_S,
        check=True,
    )
    full = folder / "unbounded.db"
    subprocess.run(
        kontest_command(["run", *base, "--db", str(full)]),
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        timeout=RUN_TIMEOUT_S,
        check=True,
    )
    # a quarter of the way from the stored session to the finished one: the answers fit, the
    # verdicts do not (the committed WAL may hold more than the limit allows the file to grow)
    limit = created.stat().st_size + (full.stat().st_size - created.stat().st_size) // 4

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    scenario = Scenario(folder / "full.db", "", 0)
    done = subprocess.run(
        kontest_command(["run", *base, "--db", str(scenario.db)]),
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        preexec_fn=bounded,
    )
    scenario.output += [done.stdout, done.stderr]
    conn = sqlite3.connect(scenario.db)
    try:
        status, message = conn.execute("SELECT status, message FROM sessions").fetchone()
        duplicates = conn.execute(
            "SELECT COUNT(*) - COUNT(DISTINCT session || '/' || conversation || '/' || turn)"
            " FROM responses"
        ).fetchone()[0]
    finally:
        conn.close()
    errors = [line for line in done.stderr.splitlines() if line.startswith("kontest: error: ")]
    return {
        "limit": limit,
        "exit": done.returncode,
        "said": errors[0] if len(errors) == 1 else done.stderr.strip()[-200:],
        "status": status,
        "message": message or "",
        "duplicates": duplicates,
        "tracebacks": scenario.tracebacks(),
    }


def sessions_list_case(folder: Path, rows: int) -> tuple[float, float]:
    """(ms to list the sessions, ms to count the session's rows by reading them) for a DB
    whose one running session holds `rows` answers: the list counts from indexes."""
    from kontest_tui.store.database import Store

    db = folder / "big.db"
    done = subprocess.run(
        kontest_command(["run", "--kg", "places", "--limit", "1", "--db", str(db), "-q"]),
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(db)
    with conn:
        _insert_rows(conn, rows)
        conn.execute("UPDATE sessions SET status = 'running'")
    conn.close()
    with Store(db) as store:
        started = time.perf_counter()
        listed = list(store.sessions.listing())
        listing = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        store.conn.execute(
            "SELECT SUM(error IS NULL), SUM(error IS NOT NULL) FROM responses WHERE session = ?",
            (listed[0]["id"],),
        ).fetchone()
        scan = (time.perf_counter() - started) * 1000
    assert listed[0]["answered"] + listed[0]["failed"] >= rows
    return listing, scan


def _insert_rows(conn: sqlite3.Connection, rows: int) -> None:
    """`rows` answers to the first conversation (turn numbers past its own), 1 in 997 failed."""
    pk, session, conversation = conn.execute(
        "SELECT pk, session, id FROM conversations WHERE position = 0"
    ).fetchone()
    conn.executemany(
        "INSERT INTO responses (conversation_key, session, conversation, turn, raw, answer,"
        " error, created) VALUES (?, ?, ?, ?, 'Yes, it has.', 'yes', ?, '2026-01-01')",
        (
            (pk, session, conversation, 100 + n, "HTTP 500" if n % 997 == 0 else None)
            for n in range(rows)
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=120, help="places relations (6 turns each)")
    parser.add_argument("--kills", type=int, default=3, help="kill -9 this many runs")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--rows", type=int, default=600_000, help="answers of the sessions-list case's session"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kontest-faults-") as tmp:
        folder = Path(tmp)
        clean_server = ServerThread(args.seed, faults=False)
        clean = Scenario(folder / "clean.db", clean_server.url, args.limit)
        clean_time = clean.run_to_done(0, rng, 1.0)
        clean_report = clean.report()
        clean_calls = clean_server.server.calls
        clean_server.stop()
        slow_server = ServerThread(0, False, SlowServer(LEASE_DELAY_S))
        lease = lease_loss_case(folder, slow_server.url, LEASE_RELATIONS)
        slow_server.stop()

        faulty_server = ServerThread(args.seed, faults=True)
        faulty = Scenario(folder / "faulty.db", faulty_server.url, args.limit)
        faulty_time = faulty.run_to_done(args.kills, rng, max(0.5, clean_time * 0.8))
        faulty_report = faulty.report()
        server = faulty_server.server
        faulty_server.stop()
        planned, lost, duplicates = faulty.counts()
        at_rest = faulty.secrets_at_rest + faulty.secrets_in_files()
        printed = faulty.secrets_printed()

        pool = pool_case(folder, max(20, args.limit // 2))
        hostile = hostile_model_case(folder, HOSTILE_RELATIONS)
        disk = full_disk_case(folder)
        corpus_folder = folder / "corpus"
        corpus_folder.mkdir()
        corpus = run_corpus(corpus_folder, args.seed)
        race_failures = migration_race_case(folder)
        listing_ms, scan_ms = sessions_list_case(folder, args.rows)

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
    print(
        f"lease loss: run A paused and taken over, exit {lease['first_exit']} "
        f"({lease['first_said'][:60]}...); resume exit {lease['resume_exit']}, session "
        f"{lease['status']}; lost {lease['lost']}, duplicates {lease['duplicates']}, "
        f"secrets {lease['secrets']} (must be 0)"
    )
    print(
        f"pool (401 replica, frozen replica, healthy): calls {pool['calls']}, "
        f"{pool['runs']} run(s), {pool['failed']} turns failed, session {pool['status']} in "
        f"{pool['seconds']:.1f} s; lost {pool['lost']}, duplicates {pool['duplicates']}, "
        f"secrets {pool['secrets']} (must be 0)"
    )
    print(f"migration race: 12 processes opening one new database, {race_failures} failed")
    print(
        f"sessions list with a running session of {args.rows:,} answers: {listing_ms:.1f} ms "
        f"(counting them by reading the rows: {scan_ms:.1f} ms)"
    )
    print(
        f"hostile model ({HOSTILE_RELATIONS} relations of a KG with hostile labels, answers "
        "wrapped in escapes, bidi and zero-width characters, the key echoed in 9 encodings): "
        f"{hostile['answers']} questions asked, {hostile['escapes in questions']} with an "
        f"escape; session {hostile['status']}, lost {hostile['lost']}, duplicates "
        f"{hostile['duplicates']}; {hostile['outputs']} outputs (reports, exports to stdout "
        f"and files, cards, sessions, probe): {hostile['escapes']} lines with an escape, "
        f"{hostile['secrets']} secrets; connection check refused with the key: exit "
        f"{hostile['check refused']}"
    )
    print(
        f"full disk (file size limit {disk['limit']:,} bytes): exit {disk['exit']}, session "
        f"{disk['status']} ({disk['message'][:70]}...), duplicates {disk['duplicates']}"
    )
    summary = print_summary(corpus, details=True)
    tracebacks = (
        faulty.tracebacks()
        + clean.tracebacks()
        + hostile["tracebacks"]
        + disk["tracebacks"]
        + summary["traceback"]
        + summary["hung"]
        + summary["out of memory"]
    )
    secrets = at_rest + printed + lease["secrets"] + pool["secrets"] + hostile["secrets"]
    secrets += summary["secrets"]
    escapes = hostile["escapes"] + hostile["escapes in questions"] + summary["escapes"]
    tried = summary["tried"] + hostile["outputs"] + 2
    all_lost = lost + lease["lost"] + pool["lost"] + hostile["lost"]
    all_duplicates = duplicates + lease["duplicates"] + pool["duplicates"]
    all_duplicates += hostile["duplicates"] + disk["duplicates"]
    print(
        f"TOTAL: tried {tried} (malformed inputs, hostile model outputs, full disk, refusing "
        f"server); lost {all_lost}; duplicated {all_duplicates}; secrets {secrets} (9 "
        f"encodings); escapes passed {escapes} (all outputs, exports included); tracebacks "
        f"{tracebacks}"
    )
    bad = (
        all_lost
        or all_duplicates
        or secrets
        or escapes
        or tracebacks
        or hostile["status"] != "done"
        or hostile["check refused"] == 0
        or disk["status"] == "running"
        or lost
        or duplicates
        or not same
        or at_rest
        or printed
        or lease["lost"]
        or lease["duplicates"]
        or lease["secrets"]
        or lease["status"] != "done"
        or not lease["first_said"]
        or pool["lost"]
        or pool["duplicates"]
        or pool["secrets"]
        or pool["status"] != "done"
        or race_failures
    )
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
