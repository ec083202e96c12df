"""t-way covering arrays (t = 1..4, mixed levels) for query variants, written for this project.

A covering array of strength t over parameters with levels (v1, ..., vk) is a set of rows (one
value index per parameter) such that every combination of t values from t different
parameters appears in at least one row. Row 0 is always the all-original row (value index 0
everywhere), so the first variant of a query is the query itself.

Construction: a greedy row-at-a-time builder (AETG-style density: a few candidate rows per
step, each seeded from a missing tuple and completed column by column with the value that
covers most new tuples), then simulated annealing that removes one row at a time and repairs
the array until it covers again (CASA-style "cover a missing tuple" moves). Everything is
driven by `random.Random(seed)` with iteration budgets, never the clock, so the same input
and seed give the same array on every machine.

Constraints are forbidden tuples: mappings {parameter index: value index}; no row contains
all the pairs of one forbidden tuple, and t-tuples that cannot appear in any valid row are
not required.
"""

from __future__ import annotations

import itertools
import math
import random
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.covering_algebra import algebraic_rows

MAX_STRENGTH = 4
# Above this many t-tuples the array is built greedily only (annealing would be slow).
ANNEAL_TUPLE_LIMIT = 60_000
# Annealing: rows tried per move, and the (constant) temperature for worse moves.
SAMPLE_ROWS = 3
TEMPERATURE = 0.5
# Annealing budget in tuple visits (counter look-ups or updates, 1-2 microseconds each).
DEFAULT_EFFORT = 250_000
# Moves one repair (after dropping a row) may take: a base plus a share per t-tuple.
ATTEMPT_BASE = 100
ATTEMPT_PER_TUPLE = 10
# Models too large to build in reasonable time are refused up front (kontest ca, variants):
# the greedy builder takes about 0.1 ms per t-tuple on one core (20 s at this limit), and an
# array must hold at least `lower_bound` rows.
MAX_TUPLES = 200_000
MAX_ROWS = 100_000

Row = tuple[int, ...]
Forbidden = Mapping[int, int]


@dataclass(frozen=True, slots=True)
class CoveringArray:
    """The rows (value indexes, one per parameter) of a covering array and how it was asked for."""

    levels: tuple[int, ...]
    strength: int
    seed: int
    rows: tuple[Row, ...]
    uncoverable: int = 0  # t-tuples no valid row can hold (excluded by constraints)


