"""The report's `rates`: clustered 95% intervals (oracles.intervals), their coverage, and the
Report JSON cells.

Coverage: seeded simulated sessions whose true error rate is known by construction. Each
relation gives KONTEST's six tests (atomic, two intra, two inter, one ontological); a share of
the relations is a fact the model does not know, and their tests fail together far more often
than the others' (what makes tests of one relation correlated). The clustered interval must
hold the true rate about 95% of the time; Wilson's interval on the pooled tests, which takes
them as independent, holds it much less often, which is why the report clusters. Per-path
copies of a fact are one cluster, and few relations with rare errors get the small-sample
correction (benchmarks/interval_coverage.py measures every scenario).
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
    clopper_pearson,
    clustered_estimate,
    fact_of,
    rates_json,
    t_quantile,
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


def total_coverage(
    runs: int,
    relations: int,
    rates: tuple[float, float, float] = (UNKNOWN, FAIL_UNKNOWN, FAIL_KNOWN),
    copies: tuple[int, ...] = (1,),
) -> float:
    """The share of `runs` seeded sessions whose clustered interval holds the true rate.
    Per relation its six tests' errors (`rates`: share unknown, an unknown fact's test error
    rate, a known one's); with `copies`, each fact asked on that many paths (per-path ids,
    the same errors on each copy)."""
    tests = sum(count for _, count in ORACLE_TESTS)
    held = 0
    for seed in range(runs):
        draw = random.Random(seed)
        # each session's rates within 30% of the given ones (a coverage figure at one true
        # rate is an accident of where it falls between two error counts)
        unknown, fail_unknown, fail_known = (rate * draw.uniform(0.7, 1.3) for rate in rates)
        true_rate = unknown * fail_unknown + (1 - unknown) * fail_known
        cells = RateCells()
        for number in range(relations):
            rate = fail_unknown if draw.random() < unknown else fail_known
            errors = sum(draw.random() < rate for _ in range(tests))
            for path in range(draw.choice(copies)):
                relation = f"p{path}:r{number}" if len(copies) > 1 else f"r{number}"
                cells.add(TOTAL, relation, errors, tests)
        estimate = cells.tallies()[TOTAL].estimate()
        held += estimate.low <= true_rate <= estimate.high
    return held / runs


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
    # binomial variance 0.25 / 8 = 0.03125; deff = 1.5; effective size 8 / 1.5 = 5.3333,
    # scaled by (t_7 / t_2)^2, Student's 97.5% quantiles at n - 1 = 7 and m - 1 = 2 degrees
    # of freedom: 2.3646 (tables) and 0.95 / sqrt(2 * 0.975 * 0.025) = 4.3027 (the closed form
    # at 2 df): 1.6108; Clopper-Pearson of half of that.
    estimate = clustered_estimate([(1, 2), (0, 2), (3, 4), (5, 0)])
    assert estimate.errors == 4 and estimate.tests == 8
    assert estimate.design_effect == pytest.approx(1.5)
    t2 = 0.95 / (2 * 0.975 * 0.025) ** 0.5
    assert t_quantile(0.975, 2) == pytest.approx(t2)
    assert t_quantile(0.975, 7) == pytest.approx(2.3646, abs=1e-4)
    effective = 8 / 1.5 * (t_quantile(0.975, 7) / t2) ** 2
    assert effective == pytest.approx(1.6108, abs=1e-4)
    assert (estimate.low, estimate.high) == pytest.approx(
        clopper_pearson(0.5 * effective, effective)
    )
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
    interval = rates["atomic"]["interval"]
    assert interval is not None
    low, high = interval
    assert low < 0.5 < high
    assert rates["ontological"]["interval"] is None
    assert rates["ontological"]["interval_method"] == "not estimated"


def test_clopper_pearson_by_hand() -> None:
    """No error in n tests: the upper bound solves (1 - p)^n = 0.025; all errors: the lower
    bound solves p^n = 0.025; 1 of 2: the bounds solve 1 - (1 - p)^2 = 0.025 and p^2 =
    0.975 (the beta quantiles of Beta(1, 2) and Beta(2, 1))."""
    assert clopper_pearson(0, 10) == pytest.approx((0.0, 1 - 0.025 ** (1 / 10)))
    assert clopper_pearson(10, 10) == pytest.approx((0.025 ** (1 / 10), 1.0))
    assert clopper_pearson(1, 2) == pytest.approx((1 - 0.975**0.5, 0.975**0.5))


def test_per_path_copies_of_a_fact_are_one_cluster() -> None:
    """Per-path ids "pN:A>B" of one fact share a cluster: 100 facts on 1 to 4 paths each,
    the same errors on every copy. Clustered by relation id (before) the interval held the
    rate in 72% of these 300 sessions (benchmarks/interval_coverage.py); by fact, 95%."""
    assert fact_of("p12:Q1>Q2") == "Q1>Q2" and fact_of("Q1>Q2") == "Q1>Q2"
    assert fact_of("pizza:x") == "pizza:x"
    cells = RateCells()
    cells.add("atomic", "p0:a>b", 1)
    cells.add("atomic", "p3:a>b", 1)
    cells.add("atomic", "a>c", 0)
    tally = cells.tallies()["atomic"]
    assert (tally.clusters, tally.errors, tally.tests) == (2, 2, 3)
    covered = total_coverage(300, 100, copies=(1, 2, 3, 4))
    assert covered >= 0.93, covered


def test_few_relations_with_rare_errors_get_the_small_sample_correction() -> None:
    """50 relations, about 5% of them unknown (a test fails there half the time, elsewhere
    1%): a true rate near 3.45%. Wilson at the effective size held it in 90.75% of these 400
    sessions; the degrees-of-freedom correction and Clopper-Pearson's interval in 92.75%
    (what is left: a sample that holds no unknown fact cannot show how errors cluster)."""
    covered = total_coverage(400, 50, rates=(0.05, 0.5, 0.01))
    assert covered >= 0.92, covered
