"""95% intervals for a session's rates, counting the tests of one fact as one cluster.

Every rate a report gives (each oracle's errors / valid tests, KONTEST's total, the other
kinds' rates, the logic rules' hallucination rate) comes with a 95% interval for the rate the
model would show on relations like these. The tests of one fact are not independent: an
unknown fact fails several oracles at once (two sequential orders, the atomic and inter
tests share answers), and per-path mode (`--per-path`) asks the same fact once per path it
lies on, so the interval treats each fact (a relation, its per-path copies together: "p3:A>B"
and "p7:A>B" are the fact "A>B") as one cluster.

The interval is Korn and Graubard's (1998) for a proportion from a cluster sample, the one
the NCHS data presentation standards for proportions (Parker et al. 2017) prescribe:
Clopper-Pearson's exact interval at the effective sample size `tests / deff`, with Kish's
design effect `deff` (from the ratio estimator's variance over the clusters, never below 1),
the effective size then scaled by (t_{n-1} / t_{m-1})^2, Student's 97.5% quantiles at n - 1
and m - 1 degrees of freedom (n tests, m clusters): the small-sample correction for a variance
estimated from few clusters, none when every cluster is one test
(`interval_method` "korn-graubard-cluster"). Why this and not a cluster bootstrap: it needs
only five sums per rate (so a run streamed in chunks gets the same interval as a whole one,
and a million relations cost nothing) and it is deterministic.

Coverage, measured over seeded simulations (`benchmarks/interval_coverage.py` prints it,
docs/oracles-and-metrics.md quotes it): about 95% with 50 relations or more whose errors are
not rare, and with per-path copies of facts; below it with rare errors on few relations,
where a sample often holds no fact the model does not know and so cannot show how the errors
cluster. Wilson's interval on the pooled tests, which takes them as independent, falls far
below.

A sampled session (`kontest run --sample`) uses the same interval for the rate over the tests
of all the KG's relations. Not estimated there: the ontological oracle (its test of (a, c)
needs the answers about the relations between a and c, which a sample mostly lacks, so its
rate on a sample is biased low; shown without an interval and left out of the estimated
total) and annotated questions (asked in full, not sampled).

This module holds the package's one Wilson interval (`wilson_interval`, for shares of
relations, one test each, and the rates no report has) and its one clustered interval.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from kontest_tui.domain.records import Verdict
from kontest_tui.oracles.report_json import RateJSON

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
NOT_ESTIMATED = frozenset({"ontological"})  # biased on a sample: no interval
TOTAL = "total"  # KONTEST's oracles together
KONTEST_ORACLES = ("atomic", "sequential_intra", "sequential_inter", "ontological")
# Clopper-Pearson at the degrees-of-freedom adjusted effective size, clusters = facts
INTERVAL_METHOD = "korn-graubard-cluster"
_PER_PATH_ID = re.compile(r"p\d+:")


def wilson_interval(errors: float, tests: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for `errors` successes in `tests` trials ((0, 1) when no test)."""
    if tests <= 0:
        return 0.0, 1.0
    p = errors / tests
    denominator = 1 + z * z / tests
    centre = (p + z * z / (2 * tests)) / denominator
    half = z * math.sqrt(p * (1 - p) / tests + z * z / (4 * tests * tests)) / denominator
    low = 0.0 if errors <= 0 else max(0.0, centre - half)  # exact at the ends (no rounding
    high = 1.0 if errors >= tests else min(1.0, centre + half)  # residue like 5e-17)
    return low, high


def fact_of(relation_id: str) -> str:
    """The fact a relation id asks about: a per-path id "pN:PARENT>CHILD" without its path
    ("PARENT>CHILD"), any other id as it is (the cluster of its tests)."""
    match = _PER_PATH_ID.match(relation_id)
    return relation_id[match.end() :] if match else relation_id


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 1000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the beta distribution's CDF (a, b > 0)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def _invert(cdf: Callable[[float], float], target: float, low: float, high: float) -> float:
    """The point where an increasing `cdf` reaches `target`, by bisection on [low, high]."""
    for _ in range(100):
        middle = (low + high) / 2
        if cdf(middle) < target:
            low = middle
        else:
            high = middle
        if high - low < 1e-10:  # reports round to 6 decimals
            break
    return (low + high) / 2


def beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of the Beta(a, b) distribution."""
    return _invert(lambda x: regularized_beta(a, b, x), q, 0.0, 1.0)


def t_quantile(q: float, df: float) -> float:
    """Student's t quantile for q > 0.5 with `df` degrees of freedom (P(T <= t) = q)."""
    two_sided = 2.0 * (1.0 - q)  # P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2)
    return _invert(
        lambda t: 1.0 - regularized_beta(df / 2, 0.5, df / (df + t * t)), 1.0 - two_sided, 0, 1e6
    )


def clopper_pearson(errors: float, tests: float) -> tuple[float, float]:
    """Clopper-Pearson's exact 95% interval for `errors` of `tests` (both may be fractions:
    an effective size); (0, 1) when no test."""
    if tests <= 0:
        return 0.0, 1.0
    low = 0.0 if errors <= 0 else beta_quantile(0.025, errors, tests - errors + 1)
    high = 1.0 if errors >= tests else beta_quantile(0.975, errors + 1, tests - errors)
    return low, high


@dataclass(frozen=True, slots=True)
class RateEstimate:
    """A rate, its 95% interval and the design effect the interval used."""

    errors: int
    tests: int
    low: float
    high: float
    design_effect: float = 1.0

    @property
    def rate(self) -> float:
        return self.errors / self.tests if self.tests else 0.0

    def to_json(self) -> dict[str, float | int]:
        """The sample section's cell: errors, tests, rate, low, high, design_effect."""
        return {
            "errors": self.errors,
            "tests": self.tests,
            "rate": round(self.rate, 6),
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "design_effect": round(self.design_effect, 4),
        }

    def rate_json(self, estimated: bool = True) -> RateJSON:
        """The report's `rates` cell: errors, tests, rate, interval [lo, hi] (None when not
        estimated), interval_method, design_effect."""
        return RateJSON(
            errors=self.errors,
            tests=self.tests,
            rate=round(self.rate, 6) if self.tests else None,
            interval=[round(self.low, 6), round(self.high, 6)]
            if estimated and self.tests
            else None,
            interval_method=INTERVAL_METHOD if estimated else "not estimated",
            design_effect=round(self.design_effect, 4),
        )


@dataclass(slots=True)
class ClusterTally:
    """The sums a clustered rate needs: per cluster (relation) errors e and tests t, added up
    as clusters, sum e, sum t, sum e^2, sum e*t, sum t^2 (tallies of disjoint relations add)."""

    clusters: int = 0
    errors: int = 0
    tests: int = 0
    e2: int = 0
    et: int = 0
    t2: int = 0

    def add(self, errors: int, tests: int) -> None:
        """One cluster's counts (a cluster without tests is no cluster)."""
        if not tests:
            return
        self.clusters += 1
        self.errors += errors
        self.tests += tests
        self.e2 += errors * errors
        self.et += errors * tests
        self.t2 += tests * tests

    def merge(self, other: ClusterTally) -> None:
        """Add another tally of other clusters."""
        self.clusters += other.clusters
        self.errors += other.errors
        self.tests += other.tests
        self.e2 += other.e2
        self.et += other.et
        self.t2 += other.t2

    def estimate(self) -> RateEstimate:
        """The rate with Korn and Graubard's interval: Clopper-Pearson at the effective size
        tests / deff, scaled by (t_{n-1} / t_{m-1})^2 (see the module docstring)."""
        if not self.tests:
            return RateEstimate(0, 0, 0.0, 1.0)
        p = self.errors / self.tests
        deff = 1.0
        m = self.clusters
        if m > 1 and 0 < p < 1:
            mean_tests = self.tests / m
            residual = (self.e2 - 2 * p * self.et + p * p * self.t2) / (m - 1)
            variance = residual / (m * mean_tests * mean_tests)  # the ratio estimator's variance
            deff = max(1.0, variance / (p * (1 - p) / self.tests))
        effective = self.tests / deff
        if m > 1:  # the variance is estimated from m clusters: m - 1 degrees of freedom
            effective *= (_t975(self.tests - 1) / _t975(m - 1)) ** 2
        low, high = clopper_pearson(p * effective, effective)
        return RateEstimate(self.errors, self.tests, low, high, deff)


