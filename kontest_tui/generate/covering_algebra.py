"""Algebraic covering arrays: orthogonal arrays over finite fields, for `generate.covering`.

For a prime power q and strength t <= q, the rows of the orthogonal array OA(q^t; t, q+1, q)
are the polynomials f of degree < t over GF(q) (Bush 1952, Reed-Solomon codes): column x
holds f(x) for each field element x, and one more column holds the coefficient of x^(t-1).
For t = 3 and even q a further column (the coefficient of x, the nucleus of the conic)
keeps the strength: OA(q^3; 3, q+2, q) (hyperoval). Every t-tuple appears exactly once, so
for k columns with q values these arrays are optimal, e.g. 4^5 in 16 rows, 5^6 in 25,
4^6 at t = 3 in 64 and 5^6 at t = 3 in 125.

Columns with fewer than q values fold the extra symbols onto existing ones (value mod
level), which keeps coverage; duplicate rows are then dropped. The zero polynomial gives
the all-zero row, kept first, so row 0 stays the original row. The seed shuffles which
field points the columns use and relabels the non-zero symbols of each column.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence

Row = list[int]
# Orthogonal arrays larger than this multiple of the lower bound are not tried.
OA_SLACK = 2.5


def prime_power(n: int) -> tuple[int, int] | None:
    """(p, m) with p prime and p**m == n, or None."""
    if n < 2:
        return None
    for p in range(2, n + 1):
        if n % p == 0:
            m = 0
            while n % p == 0:
                n //= p
                m += 1
            return (p, m) if n == 1 else None
    return None


def _field_tables(q: int) -> tuple[list[list[int]], list[list[int]]]:
    """Addition and multiplication tables of GF(q); elements are ints 0..q-1 (base-p digits)."""
    pm = prime_power(q)
    if pm is None:
        raise ValueError(f"{q} is not a prime power")
    p, m = pm

    def digits(a: int) -> list[int]:
        return [(a // p**i) % p for i in range(m)]

    def number(ds: Sequence[int]) -> int:
        return sum(d * p**i for i, d in enumerate(ds))

    add = [
        [number([(x + y) % p for x, y in zip(digits(a), digits(b), strict=True)]) for b in range(q)]
        for a in range(q)
    ]
    if m == 1:
        return add, [[(a * b) % p for b in range(q)] for a in range(q)]
    # A monic irreducible polynomial of degree m: no root-free search needed, just check that
    # multiplication by x generates a field (every non-zero element has an inverse).
    for tail in itertools.product(range(p), repeat=m):
        modulus = list(tail)  # x^m = -(tail) ... coefficients of x^0..x^(m-1)
        mul = _poly_mul_table(p, m, modulus, digits, number)
        if all(any(mul[a][b] == 1 for b in range(1, q)) for a in range(1, q)):
            return add, mul
    raise ValueError(f"no irreducible polynomial for GF({q})")  # pragma: no cover


def _poly_mul_table(
    p: int,
    m: int,
    modulus: list[int],
    digits: Callable[[int], list[int]],
    number: Callable[[Sequence[int]], int],
) -> list[list[int]]:
    q = p**m
    table = [[0] * q for _ in range(q)]
    for a in range(q):
        da = digits(a)
        for b in range(q):
            db = digits(b)
            prod = [0] * (2 * m - 1)
            for i, x in enumerate(da):
                if x:
                    for j, y in enumerate(db):
                        prod[i + j] = (prod[i + j] + x * y) % p
            for deg in range(2 * m - 2, m - 1, -1):  # reduce with x^m = -modulus
                c = prod[deg]
                if c:
                    prod[deg] = 0
                    for i, coef in enumerate(modulus):
                        prod[deg - m + i] = (prod[deg - m + i] - c * coef) % p
            table[a][b] = number(prod[:m])
    return table


def max_columns(q: int, strength: int) -> int:
    """How many columns the orthogonal array over GF(q) of this strength can have."""
    if strength > q:
        return 0
    extra = 1 if strength == 3 and q % 2 == 0 else 0
    return q + 1 + extra


def orthogonal_array(q: int, strength: int, k: int, rng: random.Random) -> list[Row]:
    """OA(q^t; t, k, q) rows, the all-zero row first (k <= max_columns(q, t))."""
    if k > max_columns(q, strength):
        raise ValueError(f"no OA over GF({q}) with strength {strength} and {k} columns")
    add, mul = _field_tables(q)
    t = strength
    # A column is a coefficient functional: value = sum(coef[i] * weight[i]).
    points: list[list[int]] = []
    for x in range(q):
        weights = [1]
        for _ in range(t - 1):
            weights.append(mul[weights[-1]][x])
        points.append(weights)
    points.append([0] * (t - 1) + [1])  # leading coefficient (the point at infinity)
    if t == 3 and q % 2 == 0:
        points.append([0, 1, 0])  # nucleus of the conic
    chosen = rng.sample(points, k)
    relabel = []
    for _ in range(k):
        nonzero = list(range(1, q))
        rng.shuffle(nonzero)
        relabel.append([0, *nonzero])
    rows: list[Row] = []
    for coefs in itertools.product(range(q), repeat=t):
        row = []
        for col, weights in enumerate(chosen):
            value = 0
            for c, w in zip(coefs, weights, strict=True):
                value = add[value][mul[c][w]]
            row.append(relabel[col][value])
        rows.append(row)
    return rows  # coefs (0, ..., 0) come first: the zero row


def algebraic_rows(
    levels: Sequence[int], strength: int, rng: random.Random, bound: int
) -> list[Row] | None:
    """A covering array from the smallest suitable orthogonal array, or None if none fits.

    All levels must be at least 2; the result's row 0 is all zeros. Arrays of more than
    `OA_SLACK` times `bound` (a lower bound on the size) are not worth building.
    """
    k = len(levels)
    if k <= strength or not levels:
        return None
    q = max(levels)
    while prime_power(q) is None or max_columns(q, strength) < k:
        q += 1
    if q**strength > OA_SLACK * bound:
        return None
    rows = orthogonal_array(q, strength, k, rng)
    seen: set[tuple[int, ...]] = set()
    out: list[Row] = []
    for row in rows:
        folded = tuple(v % level for v, level in zip(row, levels, strict=True))
        if folded not in seen:
            seen.add(folded)
            out.append(list(folded))
    return out
