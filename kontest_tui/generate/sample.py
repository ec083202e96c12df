"""A seeded random sample of a KG's relations, stratified by relation type and depth.

`kontest run --sample N` (or `P%`) asks only a sample of the relations; the report then
estimates every rate over all of them with a 95% interval (oracles/intervals.py). The strata
are (relation type, depth = edges from parent to child); each gets its share of the sample by
largest remainders (proportional allocation), and within a stratum the relations with the
smallest seeded hash are taken, so the sample depends only on the seed and the relation ids.

One pass over the relations, keeping only candidates: with `N`, at most N per stratum (a
bounded heap); with `P%`, those whose hash falls below a threshold a few standard deviations
above P% (shrinking as the stratum grows), from which each stratum's share is taken. Should a
stratum keep fewer candidates than its share (a chance below 1e-9), a second pass takes them;
either way the sample is the same. It is returned in generation order.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kontest_tui.domain.records import Relation
from kontest_tui.errors import InvalidInputError

_SPEC = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$")
_UNITS = float(2**64)
MARGIN_SD = 6.0  # how many standard deviations above P% a candidate's hash may fall

Stratum = tuple[str, int]


@dataclass(frozen=True, slots=True)
class SampleSpec:
    """How many relations to sample: `count` of them, or `percent` % of the population."""

    count: int | None = None
    percent: float | None = None
    seed: int = 0

    def size(self, population: int) -> int:
        """The sample size for a population of this many relations (at least 1, at most all)."""
        if population == 0:
            return 0
        if self.percent is not None:
            wanted = round(population * self.percent / 100.0)
        else:
            wanted = self.count or 0
        return max(1, min(population, wanted))

    def to_json(self) -> dict[str, object]:
        return {"count": self.count, "percent": self.percent, "seed": self.seed}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SampleSpec:
        """The spec `to_json` (or a stored Sample's JSON, which starts with it) wrote."""
        count, percent, seed = data.get("count"), data.get("percent"), data.get("seed")
        return cls(
            count=int(count) if isinstance(count, int | float) else None,
            percent=float(percent) if isinstance(percent, int | float) else None,
            seed=int(seed) if isinstance(seed, int | float) else 0,
        )


def parse_sample(text: str, seed: int = 0) -> SampleSpec:
    """`N` (relations) or `P%` (of the relations) -> SampleSpec; InvalidInputError otherwise."""
    match = _SPEC.match(text)
    if match is None:
        raise InvalidInputError(
            f"--sample takes a number of relations (50) or a percentage (5%), not {text!r}"
        )
    value, percent = match.groups()
    if percent:
        share = float(value)
        if not 0 < share <= 100:
            raise InvalidInputError(f"--sample percentage must be in (0, 100], not {text!r}")
        return SampleSpec(percent=share, seed=seed)
    if "." in value or int(value) < 1:
        raise InvalidInputError(f"--sample count must be a whole number >= 1, not {text!r}")
    return SampleSpec(count=int(value), seed=seed)


def stratum_of(relation: Relation) -> Stratum:
    """(relation type, depth): depth = edges from parent to child along its path."""
    return relation.type, len(relation.path) - 1


def hash_unit(seed: int, relation_id: str) -> float:
    """A seeded uniform number in [0, 1) for a relation id."""
    data = f"{seed}\x1f{relation_id}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") / _UNITS


def allocate(sizes: Counter[Stratum], total: int) -> dict[Stratum, int]:
    """Proportional allocation of `total` over strata by largest remainders (ties: stratum order)."""
    population = sum(sizes.values())
    if population == 0:
        return {}
    exact = {stratum: total * size / population for stratum, size in sizes.items()}
    shares = {stratum: int(value) for stratum, value in exact.items()}
    left = total - sum(shares.values())
    by_remainder = sorted(exact, key=lambda stratum: (shares[stratum] - exact[stratum], stratum))
    for stratum in by_remainder[:left]:
        shares[stratum] += 1
    return shares