class _Coverage:
    """How often each t-tuple of values is covered by the current rows (flat counters)."""

    def __init__(self, levels: Sequence[int], strength: int, forbidden: Sequence[dict[int, int]]):
        self.levels = tuple(levels)
        self.strength = strength
        k = len(levels)
        self.combos: list[tuple[int, ...]] = list(itertools.combinations(range(k), strength))
        self.offsets: list[int] = []
        self.mults: list[tuple[int, ...]] = []
        total = 0
        for combo in self.combos:
            self.offsets.append(total)
            mult = []
            size = 1
            for col in reversed(combo):
                mult.append(size)
                size *= levels[col]
            self.mults.append(tuple(reversed(mult)))
            total += size
        self.total = total
        # Per column: (offset, column multiplier, ((other column, multiplier), ...)).
        self.by_col: list[list[tuple[int, int, tuple[tuple[int, int], ...]]]] = [
            [] for _ in range(k)
        ]
        for j, combo in enumerate(self.combos):
            for pos, col in enumerate(combo):
                others = tuple(
                    (other, self.mults[j][p]) for p, other in enumerate(combo) if other != col
                )
                self.by_col[col].append((self.offsets[j], self.mults[j][pos], others))
        self.counts = [0] * total
        self.required = bytearray(b"\x01") * total
        for rule in forbidden:
            self._exclude(rule)
        self.uncovered: list[int] = [i for i in range(total) if self.required[i]]
        self.position = [-1] * total
        for pos, index in enumerate(self.uncovered):
            self.position[index] = pos

    def _exclude(self, rule: dict[int, int]) -> None:
        """Mark every t-tuple that contains the forbidden tuple as not required."""
        cols = set(rule)
        if len(cols) > self.strength:
            return
        for j, combo in enumerate(self.combos):
            if not cols <= set(combo):
                continue
            free = [c for c in combo if c not in cols]
            for values in itertools.product(*(range(self.levels[c]) for c in free)):
                assignment = dict(rule)
                assignment.update(zip(free, values, strict=True))
                self.required[self.index_of(j, assignment)] = 0

    def index_of(self, combo_index: int, assignment: Mapping[int, int]) -> int:
        combo = self.combos[combo_index]
        mult = self.mults[combo_index]
        return self.offsets[combo_index] + sum(
            assignment[c] * m for c, m in zip(combo, mult, strict=True)
        )

    def decode(self, index: int) -> dict[int, int]:
        """The {column: value} assignment of a flat tuple index."""
        j = bisect_right(self.offsets, index) - 1
        rest = index - self.offsets[j]
        out: dict[int, int] = {}
        for col, mult in zip(self.combos[j], self.mults[j], strict=True):
            out[col], rest = divmod(rest, mult)
        return out

    def _drop(self, index: int) -> None:
        pos = self.position[index]
        last = self.uncovered.pop()
        if last != index:
            self.uncovered[pos] = last
            self.position[last] = pos
        self.position[index] = -1

    def _add(self, index: int) -> None:
        self.position[index] = len(self.uncovered)
        self.uncovered.append(index)

    def unrequire(self, index: int) -> None:
        """Stop requiring a tuple (no valid row can hold it)."""
        if self.required[index]:
            self.required[index] = 0
            if self.position[index] >= 0:
                self._drop(index)

    def add_row(self, row: Sequence[int], sign: int = 1) -> None:
        for j, combo in enumerate(self.combos):
            index = self.offsets[j] + sum(
                row[c] * m for c, m in zip(combo, self.mults[j], strict=True)
            )
            self._bump(index, sign)

    def _bump(self, index: int, sign: int) -> None:
        counts = self.counts
        if sign > 0:
            counts[index] += 1
            if counts[index] == 1 and self.required[index]:
                self._drop(index)
        else:
            counts[index] -= 1
            if counts[index] == 0 and self.required[index]:
                self._add(index)

    def set_cell(self, row: list[int], col: int, value: int) -> None:
        """Change one cell of a row already counted, updating every tuple through it."""
        old = row[col]
        if old == value:
            return
        for offset, mult, others in self.by_col[col]:
            base = offset + sum(row[o] * m for o, m in others)
            self._bump(base + old * mult, -1)
            self._bump(base + value * mult, 1)
        row[col] = value

    def cell_delta(self, row: Sequence[int], col: int, value: int) -> int:
        """How the number of uncovered required tuples changes if one cell is set (no update)."""
        old = row[col]
        if old == value:
            return 0
        counts = self.counts
        required = self.required
        delta = 0
        for offset, mult, others in self.by_col[col]:
            base = offset
            for o, m in others:
                base += row[o] * m
            lost = base + old * mult
            if counts[lost] == 1 and required[lost]:
                delta += 1
            won = base + value * mult
            if not counts[won] and required[won]:
                delta -= 1
        return delta

    def move_delta(self, row: list[int], changes: Sequence[tuple[int, int]]) -> int:
        """Like `cell_delta` for several cells at once (the row is restored, counters untouched).

        Tuples through two changed cells are seen twice, so their counts are tracked in a
        small overlay instead of the counters.
        """
        counts = self.counts
        required = self.required
        overlay: dict[int, int] = {}
        saved = [(c, row[c]) for c, _ in changes]
        delta = 0
        for col, value in changes:
            old = row[col]
            for offset, mult, others in self.by_col[col]:
                base = offset
                for o, m in others:
                    base += row[o] * m
                lost = base + old * mult
                n = counts[lost] + overlay.get(lost, 0)
                if n == 1 and required[lost]:
                    delta += 1
                overlay[lost] = n - 1 - counts[lost]
                won = base + value * mult
                n = counts[won] + overlay.get(won, 0)
                if not n and required[won]:
                    delta -= 1
                overlay[won] = n + 1 - counts[won]
            row[col] = value
        for c, v in saved:
            row[c] = v
        return delta

    def gain(self, row: Sequence[int | None], col: int, value: int) -> int:
        """How many uncovered required tuples a value would cover, given the assigned columns."""
        counts = self.counts
        required = self.required
        total = 0
        for offset, mult, others in self.by_col[col]:
            base = offset + value * mult
            for o, m in others:
                v = row[o]
                if v is None:
                    break
                base += v * m
            else:
                if not counts[base] and required[base]:
                    total += 1
        return total


