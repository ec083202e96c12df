"""95% intervals for the rates of a sampled session (`kontest run --sample`).

A sampled session asks a stratified random sample of the KG's relations (generate/sample.py);
each oracle's error rate (errors / valid tests) then estimates the rate over the tests of all
the KG's relations. The interval is Wilson's score interval (Wilson 1927, "Probable inference,
the law of succession, and statistical inference"; Agresti & Coull 1998 recommend it over the
normal one for small counts and rates near 0 or 1). Tests of one relation are not independent
(an unknown fact fails several oracles at once), so the sample counts as `n / deff` tests, with
Kish's design effect `deff` of a cluster sample (one cluster per relation, from the ratio
estimator's variance over the relations, never below 1): the interval is Wilson's at that
effective size, which keeps its coverage near 95% when tests cluster.

Not estimated: the ontological oracle (its test of (a, c) needs the answers about the relations
between a and c, which a sample mostly lacks, so its rate on a sample is biased low; shown
without an interval and left out of the estimated total) and annotated questions (asked in
full, not sampled).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kontest_tui.domain.records import Verdict
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.oracles.metamorphic import METAMORPHIC_ORACLES

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
NOT_ESTIMATED = frozenset({"ontological"})  # biased on a sample: no interval
NOT_SAMPLED = frozenset({"annotation"})  # asked in full: nothing to estimate
TOTAL = "total"  # the KONTEST oracles a sample estimates, together


def wilson_interval(errors: float, tests: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for `errors` successes in `tests` trials ((0, 1) when no test)."""
    if tests <= 0:
        return 0.0, 1.0
    p = errors / tests
    denominator = 1 + z * z / tests
    centre = (p + z * z / (2 * tests)) / denominator
    half = z * math.sqrt(p * (1 - p) / tests + z * z / (4 * tests * tests)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, slots=True)
class RateEstimate:
    """A rate measured on the sample and its 95% interval for the whole population."""

    errors: int
    tests: int
    low: float
    high: float
    design_effect: float = 1.0

    @property
    def rate(self) -> float:
        return self.errors / self.tests if self.tests else 0.0

    def to_json(self) -> dict[str, float | int]:
        return {
            "errors": self.errors,
            "tests": self.tests,
            "rate": round(self.rate, 6),
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "design_effect": round(self.design_effect, 4),
        }


def clustered_estimate(per_cluster: Iterable[tuple[int, int]]) -> RateEstimate:
    """The rate over (errors, tests) clusters with Wilson's interval at the effective size."""
    clusters = [(errors, tests) for errors, tests in per_cluster if tests]
    errors = sum(e for e, _ in clusters)
    tests = sum(t for _, t in clusters)
    if not tests:
        return RateEstimate(0, 0, 0.0, 1.0)
    p = errors / tests
    deff = 1.0
    m = len(clusters)
    if m > 1 and 0 < p < 1:
        mean_tests = tests / m
        residual = sum((e - p * t) ** 2 for e, t in clusters) / (m - 1)
        variance = residual / (m * mean_tests * mean_tests)  # the ratio estimator's variance
        deff = max(1.0, variance / (p * (1 - p) / tests))
    effective = tests / deff
    low, high = wilson_interval(p * effective, effective)
    return RateEstimate(errors, tests, low, high, deff)


def estimate_rates(verdicts: Iterable[Verdict]) -> dict[str, RateEstimate]:
    """Oracle -> its error rate with a 95% interval (clusters = relations), in first-seen
    order, then TOTAL (the KONTEST oracles but the ontological one)."""
    kontest = frozenset(METAMORPHIC_ORACLES)
    cells: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for verdict in verdicts:
        if verdict.oracle in NOT_SAMPLED:
            continue
        names = (verdict.oracle, TOTAL) if verdict.oracle in kontest else (verdict.oracle,)
        for name in names:
            cell = cells[name][verdict.relation_id]
            cell[0] += int(verdict.error)
            cell[1] += 1
    ordered = [name for name in cells if name != TOTAL] + ([TOTAL] if TOTAL in cells else [])
    return {
        name: clustered_estimate((errors, tests) for errors, tests in cells[name].values())
        for name in ordered
    }


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


def evaluation_sample_section(
    sample: Mapping[str, object], evaluation: Evaluation
) -> dict[str, object]:
    """`sample_section` of an evaluated sampled session (`sample`: generate.sample.Sample.to_json)."""
    gap = {tid: gap.missing for tid, gap in evaluation.gap.per_template.items()}
    gap["intersection"] = evaluation.gap.intersection
    return sample_section(sample, evaluation.verdicts, gap, evaluation.relations)
