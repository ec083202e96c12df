"""Start-up: how long a `kontest` command takes before it does anything, against the same venv's
`python -c pass` and `sqlite-utils --help`.

Each command runs in a fresh process, --runs times, the commands in turn (so a busy moment
of a shared machine hits them all alike); printed: the median and the fastest run of each,
and the ratio of the medians to `sqlite-utils --help`. The session commands read a DB holding
one session of --relations relations (a synthetic places KG, benchmarks/synthetic_kg.py, run
with `sim` by the session API as `kontest run` does), built once into --cache and reused.
Targets: `kontest --help` <= 1.3x `sqlite-utils --help`; `kontest sessions` on a
100k-relation DB <= 0.5 s. `kontest report` (the stored report, text) and `kontest explain`
(the clearest error's card) are shown beside them. Exit 1 when a target is not met.

Run: .venv/bin/python benchmarks/startup.py [--runs 9] [--relations 100000] [--cache DIR]
     [--rebuild]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent


def build_db(relations: int, cache: Path, rebuild: bool) -> Path:
    """The cached DB with one session of `relations` relations (run when missing)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from synthetic_kg import synthetic_graph

    from kontest_tui.run.api import SessionSpec, start_session
    from kontest_tui.store import Store

    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"startup-{relations}.db"
    if rebuild:
        for stale in cache.glob(f"{path.name}*"):
            stale.unlink()
    if not path.exists():
        started = time.perf_counter()
        with Store(path) as store:
            spec = SessionSpec(synthetic_graph(relations, seed=0), model="sim")
            asyncio.run(start_session(store, spec))
        print(f"built {path} in {time.perf_counter() - started:.0f} s", flush=True)
    return path


def time_commands(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Seconds of each command per run (fresh processes, the commands in turn), after one
    untimed run of each (the files in the page cache; a first `kontest explain` stores the
    views it reads)."""
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():
        subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, check=True, timeout=600)
    for _ in range(runs):
        for name, command in commands.items():
            started = time.perf_counter()
            subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, check=True, timeout=60)
            seconds[name].append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs of each command")
    parser.add_argument("--relations", type=int, default=100_000, help="relations in the DB")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "kontest-bench-startup"
    )
    parser.add_argument("--rebuild", action="store_true", help="run the DB's session again")
    args = parser.parse_args()
    os.environ["KONTEST_HOME"] = str(args.cache / "home")
    db = str(build_db(args.relations, args.cache, args.rebuild))
    kontest = [str(BIN / "kontest")]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "sqlite-utils --help": [str(BIN / "sqlite-utils"), "--help"],
        "kontest --help": [*kontest, "--help"],
        "kontest sessions": [*kontest, "sessions", "--db", db],
        "kontest report": [*kontest, "report", "--db", db],
        "kontest explain": [*kontest, "explain", "--db", db],
    }
    seconds = time_commands(commands, args.runs)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    reference = medians["sqlite-utils --help"]
    targets = {
        "kontest --help": ("<= 1.3x sqlite-utils --help", medians["kontest --help"] / reference),
        "kontest sessions": (
            f"<= 0.5 s ({args.relations:,} relations)",
            medians["kontest sessions"],
        ),
    }
    print(f"load {os.getloadavg()[0]:.1f}; medians of {args.runs} runs, each a fresh process")
    print(f"{'command':<22} {'median':>8} {'fastest':>8} {'ratio':>6}  target")
    missed = []
    for name, values in seconds.items():
        target = ""
        if name in targets:
            wanted, figure = targets[name]
            met = figure <= (1.3 if name == "kontest --help" else 0.5)
            target = f"{wanted}: {'met' if met else 'NOT met'}"
            if not met:
                missed.append(name)
        print(
            f"{name:<22} {medians[name] * 1000:>6.0f}ms {min(values) * 1000:>6.0f}ms "
            f"{medians[name] / reference:>5.2f}x  {target}"
        )
    if missed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