def _violates(row: Sequence[int | None], forbidden: Sequence[dict[int, int]]) -> bool:
    """Whether the assigned cells of a row hold all pairs of some forbidden tuple."""
    return any(all(row[c] == v for c, v in rule.items()) for rule in forbidden)


def _complete_row(
    partial: list[int | None], levels: Sequence[int], forbidden: Sequence[dict[int, int]]
) -> list[int] | None:
    """Fill the unassigned cells with a valid assignment (depth-first), or None if none exists."""
    free = [c for c, v in enumerate(partial) if v is None]
    row = list(partial)

    def fill(i: int) -> bool:
        if i == len(free):
            return True
        col = free[i]
        for value in range(levels[col]):
            row[col] = value
            if not _violates(row, forbidden) and fill(i + 1):
                return True
        row[col] = None
        return False

    if _violates(row, forbidden) or not fill(0):
        return None
    return [int(v) for v in row]  # type: ignore[arg-type]


def _greedy_row(
    cover: _Coverage,
    seed_tuple: dict[int, int],
    forbidden: Sequence[dict[int, int]],
    rng: random.Random,
) -> list[int] | None:
    """One candidate row: the seed tuple, then each free column set to its best-covering value."""
    levels = cover.levels
    row: list[int | None] = [None] * len(levels)
    for col, value in seed_tuple.items():
        row[col] = value
    free = [c for c in range(len(levels)) if row[c] is None]
    rng.shuffle(free)
    for col in free:
        best: list[int] = []
        best_gain = -1
        for value in range(levels[col]):
            if forbidden:
                row[col] = value
                if _violates(row, forbidden):
                    continue
            score = cover.gain(row, col, value)
            if score > best_gain:
                best, best_gain = [value], score
            elif score == best_gain:
                best.append(value)
        if not best:
            row[col] = None
            done = _complete_row(row, levels, forbidden)
            if done is None:  # the greedy choices so far may be the culprit: keep only the seed
                seed_only: list[int | None] = [None] * len(levels)
                for c, v in seed_tuple.items():
                    seed_only[c] = v
                done = _complete_row(seed_only, levels, forbidden)
            return done
        row[col] = best[0] if len(best) == 1 else rng.choice(best)
    return [int(v) for v in row]  # type: ignore[arg-type]


def _row_gain(cover: _Coverage, row: Sequence[int]) -> int:
    return sum(
        1
        for j, combo in enumerate(cover.combos)
        if not cover.counts[
            idx := cover.offsets[j]
            + sum(row[c] * m for c, m in zip(combo, cover.mults[j], strict=True))
        ]
        and cover.required[idx]
    )


def _build_greedy(
    cover: _Coverage,
    forbidden: Sequence[dict[int, int]],
    rng: random.Random,
    candidates: int,
) -> list[list[int]]:
    rows: list[list[int]] = [[0] * len(cover.levels)]
    cover.add_row(rows[0])
    while cover.uncovered:
        best_row: list[int] | None = None
        best_gain = 0
        for _ in range(candidates):
            if not cover.uncovered:
                break
            target = cover.uncovered[rng.randrange(len(cover.uncovered))]
            row = _greedy_row(cover, cover.decode(target), forbidden, rng)
            if row is None:
                cover.unrequire(target)  # no valid row can hold this tuple
                continue
            score = _row_gain(cover, row)
            if score > best_gain:
                best_row, best_gain = row, score
        if best_row is not None:
            rows.append(best_row)
            cover.add_row(best_row)
    return rows


