"""Covering arrays: thesis example, coverage, determinism, constraints (hypothesis properties)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.covering import (
    _Coverage,
    build_covering_array,
    build_value_rows,
    lower_bound,
    missing_tuples,
)


def all_pairs_covered(rows, levels) -> bool:
    """Independent brute-force check written out for t = 2."""
    for a, b in itertools.combinations(range(len(levels)), 2):
        seen = {(row[a], row[b]) for row in rows}
        if len(seen) != levels[a] * levels[b]:
            return False
    return True


def test_thesis_example_nine_rows() -> None:
    # "can you drink alcohol in public in denmark": value counts 1,1,3,3,1,3,1,3 (Table 2).
    levels = (1, 1, 3, 3, 1, 3, 1, 3)
    array = build_covering_array(levels, 2, seed=0)
    assert len(array.rows) <= 9  # 9 is optimal: 3 x 3 pairs of two 3-valued words
    assert array.rows[0] == (0,) * 8
    assert all_pairs_covered(array.rows, levels)
    assert all(row[c] == 0 for row in array.rows for c in (0, 1, 4, 6))


def test_thesis_example_values() -> None:
    parameters = [
        ("p1", ["can"]),
        ("p2", ["you"]),
        ("p3", ["drink", "drinking", "booze"]),
        ("p4", ["alcohol", "alcoholic drink", "alcoholic beverage"]),
        ("p5", ["in"]),
        ("p6", ["public", "populace", "world"]),
        ("p7", ["in"]),
        ("p8", ["denmark", "kingdom of denmark", "danmark"]),
    ]
    rows = build_value_rows(parameters, 2, seed=3)
    assert rows[0] == ["can", "you", "drink", "alcohol", "in", "public", "in", "denmark"]
    assert len(rows) <= 9
    assert ("booze", "kingdom of denmark") in {(r[2], r[7]) for r in rows}
    pairs = {(r[3], r[7]) for r in rows}
    assert len(pairs) == 9


@pytest.mark.parametrize(
    ("levels", "strength", "best"),
    [
        ((3,) * 4, 2, 9),
        ((3,) * 13, 2, 15),
        ((5,) + (3,) * 8 + (2,) * 2, 2, 15),
        ((2,) * 10, 3, 12),
        ((3,) * 4, 3, 27),
    ],
)
def test_known_sizes(levels, strength, best) -> None:
    array = build_covering_array(levels, strength, seed=0)
    assert len(array.rows) <= best
    assert missing_tuples(array.rows, levels, strength) == []


def test_lower_bound() -> None:
    assert lower_bound([3, 3, 3, 3], 2) == 9
    assert lower_bound([2] * 20, 2) == 8  # comb(7, 4) = 35 >= 20, comb(6, 4) = 15 < 20
    assert lower_bound([2] * 3, 2) == 4
    assert lower_bound([5, 1, 2, 4], 3) == 40


def test_strength_one_and_single_values() -> None:
    assert build_covering_array((4, 2, 3), 1).rows[0] == (0, 0, 0)
    assert len(build_covering_array((4, 2, 3), 1).rows) == 4
    assert build_covering_array((1, 1), 2).rows == ((0, 0),)


def test_forbidden_tuples_respected() -> None:
    levels = (3, 3, 3, 2)
    forbidden = [{0: 1, 1: 2}, {2: 2}, {1: 1, 3: 1}]
    array = build_covering_array(levels, 2, seed=5, forbidden=forbidden)
    for row in array.rows:
        for rule in forbidden:
            assert not all(row[c] == v for c, v in rule.items())
    assert missing_tuples(array.rows, levels, 2, forbidden) == []
    # Value 2 of parameter 2 never appears, and (0:1, 1:2) neither.
    assert all(row[2] != 2 for row in array.rows)


def test_forbidding_original_row_is_invalid() -> None:
    with pytest.raises(InvalidInputError, match="original row"):
        build_covering_array((2, 2), 2, forbidden=[{0: 0}])


@pytest.mark.parametrize("strength", [0, 5])
def test_bad_strength(strength: int) -> None:
    with pytest.raises(InvalidInputError):
        build_covering_array((2, 2), strength)


levels_strategy = st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=7)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    levels=levels_strategy,
    strength=st.integers(min_value=1, max_value=3),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_property_covers_everything(levels, strength, seed) -> None:
    array = build_covering_array(levels, strength, seed, effort=20_000)
    assert array.rows[0] == (0,) * len(levels)
    assert all(0 <= row[c] < levels[c] for row in array.rows for c in range(len(levels)))
    assert missing_tuples(array.rows, levels, strength) == []
    again = build_covering_array(levels, strength, seed, effort=20_000)
    assert again.rows == array.rows


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_constraints(data) -> None:
    levels = data.draw(st.lists(st.integers(min_value=2, max_value=3), min_size=2, max_size=5))
    rules = []
    for _ in range(data.draw(st.integers(min_value=0, max_value=3))):
        a, b = data.draw(
            st.lists(st.integers(0, len(levels) - 1), min_size=2, max_size=2, unique=True)
        )
        rule = {
            a: data.draw(st.integers(1, levels[a] - 1)),
            b: data.draw(st.integers(0, levels[b] - 1)),
        }
        rules.append(rule)
    array = build_covering_array(levels, 2, seed=data.draw(st.integers(0, 99)), forbidden=rules)
    assert array.rows[0] == (0,) * len(levels)
    for row in array.rows:
        assert not any(all(row[c] == v for c, v in rule.items()) for rule in rules)
    assert missing_tuples(array.rows, levels, 2, rules) == []


def test_t4_small() -> None:
    levels = (2, 2, 2, 2, 2)
    array = build_covering_array(levels, 4, seed=1)
    assert missing_tuples(array.rows, levels, 4) == []
    assert 16 <= len(array.rows) <= 24


def test_constraints_that_chain() -> None:
    # x=1 forces y=0 (y=1, y=2 forbidden with x=1), and y=0 with z=1 is forbidden, so x=1
    # needs z in {0, 2}: a greedy choice of z=1 after x=1 must not lose the tuple (x=1, w=1).
    levels = (2, 3, 3, 2)
    forbidden = [{0: 1, 1: 1}, {0: 1, 1: 2}, {1: 0, 2: 1}]
    for seed in range(10):
        array = build_covering_array(levels, 2, seed=seed, forbidden=forbidden)
        assert missing_tuples(array.rows, levels, 2, forbidden) == []
        assert any(row[0] == 1 and row[3] == 1 for row in array.rows)
        assert array.uncoverable == 2 + 1 + 1  # (x1,y1), (x1,y2), (y0,z1), (x1,z1) by implication


@pytest.mark.parametrize(
    ("levels", "strength", "size"),
    [
        ((4,) * 5, 2, 16),
        ((5,) * 6, 2, 25),
        ((4,) * 6, 3, 64),
        ((5,) * 6, 3, 125),
        ((7,) * 8, 2, 49),
        ((3,) * 4, 3, 27),
    ],
)
def test_orthogonal_arrays_are_optimal(levels, strength, size) -> None:
    for seed in (0, 1):
        array = build_covering_array(levels, strength, seed=seed)
        assert len(array.rows) == size == lower_bound(levels, strength)
        assert array.rows[0] == (0,) * len(levels)
        assert missing_tuples(array.rows, levels, strength) == []


@pytest.mark.parametrize(("q", "strength"), [(2, 2), (3, 3), (4, 2), (4, 3), (8, 2), (9, 2)])
def test_field_orthogonal_array(q, strength) -> None:
    import random

    from kontest_tui.generate.covering_algebra import max_columns, orthogonal_array

    k = max_columns(q, strength)
    rows = orthogonal_array(q, strength, k, random.Random(q))
    assert len(rows) == q**strength and rows[0] == [0] * k
    assert missing_tuples(rows, [q] * k, strength) == []


@given(st.integers(min_value=0, max_value=10_000))
@settings(max_examples=60, deadline=None)
def test_move_delta_matches_counter_updates(seed: int) -> None:
    rng = random.Random(seed)
    levels = [rng.randint(2, 4) for _ in range(rng.randint(3, 6))]
    t = rng.randint(2, 3)
    cover = _Coverage(levels, t, [])
    rows = [[rng.randrange(v) for v in levels] for _ in range(rng.randint(2, 6))]
    for row in rows:
        cover.add_row(row)
    row = rows[rng.randrange(len(rows))]
    changes = [(c, rng.randrange(levels[c])) for c in rng.sample(range(len(levels)), t)]
    changes = [(c, v) for c, v in changes if row[c] != v]
    before, kept = len(cover.uncovered), list(row)
    predicted = cover.move_delta(row, changes)
    assert row == kept
    for c, v in changes:
        cover.set_cell(row, c, v)
    assert len(cover.uncovered) - before == predicted