def threshold(share: float, seen: int, margin_sd: float = MARGIN_SD) -> float:
    """The hash below which a relation stays a candidate once `seen` of its stratum were read:
    P% plus `margin_sd` binomial standard deviations (and a little more for small strata)."""
    return share + margin_sd * math.sqrt(share * (1 - share) / seen) + margin_sd / seen


@dataclass(frozen=True, slots=True)
class Sample:
    """The sampled relations (generation order) and what they were drawn from."""

    relations: list[Relation]
    population: int
    strata: dict[Stratum, tuple[int, int]]  # stratum -> (sampled, population)
    spec: SampleSpec
    passes: int = 1

    def to_json(self) -> dict[str, object]:
        return {
            **self.spec.to_json(),
            "relations": len(self.relations),
            "population": self.population,
            "strata": [
                {"type": kind, "depth": depth, "sampled": sampled, "population": size}
                for (kind, depth), (sampled, size) in sorted(self.strata.items())
            ],
        }


Candidate = tuple[float, int, Relation]  # (hash unit, generation index, relation)


def _smallest(candidates: Iterable[Candidate], count: int) -> list[Candidate]:
    return heapq.nsmallest(count, candidates, key=lambda item: (item[0], item[1]))


def sample_relations(
    make_relations: Callable[[], Iterable[Relation]],
    spec: SampleSpec,
    margin_sd: float = MARGIN_SD,
) -> Sample:
    """Sample the relations `make_relations()` yields, in one pass (two in the rare case a
    stratum kept too few candidates). `margin_sd` is for tests (0 forces the second pass)."""
    sizes: Counter[Stratum] = Counter()
    kept: dict[Stratum, list[Candidate]] = {}
    share = (spec.percent or 0.0) / 100.0
    for index, relation in enumerate(make_relations()):
        stratum = stratum_of(relation)
        sizes[stratum] += 1
        unit = hash_unit(spec.seed, relation.id)
        heap = kept.setdefault(stratum, [])
        if spec.percent is None:
            # a max-heap (negated keys) of the `count` smallest hashes seen so far
            item = (-unit, -index, relation)
            if len(heap) < (spec.count or 0):
                heapq.heappush(heap, item)
            elif item[:2] > heap[0][:2]:
                heapq.heapreplace(heap, item)
        elif margin_sd and (share >= 1 or unit < threshold(share, sizes[stratum], margin_sd)):
            heap.append((unit, index, relation))
    population = sum(sizes.values())
    shares = allocate(sizes, spec.size(population))
    chosen: list[Candidate] = []
    short: set[Stratum] = set()
    for stratum, want in shares.items():
        if spec.percent is None:
            pool = [(-unit, -index, relation) for unit, index, relation in kept[stratum]]
        else:
            limit = threshold(share, sizes[stratum], margin_sd) if margin_sd else 0.0
            pool = [item for item in kept[stratum] if share >= 1 or item[0] < limit]
        if len(pool) < want:
            short.add(stratum)
        else:
            chosen += _smallest(pool, want)
    passes = 1
    if short:  # a second pass over the strata that kept too few candidates
        passes = 2
        again: dict[Stratum, list[Candidate]] = {stratum: [] for stratum in short}
        for index, relation in enumerate(make_relations()):
            stratum = stratum_of(relation)
            if stratum in again:
                again[stratum].append((hash_unit(spec.seed, relation.id), index, relation))
                if len(again[stratum]) > 2 * shares[stratum] + 64:  # keep memory bounded
                    again[stratum] = _smallest(again[stratum], shares[stratum])
        for stratum in short:
            chosen += _smallest(again[stratum], shares[stratum])
    chosen.sort(key=lambda item: item[1])
    return Sample(
        [relation for _, _, relation in chosen],
        population,
        {stratum: (shares.get(stratum, 0), size) for stratum, size in sorted(sizes.items())},
        spec,
        passes,
    )