def _anneal(
    cover: _Coverage,
    rows: list[list[int]],
    forbidden: Sequence[dict[int, int]],
    rng: random.Random,
    budget: int,
) -> tuple[bool, int]:
    """Repair `rows` (already counted in `cover`) until every required tuple is covered.

    Each move takes a missing tuple and writes it into the row where that costs least
    (row 0 stays the original row); worse moves pass with the annealing probability.
    """
    if len(rows) < 2:
        return not cover.uncovered, 0
    last = len(rows) - 1
    sample = min(last, SAMPLE_ROWS)
    for used in range(budget):
        if not cover.uncovered:
            return True, used
        target = cover.decode(cover.uncovered[rng.randrange(len(cover.uncovered))])
        best: list[int] = []
        best_delta = 1 << 30
        close = [
            r for r in range(1, last + 1) if sum(rows[r][c] != v for c, v in target.items()) == 1
        ]
        picks = rng.sample(close, min(len(close), sample)) if close else []
        picks.append(1 + rng.randrange(last))
        for r in picks:
            row = rows[r]
            diff = [(c, v) for c, v in target.items() if row[c] != v]
            if len(diff) == 1:  # the common case
                delta = cover.cell_delta(row, *diff[0])
            else:
                delta = cover.move_delta(row, diff)
            if forbidden:
                saved = [row[c] for c, _ in diff]
                for c, v in diff:
                    row[c] = v
                if _violates(row, forbidden):
                    delta = 1 << 30
                for (c, _), v in zip(diff, saved, strict=True):
                    row[c] = v
            if delta < best_delta:
                best, best_delta = [r], delta
            elif delta == best_delta:
                best.append(r)
        if best_delta >= 1 << 30:
            continue
        if best_delta > 0 and rng.random() >= math.exp(-best_delta / TEMPERATURE):
            continue
        row = rows[best[0] if len(best) == 1 else rng.choice(best)]
        for c, v in target.items():
            cover.set_cell(row, c, v)
    return not cover.uncovered, budget


def _least_useful_row(cover: _Coverage, rows: list[list[int]]) -> int:
    """The row (not row 0) covering the fewest tuples no other row covers."""
    best_r, best_score = 1, None
    for r in range(1, len(rows)):
        row = rows[r]
        score = 0
        for j, combo in enumerate(cover.combos):
            idx = cover.offsets[j] + sum(
                row[c] * m for c, m in zip(combo, cover.mults[j], strict=True)
            )
            if cover.counts[idx] == 1 and cover.required[idx]:
                score += 1
        if best_score is None or score < best_score:
            best_r, best_score = r, score
    return best_r


def _shrink(
    cover: _Coverage,
    rows: list[list[int]],
    forbidden: Sequence[dict[int, int]],
    rng: random.Random,
    budget: int,
    lower_bound: int,
) -> list[list[int]]:
    """Remove rows one at a time while annealing can repair the array within its budget."""
    best = [list(r) for r in rows]
    while len(rows) > max(lower_bound, 2) and budget > 0:
        drop = _least_useful_row(cover, rows)
        cover.add_row(rows[drop], -1)
        del rows[drop]
        # One repair may not take the whole budget: a failing last attempt would otherwise
        # spend all of it, which is most of the time on small IPMs.
        cap = ATTEMPT_BASE + ATTEMPT_PER_TUPLE * cover.total
        repaired, used = _anneal(cover, rows, forbidden, rng, min(budget, cap))
        budget -= used
        if not repaired:
            break
        best = [list(r) for r in rows]
    return best


def lower_bound(levels: Sequence[int], strength: int) -> int:
    """A size no t-way covering array can go below (exact for two-level strength 2)."""
    varying = sorted((v for v in levels if v > 1), reverse=True)
    t = min(strength, len(varying))
    bound = math.prod(varying[:t])
    if t == 2 and varying and varying[0] == 2:
        # Kleitman-Spencer / Katona: N rows suffice iff comb(N-1, ceil(N/2)) >= k.
        n = 4
        while math.comb(n - 1, math.ceil(n / 2)) < len(varying):
            n += 1
        bound = max(bound, n)
    return bound


