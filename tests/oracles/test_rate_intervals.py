"""The report's `rates`: clustered 95% intervals (oracles.intervals), their coverage, and the
Report JSON cells.

Coverage: seeded simulated sessions whose true error rate is known by construction. Each
relation gives KONTEST's six tests (atomic, two intra, two inter, one ontological); a share of
the relations is a fact the model does not know, and their tests fail together far more often
than the others' (what makes tests of one relation correlated). The clustered interval must
hold the true rate about 95% of the time; Wilson's interval on the pooled tests, which takes
them as independent, holds it much less often, which is why the report clusters.
"""

from __future__ import annotations

import random

import pytest

from kontest_tui.domain.records import Verdict
from kontest_tui.oracles.intervals import (
    INTERVAL_METHOD,
    TOTAL,
    ClusterTally,
    RateCells,
    clustered_estimate,
    rates_json,
    wilson_interval,
)

ORACLE_TESTS = (
    ("atomic", 1),
    ("sequential_intra", 2),
    ("sequential_inter", 2),
    ("ontological", 1),
)
UNKNOWN = 0.25  # share of relations the model does not know
FAIL_UNKNOWN = 0.55  # a test's error rate on an unknown relation
FAIL_KNOWN = 0.04  # and on a known one
TRUE_RATE = UNKNOWN * FAIL_UNKNOWN + (1 - UNKNOWN) * FAIL_KNOWN  # 0.1675


def simulated_session(seed: int, relations: int = 300) -> list[Verdict]:
    """One session's verdicts: per relation, its six tests, failing at its own rate."""
    draw = random.Random(seed)
    verdicts = []
    for number in range(relations):
        rate = FAIL_UNKNOWN if draw.random() < UNKNOWN else FAIL_KNOWN
        for oracle, tests in ORACLE_TESTS:
            for _ in range(tests):
                error = draw.random() < rate
                verdicts.append(Verdict(oracle, f"r{number}", "t1", error, (), (), ""))
    return verdicts


def test_clustered_interval_covers_the_true_rate_and_pooled_wilson_does_not() -> None:
    runs = 400
    clustered = pooled = 0
    effects = []
    for seed in range(runs):
        cells = RateCells()
        cells.add_verdicts(simulated_session(seed), [name for name, _ in ORACLE_TESTS])
        tally = cells.tallies()[TOTAL]
        estimate = tally.estimate()
        effects.append(estimate.design_effect)
        clustered += estimate.low <= TRUE_RATE <= estimate.high
        low, high = wilson_interval(tally.errors, tally.tests)
        pooled += low <= TRUE_RATE <= high
    # nominal 95%; 400 runs give a standard error of about 1.1 points
    assert clustered / runs >= 0.925, clustered / runs
    assert pooled / runs <= 0.88, pooled / runs
    # six tests a relation with an intra-cluster correlation of about 0.3: deff about 2.5
    assert 1.8 < sum(effects) / runs < 3.2


def test_cluster_tally_sums_match_the_per_cluster_formula() -> None:
    # Hand-worked: clusters (1, 2), (0, 2), (3, 4): p = 4/8 = 0.5, m = 3, mean t = 8/3;
    # residuals (1-1)^2 + (0-1)^2 + (3-2)^2 = 2, / (m-1) = 1; variance 1 / (3 * 64/9) = 0.046875;
    # binomial variance 0.25 / 8 = 0.03125; deff = 1.5; effective size 8 / 1.5 = 5.3333.
    estimate = clustered_estimate([(1, 2), (0, 2), (3, 4), (5, 0)])
    assert estimate.errors == 4 and estimate.tests == 8
    assert estimate.design_effect == pytest.approx(1.5)
    assert (estimate.low, estimate.high) == pytest.approx(wilson_interval(0.5 * 8 / 1.5, 8 / 1.5))
    left, right = ClusterTally(), ClusterTally()
    left.add(1, 2)
    right.add(0, 2)
    right.add(3, 4)
    left.merge(right)
    assert left.estimate() == estimate
    # One test per cluster: the variance's m / (m - 1) correction only (10 clusters: 10/9).
    assert clustered_estimate([(1, 1)] * 3 + [(0, 1)] * 7).design_effect == pytest.approx(10 / 9)


def test_rates_json_cells() -> None:
    tally = ClusterTally()
    for errors, tests in ((1, 2), (0, 2), (3, 4)):
        tally.add(errors, tests)
    rates = rates_json({"atomic": tally, "ontological": tally}, not_estimated=["ontological"])
    assert rates["atomic"]["errors"] == 4 and rates["atomic"]["tests"] == 8
    assert rates["atomic"]["rate"] == 0.5 and rates["atomic"]["interval_method"] == INTERVAL_METHOD
    low, high = rates["atomic"]["interval"]
    assert low < 0.5 < high
    assert rates["ontological"]["interval"] is None
    assert rates["ontological"]["interval_method"] == "not estimated"
