"""Benchmark of `run.api.prepare`: what the explorer's wizard computes on every change.

On a synthetic places KG of about 100k relations (benchmarks/synthetic_kg.py), `prepare` is
timed in CPU seconds of this process (the machine is shared: its wall time follows the
load; the median of --runs, after one warm-up run) for the kinds the wizard offers first
(KONTEST alone) and for KONTEST with the logic rules (a kind built in full over every
relation, to count it and keep it for the run). Each line also says how many walks over the
relations one `prepare` made (calls of generate.relations.iter_relations, counted by
wrapping it) and how many of them read past the first CHECK_RELATIONS: `prepare` walks them
once (it walked them four times: the listing, the KONTEST counts, the other kinds' build
and the question check).

Run: .venv/bin/python benchmarks/prepare.py [--relations 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic_kg import synthetic_graph  # noqa: E402
from kontest_tui.domain.records import Relation, TestKind  # noqa: E402
from kontest_tui.run import prepare as prepare_module  # noqa: E402
from kontest_tui.run.api import SessionSpec, prepare  # noqa: E402

# A walk that reads past this many relations is a walk over them all (the previews and the
# question check read only the first ones).
PARTIAL = prepare_module.CHECK_RELATIONS


class WalkCounter:
    """Wraps run.prepare's iter_relations: the walks, and those that read past PARTIAL."""

    def __init__(self) -> None:
        self.walks = 0
        self.whole = 0
        self.original = prepare_module.iter_relations

    def __call__(self, *args: object, **kwargs: object) -> Iterator[Relation]:
        self.walks += 1
        for read, relation in enumerate(self.original(*args, **kwargs), 1):  # type: ignore[arg-type]
            if read == PARTIAL + 1:
                self.whole += 1
            yield relation


def measure(spec: SessionSpec, runs: int) -> tuple[float, WalkCounter, int]:
    """Median CPU seconds of `prepare(spec)`, the walks of one prepare, and the relations it
    counted."""
    counter = WalkCounter()
    prepare_module.iter_relations = counter  # type: ignore[assignment]
    try:
        preparation = prepare(spec)  # warm-up (template sets, first imports)
        assert not preparation.problems, preparation.blocked
        prepare_module.iter_relations = counter.original  # type: ignore[assignment]
        times = []
        for _ in range(runs):
            started = time.process_time()
            prepare(spec)
            times.append(time.process_time() - started)
    finally:
        prepare_module.iter_relations = counter.original  # type: ignore[assignment]
    return statistics.median(times), counter, preparation.relations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relations", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    kg = synthetic_graph(arguments.relations)
    cases = {
        "kontest": (TestKind.KONTEST,),
        "kontest+logic": (TestKind.KONTEST, TestKind.LOGIC),
    }
    for name, kinds in cases.items():
        seconds, counter, relations = measure(SessionSpec(kg, kinds=kinds), arguments.runs)
        print(
            f"prepare {name:<14} {relations:>7,} relations  {seconds:6.2f} CPU s  "
            f"{counter.walks} walk{'s' if counter.walks != 1 else ''} over the relations, "
            f"{counter.whole} past the first {PARTIAL:,}"
        )


if __name__ == "__main__":
    main()
