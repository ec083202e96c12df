"""Covering-array sizes and times: kontest's builder next to allpairspy (t=2) and literature.

    .venv/bin/python benchmarks/ca.py [--effort N] [--seed S]

Prints one row per IPM: rows and seconds for kontest (default effort), allpairspy's size
and time (strength 2 only), the best size reported in the literature where we know it, and
the ratio kontest / best. "lower" is the trivial bound (product of the t largest levels, or
the exact binary bound). Every array is checked for full coverage before it is reported.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kontest_tui.generate.covering import (  # noqa: E402
    DEFAULT_EFFORT,
    build_covering_array,
    lower_bound,
    missing_tuples,
)

# (name, levels, strength, best known size or None). Best known values: orthogonal arrays
# (3^4, 3^4 t=3, 4^6 t=3, 5^6 t=3), the exact binary bound (2^20), and sizes reported for
# simulated annealing / the Colbourn tables (3^13 -> 15, 2^10 t=3 -> 12, mixed ones).
CASES: list[tuple[str, tuple[int, ...], int, int | None]] = [
    ("thesis 1,1,3,3,1,3,1,3", (1, 1, 3, 3, 1, 3, 1, 3), 2, 9),
    ("3^4", (3,) * 4, 2, 9),
    ("3^13", (3,) * 13, 2, 15),
    ("4^10", (4,) * 10, 2, None),
    ("2^20", (2,) * 20, 2, 8),
    ("5^8", (5,) * 8, 2, None),
    ("10^5", (10,) * 5, 2, None),
    ("4^20", (4,) * 20, 2, None),
    ("5^1 3^8 2^2", (5,) + (3,) * 8 + (2,) * 2, 2, 15),
    ("6^1 5^1 4^6 3^8 2^3", (6, 5) + (4,) * 6 + (3,) * 8 + (2,) * 3, 2, 30),
    ("4^15 3^17 2^29", (4,) * 15 + (3,) * 17 + (2,) * 29, 2, 30),
    ("3^4 t=3", (3,) * 4, 3, 27),
    ("2^10 t=3", (2,) * 10, 3, 12),
    ("3^6 t=3", (3,) * 6, 3, 33),
    ("4^6 t=3", (4,) * 6, 3, 64),
    ("5^6 t=3", (5,) * 6, 3, 125),
    ("5^1 3^8 2^2 t=3", (5,) + (3,) * 8 + (2,) * 2, 3, None),
]


def allpairs_size(levels: tuple[int, ...]) -> tuple[int, float] | None:
    try:
        from allpairspy import AllPairs
    except ImportError:
        return None
    varying = [list(range(v)) for v in levels if v > 1]
    start = time.perf_counter()
    size = sum(1 for _ in AllPairs(varying)) if len(varying) >= 2 else max([1, *levels])
    return size, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--effort", type=int, default=DEFAULT_EFFORT)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    header = f"{'IPM':<24}{'t':>2}{'kontest':>9}{'sec':>7}{'allpairs':>10}{'sec':>7}{'best':>6}{'lower':>7}{'k/best':>8}"
    print(header)
    print("-" * len(header))
    for name, levels, t, best in CASES:
        start = time.perf_counter()
        array = build_covering_array(levels, t, args.seed, effort=args.effort)
        elapsed = time.perf_counter() - start
        assert array.rows[0] == (0,) * len(levels)
        assert not missing_tuples(array.rows, levels, t), name
        ap = allpairs_size(levels) if t == 2 else None
        ap_size, ap_time = (f"{ap[0]}", f"{ap[1]:.2f}") if ap else ("-", "-")
        ratio = f"{len(array.rows) / best:.2f}" if best else "-"
        print(f"{name:<24}{t:>2}{len(array.rows):>9}{elapsed:>7.2f}{ap_size:>10}{ap_time:>7}"
              f"{best or '-':>6}{lower_bound(levels, t):>7}{ratio:>8}")


if __name__ == "__main__":
    main()
