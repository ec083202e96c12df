"""Explorer benchmark: launch to the first screen, and the results graph for 2,000 relations.

1. Launch: a fresh `python` process imports the app and runs it headless until the start
   screen is mounted and painted (interpreter start included). Target < 1.5 s.
2. Results: a synthetic KG with exactly 2,000 relations (1 root, 400 regions, 2 places each:
   400 + 800 + 800), seeded random answers for all 12,000 calls, evaluated by the engine;
   time from pushing the results screen to its graph tree, gap and error table painted.
   Target < 200 ms. Garbage is collected before each push (as `timeit` keeps the collector
   out of a measurement), so a run does not pay a full collection of the screens before it;
   `--no-collect` leaves the collector alone, as in real use.
Run: .venv/bin/python benchmarks/tui.py [--runs 5] [--no-launch] [--no-collect]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LAUNCH_CHILD = """
import sys, time
started = float(sys.argv[1])
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.start import StartScreen

async def auto_pilot(pilot):
    while not isinstance(pilot.app.screen, StartScreen):
        await pilot.pause(0.001)
    await pilot.pause()
    print(f"{time.time() - started:.4f}")
    pilot.app.exit()

make_app(db=sys.argv[2]).run(headless=True, size=(100, 32), auto_pilot=auto_pilot)
"""


def time_launch(runs: int = 5) -> list[float]:
    """Seconds from spawning the process to the painted start screen."""
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "KONTEST_HOME": tmp}
        for _ in range(runs):
            started = time.time()
            done = subprocess.run(
                [sys.executable, "-c", LAUNCH_CHILD, str(started), str(Path(tmp) / "s.db")],
                capture_output=True,
                text=True,
                env=env,
                cwd=ROOT,
                timeout=60,
                check=True,
            )
            figures.append(float(done.stdout.strip().splitlines()[-1]))
    return figures


def build_result(regions: int = 400, places: int = 2):
    """A finished synthetic session with 2,000 relations and seeded answers."""
    from kontest_tui.domain.records import Answer
    from kontest_tui.generate.conversations import build_conversations
    from kontest_tui.generate.relations import extract_relations
    from kontest_tui.generate.templates import load_template_set
    from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
    from kontest_tui.oracles.evaluate import evaluate
    from kontest_tui.tui.plan import SessionPlan, SessionResult

    nodes = {"R": Node("R", "Rootland", (), "country")}
    edges = []
    for region in range(regions):
        region_id = f"R{region}"
        nodes[region_id] = Node(region_id, f"Region {region}", (), "region")
        edges.append(Edge("R", region_id, "contains"))
        for place in range(places):
            place_id = f"R{region}P{place}"
            nodes[place_id] = Node(place_id, f"Place {region}.{place}", (), "locality")
            edges.append(Edge(region_id, place_id, "contains"))
    kg = KnowledgeGraph("bench", "places", nodes, edges)
    relations = extract_relations(kg)
    template_set = load_template_set("places")
    conversations = build_conversations(kg, relations, template_set, ["t1", "t2"])
    rng = random.Random(7)
    choices = [Answer.YES] * 7 + [Answer.NO] * 2 + [Answer.INVALID]
    answers = {
        (conversation.id, turn): rng.choice(choices)
        for conversation in conversations
        for turn in range(len(conversation.turns))
    }
    raw = {key: answer.value.capitalize() + "." for key, answer in answers.items()}
    plan = SessionPlan(
        kg, "bench", None, relations, conversations, template_set, ["t1", "t2"], "sim"
    )
    result = SessionResult(plan=plan, raw=raw, answers=answers)
    result.evaluation = evaluate(relations, conversations, answers, model="sim")
    return result


async def time_results(
    result,
    runs: int = 5,
    builds: list[float] | None = None,
    cpu: list[float] | None = None,
    collect: bool = True,
) -> list[float]:
    """Seconds from pushing the results screen to its views filled and painted; `builds`
    collects the part spent grouping the answers and building the tree (show_result), `cpu`
    the process time of each push (steadier than wall time on a shared machine)."""
    from kontest_tui.tui.app import make_app
    from kontest_tui.tui.screens.results import ResultsScreen

    show_result = ResultsScreen.show_result

    def timed_show_result(screen: ResultsScreen) -> None:
        started = time.perf_counter()
        show_result(screen)
        if builds is not None:
            builds.append(time.perf_counter() - started)

    ResultsScreen.show_result = timed_show_result  # type: ignore[method-assign]
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KONTEST_HOME"] = tmp
        app = make_app(db=str(Path(tmp) / "s.db"))
        async with app.run_test(size=(100, 32)) as pilot:
            await pilot.pause(0.2)
            await app.workers.wait_for_complete()
            for _ in range(runs):
                if collect:
                    gc.collect()
                started = time.perf_counter()
                cpu_started = time.process_time()
                screen = ResultsScreen(result)
                await app.push_screen(screen)
                while not screen.ready:
                    await pilot.pause(0)
                await pilot.pause()  # one refresh: the tree is painted
                figures.append(time.perf_counter() - started)
                if cpu is not None:
                    cpu.append(time.process_time() - cpu_started)
                app.pop_screen()
                await pilot.pause(0.05)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each part")
    parser.add_argument("--no-launch", action="store_true", help="skip the launch timing")
    parser.add_argument(
        "--no-collect", action="store_true", help="no garbage collection before each push"
    )
    args = parser.parse_args()
    if not args.no_launch:
        launch = time_launch(args.runs)
        print(
            f"launch to first screen: median {statistics.median(launch) * 1000:.0f} ms "
            f"(min {min(launch) * 1000:.0f}, max {max(launch) * 1000:.0f}; {len(launch)} runs; "
            "target < 1500 ms)"
        )
    started = time.perf_counter()
    result = build_result()
    setup = time.perf_counter() - started
    relations = len(result.plan.relations)
    builds: list[float] = []
    cpu: list[float] = []
    figures = asyncio.run(
        time_results(result, runs=args.runs, builds=builds, cpu=cpu, collect=not args.no_collect)
    )
    print(
        f"results graph{' (no collection before)' if args.no_collect else ''}, "
        f"{relations} relations / {len(result.answers)} answers "
        f"(setup {setup:.2f} s): median {statistics.median(figures) * 1000:.0f} ms "
        f"(min {min(figures) * 1000:.0f}, max {max(figures) * 1000:.0f}; target < 200 ms); "
        f"CPU time median {statistics.median(cpu) * 1000:.0f} ms"
    )
    print(
        f"  of which grouping answers + building the tree: median "
        f"{statistics.median(builds) * 1000:.0f} ms; the rest is Textual composing, styling "
        f"and painting the screen"
    )


if __name__ == "__main__":
    main()
