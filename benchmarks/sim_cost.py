"""The simulated model's cost per question, and its share of a whole run.

Part 1: microseconds per question of `decide_answer` on synthetic places KGs of growing size
(benchmarks/synthetic_kg.py), for template questions (recognised by the template patterns) and
for free wordings found through the KG's names (covering-array variants: the EntityFinder
scan), plus the seconds to build the finder. The per-question cost should not grow with the KG.
Part 2 (`--profile N`): one in-process `sim` session of N relations under cProfile; the share
of the run's time spent inside the simulated model's `decide_answer`.

Run: .venv/bin/python benchmarks/sim_cost.py [--sizes 1000,10000,100000] [--profile 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

QUESTIONS = 2000


def per_question(relations: int) -> tuple[float, float, float]:
    """(finder build s, template question us, free-wording question us) on one KG size."""
    from synthetic_kg import synthetic_graph

    from kontest_tui.models.sim import SimulatedModel, decide_answer, load_profile

    kg = synthetic_graph(relations, seed=0)
    started = time.perf_counter()
    model = SimulatedModel(kg=kg)
    built = time.perf_counter() - started
    profile = load_profile("default")
    entities = model.entities
    labels = [node.label for node in kg.nodes.values()]
    pairs = [(edge.parent, edge.child) for edge in kg.edges][:QUESTIONS]
    template = [f"Is there a {kg.label(c)} located in {kg.label(p)}?" for p, c in pairs]
    free = [f"Would {kg.label(p)} ever hold {kg.label(c)}, truly?" for p, c in pairs]
    assert len(labels) == len(kg.nodes)
    patterns = getattr(model, "patterns", None)
    extra = (patterns.current(),) if patterns is not None else ()
    decide_answer(profile, 0, [template[0]], entities, *extra)  # warm the template patterns
    timings = []
    for questions in (template, free):
        started = time.perf_counter()
        for question in questions:
            decide_answer(profile, 0, [question], entities, *extra)
        timings.append((time.perf_counter() - started) / len(questions) * 1e6)
    return built, timings[0], timings[1]


def profile_run(relations: int) -> tuple[float, float]:
    """(run seconds, share of them inside decide_answer) of one sim session, cProfiled."""
    from synthetic_kg import synthetic_graph

    from kontest_tui.models.specs import open_model
    from kontest_tui.run.api import SessionSpec, create_session
    from kontest_tui.run.executor import ExecutorConfig
    from kontest_tui.run.session import run_session
    from kontest_tui.store import Store

    kg = synthetic_graph(relations, seed=0)
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "s.db") as store:
        session = create_session(store, SessionSpec(kg))
        model = open_model("sim", kg=kg, seed=0)
        profiler = cProfile.Profile()
        started = time.perf_counter()
        profiler.enable()
        asyncio.run(run_session(store, session, model, config=ExecutorConfig(concurrency=4)))
        profiler.disable()
        elapsed = time.perf_counter() - started
    stats = pstats.Stats(profiler)
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    inside = sum(
        row[3]
        for (_, _, name), row in stats.stats.items()  # type: ignore[attr-defined]
        if name == "decide_answer"
    )
    return elapsed, inside / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--profile", type=int, default=0, help="relations of a profiled run")
    arguments = parser.parse_args()
    print(f"{'relations':>9} {'finder':>8} {'template q':>11} {'free q':>9}")
    for size in (int(part) for part in arguments.sizes.split(",") if part):
        built, template, free = per_question(size)
        print(f"{size:>9,} {built:>7.2f}s {template:>9.1f}us {free:>7.1f}us", flush=True)
    if arguments.profile:
        elapsed, share = profile_run(arguments.profile)
        print(
            f"profiled run of {arguments.profile:,} relations: {elapsed:.1f} s, "
            f"{share:.1%} of it in decide_answer"
        )


if __name__ == "__main__":
    main()
