"""95% intervals for a session's rates, counting the tests of one relation as one cluster.

Every rate a report gives (each oracle's errors / valid tests, KONTEST's total, the logic
rules' hallucination rate) comes with a 95% interval for the rate the model would show on
relations like these. The tests of one relation are not independent: an unknown fact fails
several oracles at once (two sequential orders, the atomic and inter tests share answers), so
the interval treats each relation as one cluster. It is Wilson's score interval (Wilson 1927;
Agresti & Coull 1998 recommend it over the normal one for small counts and rates near 0 or 1)
at the effective sample size `tests / deff`, with Kish's design effect `deff` of a cluster
sample (from the ratio estimator's variance over the relations, never below 1)
(`interval_method` "wilson-cluster"). Why this and not a cluster bootstrap: it needs only
five sums per rate (so a run streamed in chunks gets the same interval as a whole one, and a
million relations cost nothing), it is deterministic, and its coverage is tested over seeded
simulations (tests/oracles/test_rate_intervals.py: 95% nominal, about 95% measured, where
Wilson on the pooled tests falls to about 80%).

A sampled session (`kontest run --sample`) uses the same interval for the rate over the tests
of all the KG's relations. Not estimated there: the ontological oracle (its test of (a, c)
needs the answers about the relations between a and c, which a sample mostly lacks, so its
rate on a sample is biased low; shown without an interval and left out of the estimated
total) and annotated questions (asked in full, not sampled).

This module holds the package's one Wilson interval (`wilson_interval`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kontest_tui.domain.records import Verdict
from kontest_tui.oracles.report_json import RateJSON

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
NOT_ESTIMATED = frozenset({"ontological"})  # biased on a sample: no interval
NOT_SAMPLED = frozenset({"annotation"})  # asked in full: nothing to estimate
TOTAL = "total"  # KONTEST's oracles together
KONTEST_ORACLES = ("atomic", "sequential_intra", "sequential_inter", "ontological")
INTERVAL_METHOD = "wilson-cluster"  # Wilson at tests / Kish's design effect, clusters = relations


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
        """The rate with Wilson's interval at the effective size tests / deff."""
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
        low, high = wilson_interval(p * effective, effective)
        return RateEstimate(self.errors, self.tests, low, high, deff)


def clustered_estimate(per_cluster: Iterable[tuple[int, int]]) -> RateEstimate:
    """The rate over (errors, tests) clusters with Wilson's interval at the effective size."""
    tally = ClusterTally()
    for errors, tests in per_cluster:
        tally.add(errors, tests)
    return tally.estimate()


@dataclass(slots=True)
class RateCells:
    """Per rate name, per relation, [errors, tests]: what the clustered rates are made of."""

    cells: dict[str, dict[str, list[int]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(lambda: [0, 0]))
    )

    def add(self, name: str, relation_id: str, errors: int, tests: int = 1) -> None:
        cell = self.cells[name][relation_id]
        cell[0] += errors
        cell[1] += tests

    def add_verdicts(self, verdicts: Iterable[Verdict], total: Iterable[str]) -> None:
        """Every verdict a test of its oracle's rate (and of TOTAL when its oracle is in
        `total`), its relation the cluster."""
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


def estimate_rates(verdicts: Iterable[Verdict]) -> dict[str, RateEstimate]:
    """Oracle -> its error rate with a 95% interval (clusters = relations), in first-seen
    order, then TOTAL (the KONTEST oracles a sample estimates: all but the ontological one)."""
    cells = RateCells()
    cells.add_verdicts(
        (v for v in verdicts if v.oracle not in NOT_SAMPLED),
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
) -> dict[str, object]:
    """The report's "sample" section: what was sampled and every rate with its interval
    (`gap`: template -> relations it misses, out of `relations` sampled ones)."""
    return {
        **sample,
        "confidence": 0.95,
        "rates": {
            name: {**estimate.to_json(), "estimated": name not in NOT_ESTIMATED}
            for name, estimate in estimate_rates(verdicts).items()
        },
        "gap": {
            template: estimate_share(missing, relations).to_json()
            for template, missing in gap.items()
        },
    }
