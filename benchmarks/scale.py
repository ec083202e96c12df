"""Scale: a whole session (generate, run, report) on synthetic KGs of 1k, 10k, 100k (1M) relations.

Each size runs in a fresh process (so its peak RSS is its own): a seeded synthetic places KG
(benchmarks/synthetic_kg.py) is written to a file, then timed
- generate: load the KG file, make relations and conversations, store the session;
- run: ask every turn of the in-process simulated model (`sim`, cache on, concurrency 4),
  store each answer, evaluate and store the verdicts;
- report: `kontest report` in its own process (it reads the verdicts and report the run
  stored; `--re-evaluate` times a report that evaluates every stored answer again).
Printed per size: relations, turns, model calls, the three times, turns per second of the
run, peak RSS of the generate+run process and of the report process, DB bytes per stored
answer, the CPU seconds of both processes (user + system, their start and the synthetic KG
file written included: about the wall time on a quiet machine, the run being one thread)
and the machine's load average (the machine may be shared: times scale with it).
Targets (a 2-core machine): 10k relations end to end < 10 s; 100k < 100 s with peak
RSS < 1 GB; 1M completes, streamed. `--million` adds a 1M-relation session (long: tens of
minutes, and several GB of disk). Sessions above run.session.STREAM_ABOVE relations are
created, asked and evaluated in chunks of relations (docs/sessions.md); `--chunk N` streams
every size in chunks of N, `--whole` none.

Run: .venv/bin/python benchmarks/scale.py [--sizes 1000,10000,100000] [--million]
     [--concurrency 4] [--re-evaluate] [--chunk N | --whole] [--folder DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def one_size(
    relations: int, folder: Path, concurrency: int, chunk: int | None, whole: bool
) -> dict[str, float]:
    """Generate and run one session in this process; the figures as a dict."""
    from synthetic_kg import synthetic_graph

    from kontest_tui.kg.io import load_graph, save_graph
    from kontest_tui.models.specs import open_model
    from kontest_tui.run import session as sessions
    from kontest_tui.run.api import SessionSpec, create_session
    from kontest_tui.run.executor import ExecutorConfig
    from kontest_tui.run.session import run_session
    from kontest_tui.store import Store

    if whole:
        sessions.STREAM_ABOVE = 10**12

    kg_file = save_graph(synthetic_graph(relations, seed=0), folder / f"kg{relations}.json")
    db = folder / f"s{relations}.db"
    started = time.perf_counter()
    kg = load_graph(kg_file)
    with Store(db) as store:
        session = create_session(store, SessionSpec(kg))
        generated = time.perf_counter()
        model = open_model("sim", kg=kg, seed=0)
        outcome = asyncio.run(
            run_session(
                store, session, model, config=ExecutorConfig(concurrency=concurrency), chunk=chunk
            )
        )
        ran = time.perf_counter()
        row = store.sessions.get(session)
    return {
        "session": session,
        "relations": row["relations"],
        "turns": outcome.result.progress.total,
        "calls": outcome.result.progress.done - outcome.result.progress.cached,
        "generate": generated - started,
        "run": ran - generated,
        "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "cpu": _cpu(resource.getrusage(resource.RUSAGE_SELF)),
        "db": str(db),
    }


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def timed_child(command: list[str]) -> tuple[float, float, str, float]:
    """Seconds, peak RSS (MB), stdout and CPU seconds of a child process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"failed: {' '.join(command)}")
    return elapsed, usage.ru_maxrss / 1024, out, _cpu(usage)


def measure(
    relations: int,
    folder: Path,
    concurrency: int,
    re_evaluate: bool = False,
    chunk: int | None = None,
    whole: bool = False,
) -> dict[str, float]:
    _, _, out, _ = timed_child(
        [
            sys.executable,
            __file__,
            "--one",
            str(relations),
            "--folder",
            str(folder),
            "--concurrency",
            str(concurrency),
            *(["--chunk", str(chunk)] if chunk else []),
            *(["--whole"] if whole else []),
        ]
    )
    figures = json.loads(out.strip().splitlines()[-1])
    db = Path(figures["db"])
    report, report_rss, _, report_cpu = timed_child(
        [
            sys.executable,
            "-m",
            "kontest_tui.cli",
            "report",
            figures["session"],
            "--db",
            str(db),
            "--format",
            "json",
            *(["--re-evaluate"] if re_evaluate else []),
        ]
    )
    figures["report"] = report
    figures["report_rss"] = report_rss
    figures["cpu"] += report_cpu
    size = db.stat().st_size + sum(
        path.stat().st_size for path in db.parent.glob(db.name + "-*") if path.is_file()
    )
    figures["db_bytes"] = size
    db.unlink()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--million", action="store_true", help="add 1,000,000 relations")
    parser.add_argument(
        "--re-evaluate",
        action="store_true",
        help="time `kontest report --re-evaluate` instead of the stored report",
    )
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--chunk", type=int, default=None, help="stream every size in chunks of N relations"
    )
    parser.add_argument("--whole", action="store_true", help="stream no size (one chunk)")
    parser.add_argument(
        "--folder",
        type=Path,
        default=None,
        help="where the KG files and databases go (default: a temporary folder)",
    )
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.one is not None:
        print(
            json.dumps(
                one_size(
                    arguments.one,
                    arguments.folder,
                    arguments.concurrency,
                    arguments.chunk,
                    arguments.whole,
                )
            )
        )
        return
    print(
        f"{'relations':>9} {'turns':>8} {'calls':>8} {'generate':>9} {'run':>8} {'report':>8} "
        f"{'total':>8} {'turns/s':>8} {'calls/s':>8} {'peak RSS':>9} {'report RSS':>10} "
        f"{'B/answer':>8} {'CPU':>8}"
    )
    sizes = [int(part) for part in arguments.sizes.split(",")]
    if arguments.million:
        sizes.append(1_000_000)
    with tempfile.TemporaryDirectory(dir=arguments.folder) as folder:
        for size in sizes:
            f = measure(
                size,
                Path(folder),
                arguments.concurrency,
                arguments.re_evaluate,
                arguments.chunk,
                arguments.whole,
            )
            total = f["generate"] + f["run"] + f["report"]
            print(
                f"{f['relations']:>9,} {f['turns']:>8,} {f['calls']:>8,} {f['generate']:>8.2f}s "
                f"{f['run']:>7.2f}s {f['report']:>7.2f}s {total:>7.2f}s "
                f"{f['turns'] / f['run']:>8,.0f} {f['calls'] / f['run']:>8,.0f} "
                f"{f['rss']:>7.0f}MB {f['report_rss']:>8.0f}MB "
                f"{f['db_bytes'] / f['turns']:>8.0f} {f['cpu']:>7.1f}s   load "
                f"{os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