def count_tuples(levels: Sequence[int], strength: int) -> int:
    """The number of t-tuples of values a t-way covering array must cover (the sum over
    every t parameters of the product of their levels), computed without listing them."""
    sums = [1] + [0] * strength  # sums[j]: the j-parameter count over the levels so far
    for level in levels:
        for j in range(strength, 0, -1):
            sums[j] += sums[j - 1] * level
    return sums[strength]


def check_size(levels: Sequence[int], strength: int, *, tuples: bool = True) -> None:
    """InvalidInputError when an array for `levels` at `strength` cannot be built in
    reasonable time: more than MAX_ROWS rows at least, or more than MAX_TUPLES t-tuples."""
    varying = [level for level in levels if level > 1]
    t = min(strength, len(varying))
    if t == 0:
        return
    rows = lower_bound(varying, t)
    if rows > MAX_ROWS:
        raise InvalidInputError(
            f"a {t}-way covering array of {len(varying)} parameters needs at least {rows:,} "
            f"rows (at most {MAX_ROWS:,}); lower the strength or the number of values"
        )
    count = count_tuples(varying, t)
    if tuples and count > MAX_TUPLES:
        raise InvalidInputError(
            f"a {t}-way covering array of {len(varying)} parameters must cover {count:,} "
            f"value combinations, too many to build in reasonable time (at most "
            f"{MAX_TUPLES:,}); lower the strength or the number of parameters or values"
        )


def _validate(
    levels: Sequence[int], strength: int, forbidden: Iterable[Forbidden]
) -> list[dict[int, int]]:
    if not 1 <= strength <= MAX_STRENGTH:
        raise InvalidInputError(f"strength must be between 1 and {MAX_STRENGTH}, got {strength}")
    for i, level in enumerate(levels):
        if not isinstance(level, int) or level < 1:
            raise InvalidInputError(f"parameter {i} needs at least one value, got {level!r}")
    rules: list[dict[int, int]] = []
    for rule in forbidden:
        clean = {int(c): int(v) for c, v in rule.items()}
        if not clean:
            raise InvalidInputError("an empty forbidden tuple excludes every row")
        for c, v in clean.items():
            if not 0 <= c < len(levels) or not 0 <= v < levels[c]:
                raise InvalidInputError(
                    f"forbidden tuple {clean} names a value that does not exist"
                )
        rules.append(clean)
    if _violates([0] * len(levels), rules):
        raise InvalidInputError("a forbidden tuple excludes the original row (all first values)")
    return rules


def build_covering_array(
    levels: Sequence[int],
    strength: int = 2,
    seed: int = 0,
    forbidden: Iterable[Forbidden] = (),
    *,
    effort: int = DEFAULT_EFFORT,
) -> CoveringArray:
    """A t-way covering array for parameters with the given numbers of values.

    `effort` is the annealing budget in tuple updates (0 = greedy only; the default is
    about half a second of work); it bounds the time, never the result's correctness.
    Parameters with one value are fixed at index 0.
    """
    levels = tuple(levels)
    rules = _validate(levels, strength, forbidden)
    check_size(levels, strength, tuples=False)
    rng = random.Random(seed)
    varying = [c for c, level in enumerate(levels) if level > 1]
    t = min(strength, len(varying))
    if t == 0:
        return CoveringArray(levels, strength, seed, ((0,) * len(levels),))
    # Work on the varying columns only; fixed ones are 0 in every row.
    sub_levels = [levels[c] for c in varying]
    position = {c: i for i, c in enumerate(varying)}
    sub_rules = [
        {position[c]: v for c, v in rule.items()}
        for rule in rules
        if all(c in position for c in rule)
    ]
    bound = lower_bound(sub_levels, t)
    # Orthogonal arrays (finite fields) are optimal when every parameter has q values and
    # a good start otherwise; constraints would need repairs, so they use the greedy only.
    algebraic = None if sub_rules else algebraic_rows(sub_levels, t, random.Random(seed), bound)
    if algebraic is not None and len(algebraic) <= bound:
        return CoveringArray(levels, strength, seed, _widen(algebraic, levels, varying), 0)
    check_size(sub_levels, t)  # an optimal orthogonal array is fast; the builder may not be
    cover = _Coverage(sub_levels, t, sub_rules)
    excluded = cover.total - len(cover.uncovered)
    candidates = 8 if cover.total <= 20_000 else 3
    rows = _build_greedy(cover, sub_rules, rng, candidates)
    uncoverable = sum(1 for i in range(cover.total) if not cover.required[i]) - excluded
    if algebraic is not None and len(algebraic) < len(rows):
        cover = _Coverage(sub_levels, t, sub_rules)
        rows = algebraic
        for row in rows:
            cover.add_row(row)
    if effort > 0 and cover.total <= ANNEAL_TUPLE_LIMIT and len(rows) > 2:
        # A move scores SAMPLE_ROWS rows one cell away and one random row (up to t cells) by
        # look-ups, then rewrites one of them: about (SAMPLE_ROWS + t) visits per tuple of a cell.
        moves = effort // ((SAMPLE_ROWS + t) * math.comb(len(varying) - 1, t - 1))
        rows = _shrink(cover, rows, sub_rules, rng, moves, bound)
    return CoveringArray(
        levels, strength, seed, _widen(rows, levels, varying), uncoverable + excluded
    )


