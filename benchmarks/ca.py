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

# (name, levels, strength, best known size or None). Where each best value comes from:
# - orthogonal arrays (Bush 1952; OA(q^2; q+1, q), OA(q^3; 3, q+2, q) for even q): 3^4, the
#   thesis IPM (3^4 with fixed words), 3^4 t=3, 4^6 t=3, 5^6 t=3 (these equal the lower bound);
# - the exact binary bound (Kleitman-Spencer / Katona): 2^20 -> 8;
# - CAN(2,k,3) = 15 for 11 <= k <= 20 (Torres-Jimenez et al., "New optimal covering arrays
#   using an orderly algorithm"): 3^13 -> 15; 2^10 t=3 -> 12 and 3^6 t=3 -> 33 from the Colbourn
#   covering-array tables; mixed ones (15, 30, 30) as reported for simulated annealing
#   (Cohen, Gibbons, Mugridge, Colbourn 2003);
# - 4^10 -> 24: CA(24;2,12,4) of Colbourn, Keri, Rivas Soriano, Schlage-Puchta (CKRS, a
#   Colbourn-table source; ugroempi/CAs inst/extdata/CKRS/t=2) with two columns dropped;
#   CAN(2,7,4) = 21 is proven, so the true value lies in 21..24;
# - 5^8 -> 35: CA(35;2,9,5) by simulated annealing (Cohen et al.; ugroempi/CAs
#   inst/extdata/CohenSA/2.5.9.35.txt) with a column dropped; the Colbourn table may be lower;
# - 10^5 -> 113: CA(113;2,7,10) (CKRS, same folder) with two columns dropped; 2 MOLS(10)
#   give 4 columns in 100 rows, a fifth is open (3 MOLS(10) unknown), so 100 < best <= 113;
# - 4^20 -> 31: product construction (Colbourn et al. 2006, "Products of mixed covering arrays
#   of strength two") of OA(16;2,4,4) and OA(16;2,5,4) sharing the all-zero row; an upper
#   bound we can derive, not a table look-up (the Colbourn table was not reachable).
CASES: list[tuple[str, tuple[int, ...], int, int | None]] = [
    ("thesis 1,1,3,3,1,3,1,3", (1, 1, 3, 3, 1, 3, 1, 3), 2, 9),
    ("3^4", (3,) * 4, 2, 9),
    ("3^13", (3,) * 13, 2, 15),
    ("4^10", (4,) * 10, 2, 24),
    ("2^20", (2,) * 20, 2, 8),
    ("5^8", (5,) * 8, 2, 35),
    ("10^5", (10,) * 5, 2, 113),
    ("4^20", (4,) * 20, 2, 31),
    ("4^5 (OA)", (4,) * 5, 2, 16),
    ("5^6 (OA)", (5,) * 6, 2, 25),
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
        print(
            f"{name:<24}{t:>2}{len(array.rows):>9}{elapsed:>7.2f}{ap_size:>10}{ap_time:>7}"
            f"{best or '-':>6}{lower_bound(levels, t):>7}{ratio:>8}"
        )


if __name__ == "__main__":
    main()
