"""How often the report's 95% intervals hold the true rate: coverage over seeded simulations.

Each simulated session has a known true error rate. Per fact, KONTEST's six tests (atomic,
two intra, two inter, one ontological); a share of the facts is unknown to the model and
their tests fail together far more often than the others' (what makes the tests of one fact
correlated). Each session draws its three rates within 30% of its scenario's (so that a
coverage figure is not an accident of where one true rate falls between two error counts).
Per-path scenarios ask each fact on 1 to 4 paths (`--per-path`), each copy with the same
answers. Three intervals per session:

- pooled Wilson: Wilson's interval on all tests as if independent;
- before: Wilson at the effective size tests / deff, clusters = relation ids (a per-path
  copy its own cluster), what reports gave before;
- now: the report's interval (oracles.intervals: Korn-Graubard, Clopper-Pearson at the
  degrees-of-freedom adjusted effective size, clusters = facts).

Prints, per scenario, each interval's coverage (nominal 95%) and mean width in points.

Run: .venv/bin/python benchmarks/interval_coverage.py [--runs 1000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kontest_tui.oracles.intervals import ClusterTally, RateCells, wilson_interval  # noqa: E402

TESTS = 6  # KONTEST's tests per fact: atomic, two intra, two inter, one ontological
# (name, facts, share unknown, error rate of an unknown fact's test, of a known one's, copies);
# "true" is the scenario's own rate (each session's is within 30% of each of its three rates)
SCENARIOS: tuple[tuple[str, int, float, float, float, tuple[int, ...]], ...] = (
    ("300 relations, errors common", 300, 0.25, 0.55, 0.04, (1,)),
    ("50 relations, errors common", 50, 0.25, 0.55, 0.04, (1,)),
    ("100 relations, errors rare", 100, 0.05, 0.5, 0.01, (1,)),
    ("50 relations, errors rare", 50, 0.05, 0.5, 0.01, (1,)),
    ("30 relations, errors rare", 30, 0.05, 0.5, 0.01, (1,)),
    ("per path: 300 facts on 1-4 paths", 300, 0.25, 0.55, 0.04, (1, 2, 3, 4)),
    ("per path: 100 facts on 1-2 paths", 100, 0.25, 0.55, 0.04, (1, 1, 2)),
    ("per path: 50 facts on 1-4 paths, rare", 50, 0.05, 0.5, 0.01, (1, 2, 3, 4)),
)
METHODS = ("pooled Wilson", "before", "now")


def simulated_cells(
    draw: random.Random,
    facts: int,
    unknown: float,
    fail_unknown: float,
    fail_known: float,
    copies: Sequence[int],
) -> list[tuple[str, int]]:
    """(relation id, errors of its TESTS tests) per relation; per-path copies share a fact."""
    cells = []
    for number in range(facts):
        rate = fail_unknown if draw.random() < unknown else fail_known
        errors = sum(draw.random() < rate for _ in range(TESTS))
        count = draw.choice(copies)
        for path in range(count):
            relation = f"p{path}:f{number}" if len(copies) > 1 else f"f{number}"
            cells.append((relation, errors))
    return cells


def intervals(cells: list[tuple[str, int]]) -> dict[str, tuple[float, float]]:
    """Each method's interval for one session's cells."""
    by_relation = ClusterTally()
    for _, errors in cells:
        by_relation.add(errors, TESTS)
    before = by_relation.estimate()  # for its design effect, clusters = relation ids
    p = by_relation.errors / by_relation.tests
    effective = by_relation.tests / before.design_effect
    now = RateCells()
    for relation, errors in cells:
        now.add("rate", relation, errors, TESTS)
    estimate = now.tallies()["rate"].estimate()
    return {
        "pooled Wilson": wilson_interval(by_relation.errors, by_relation.tests),
        "before": wilson_interval(p * effective, effective),
        "now": (estimate.low, estimate.high),
    }


def coverage(runs: int) -> None:
    print(f"95% intervals holding the true rate, over {runs} seeded sessions each")
    print(f"{'scenario':40} {'true':>6}  " + "  ".join(f"{m:>20}" for m in METHODS))
    started = time.perf_counter()
    for name, facts, unknown, fail_unknown, fail_known, copies in SCENARIOS:
        true = unknown * fail_unknown + (1 - unknown) * fail_known
        held = dict.fromkeys(METHODS, 0)
        width = dict.fromkeys(METHODS, 0.0)
        for seed in range(runs):
            draw = random.Random(seed)
            rates = [rate * draw.uniform(0.7, 1.3) for rate in (unknown, fail_unknown, fail_known)]
            session_rate = rates[0] * rates[1] + (1 - rates[0]) * rates[2]
            cells = simulated_cells(draw, facts, *rates, copies)
            for method, (low, high) in intervals(cells).items():
                held[method] += low <= session_rate <= high
                width[method] += high - low
        shown = "  ".join(
            f"{100 * held[m] / runs:5.1f}% (width {100 * width[m] / runs:4.1f})" for m in METHODS
        )
        print(f"{name:40} {100 * true:5.2f}%  {shown}")
    print(f"({time.perf_counter() - started:.1f} s; width = mean interval width in points)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="sessions per scenario")
    coverage(parser.parse_args().runs)


if __name__ == "__main__":
    main()