def _widen(
    rows: Sequence[Sequence[int]], levels: Sequence[int], varying: Sequence[int]
) -> tuple[Row, ...]:
    """Rows over the varying columns back to all columns (fixed ones are 0)."""
    full = []
    for row in rows:
        out = [0] * len(levels)
        for i, c in enumerate(varying):
            out[c] = row[i]
        full.append(tuple(out))
    return tuple(full)


def missing_tuples(
    rows: Iterable[Sequence[int]],
    levels: Sequence[int],
    strength: int,
    forbidden: Iterable[Forbidden] = (),
) -> list[dict[int, int]]:
    """The t-tuples (as {parameter: value}) that no row covers and no constraint excludes.

    A checker independent of the builder, used by tests and `kontest ca --check`.
    """
    rules = [dict(rule) for rule in forbidden]
    t = min(strength, len(levels))
    seen: set[tuple[tuple[int, int], ...]] = set()
    for row in rows:
        for combo in itertools.combinations(range(len(levels)), t):
            seen.add(tuple((c, row[c]) for c in combo))
    missing = []
    for combo in itertools.combinations(range(len(levels)), t):
        for values in itertools.product(*(range(levels[c]) for c in combo)):
            key = tuple(zip(combo, values, strict=True))
            if key in seen:
                continue
            assignment = dict(key)
            if any(all(assignment.get(c) == v for c, v in rule.items()) for rule in rules):
                continue
            partial: list[int | None] = [None] * len(levels)
            for c, v in key:
                partial[c] = v
            if rules and _complete_row(partial, levels, rules) is None:
                continue
            missing.append(assignment)
    return missing


def build_value_rows(
    parameters: Sequence[tuple[str, Sequence[str]]],
    strength: int = 2,
    seed: int = 0,
    forbidden: Iterable[Mapping[str, str]] = (),
    *,
    effort: int = DEFAULT_EFFORT,
) -> list[list[str]]:
    """Covering-array rows as values: `parameters` are (name, values) with the original first.

    `forbidden` holds {parameter name: value} combinations no row may contain.
    """
    names = [name for name, _ in parameters]
    index = {name: i for i, name in enumerate(names)}
    if len(index) != len(names):
        raise InvalidInputError("parameter names must be unique")
    rules = []
    for rule in forbidden:
        clean = {}
        for name, value in rule.items():
            if name not in index:
                raise InvalidInputError(f"forbidden tuple names an unknown parameter {name!r}")
            values = list(parameters[index[name]][1])
            if value not in values:
                raise InvalidInputError(
                    f"forbidden tuple names an unknown value {value!r} of {name!r}"
                )
            clean[index[name]] = values.index(value)
        rules.append(clean)
    levels = [len(values) for _, values in parameters]
    array = build_covering_array(levels, strength, seed, rules, effort=effort)
    return [[parameters[c][1][v] for c, v in enumerate(row)] for row in array.rows]