@lru_cache(maxsize=4096)
def _t975(df: int) -> float:
    """Student's 97.5% quantile at `df` degrees of freedom: exact below 30, else the
    Cornish-Fisher expansion in 1 / df (Abramowitz & Stegun 26.7.5; error below 1e-7)."""
    if df < 30:
        return t_quantile(0.975, df)
    z = Z95
    terms = (
        (z**3 + z) / 4,
        (5 * z**5 + 16 * z**3 + 3 * z) / 96,
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
        (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
    )
    return z + sum(term / float(df) ** (power + 1) for power, term in enumerate(terms))


def clustered_estimate(per_cluster: Iterable[tuple[int, int]]) -> RateEstimate:
    """The rate over (errors, tests) clusters with its clustered interval (`ClusterTally`)."""
    tally = ClusterTally()
    for errors, tests in per_cluster:
        tally.add(errors, tests)
    return tally.estimate()


@dataclass(slots=True)
class RateCells:
    """Per rate name, per fact (`fact_of` a relation id), [errors, tests]: what the clustered
    rates are made of."""

    cells: dict[str, dict[str, list[int]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(lambda: [0, 0]))
    )

    def add(self, name: str, relation_id: str, errors: int, tests: int = 1) -> None:
        """One relation's errors and tests of a rate, in its fact's cluster (`fact_of`)."""
        cell = self.cells[name][fact_of(relation_id)]
        cell[0] += errors
        cell[1] += tests

    def add_verdicts(self, verdicts: Iterable[Verdict], total: Iterable[str]) -> None:
        """Every verdict a test of its oracle's rate (and of TOTAL when its oracle is in
        `total`), its relation's fact the cluster."""
        in_total = frozenset(total)
        for verdict in verdicts:
            error = int(verdict.error)
            self.add(verdict.oracle, verdict.relation_id, error)
            if verdict.oracle in in_total:
                self.add(TOTAL, verdict.relation_id, error)

    def tallies(self) -> dict[str, ClusterTally]:
        """Name -> its ClusterTally, in first-seen order (TOTAL last)."""
        names = [name for name in self.cells if name != TOTAL]
        names += [TOTAL] if TOTAL in self.cells else []
        found: dict[str, ClusterTally] = {}
        for name in names:
            tally = ClusterTally()
            for errors, tests in self.cells[name].values():
                tally.add(errors, tests)
            found[name] = tally
        return found


def rates_json(
    tallies: Mapping[str, ClusterTally], not_estimated: Iterable[str] = ()
) -> dict[str, RateJSON]:
    """The report's `rates`: per name its rate and interval (see RateEstimate.rate_json);
    names in `not_estimated` (a sample's ontological rate) have no interval."""
    skipped = frozenset(not_estimated)
    return {
        name: tally.estimate().rate_json(estimated=name not in skipped)
        for name, tally in tallies.items()
    }


def estimate_rates(
    verdicts: Iterable[Verdict], not_sampled: Collection[str] = ()
) -> dict[str, RateEstimate]:
    """Oracle -> its error rate with a 95% interval (clusters = facts), in first-seen
    order, then TOTAL (the KONTEST oracles a sample estimates: all but the ontological one);
    the oracles `not_sampled` (asked in full: the kinds declare them) are left out."""
    cells = RateCells()
    cells.add_verdicts(
        (v for v in verdicts if v.oracle not in not_sampled),
        (name for name in KONTEST_ORACLES if name not in NOT_ESTIMATED),
    )
    return {name: tally.estimate() for name, tally in cells.tallies().items()}


def estimate_share(hits: int, total: int) -> RateEstimate:
    """A share of relations (each its own cluster): plain Wilson."""
    low, high = wilson_interval(hits, total)
    return RateEstimate(hits, total, low, high)


def sample_section(
    sample: Mapping[str, object],
    verdicts: Iterable[Verdict],
    gap: Mapping[str, int],
    relations: int,
    not_sampled: Collection[str] = (),
) -> dict[str, object]:
    """The report's "sample" section: what was sampled and every rate with its interval
    (`gap`: template -> relations it misses, out of `relations` sampled ones), but of the
    oracles `not_sampled` (estimate_rates)."""
    return {
        **sample,
        "confidence": 0.95,
        "rates": {
            name: {**estimate.to_json(), "estimated": name not in NOT_ESTIMATED}
            for name, estimate in estimate_rates(verdicts, not_sampled).items()
        },
        "gap": {
            template: estimate_share(missing, relations).to_json()
            for template, missing in gap.items()
        },
    }
