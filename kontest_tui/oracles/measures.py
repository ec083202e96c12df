"""What a test kind adds to a report's summary measures: its headline rate, its accuracy
entry and its consistency measure, each declared by the kind's module (kinds/, `KindInfo`)
and handed to the evaluation as data (`KindMeasures`): the oracles sit below the kinds in
the layers and never look a kind up. `headline_of` picks a report's one rate from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kontest_tui.oracles.report_json import HeadlineJSON

AccuracyJSON = dict[str, float | int | None]  # one kind's Report JSON `accuracy` entry
# A kind's section (its Report JSON key's value) -> its `accuracy` entry
AccuracyOf = Callable[[Mapping[str, Any]], AccuracyJSON]


@dataclass(frozen=True)
class KindHeadline:
    """The headline rate of a session asking this kind: its title, and (count, of) read from
    the Report JSON (its `kinds`, `errors`, `tests`, `accuracy`, `consistency` and the kinds'
    sections). Of the kinds a session asks, the one with the lowest `rank` gives the
    session's headline (the built-in kinds' go first: KONTEST 10, logic rules 20,
    FactChecker 30, variants 40, annotated questions 50; a plugin kind's default after them).
    `errors_of`: the oracles whose errors its count is (the headline over confirmed errors
    counts their confirmed ones, oracles.confirmation); none when its count is not of errors
    (FactChecker's right answers). `bar`: `kontest compare --format html` shows it as a bar
    per model (with the interval of the kind's `headline_rate`, else Wilson's), in rank order.
    """

    title: str
    counts: Callable[[Mapping[str, Any]], tuple[int, int]]
    rank: int = 100
    errors_of: tuple[str, ...] = ()
    bar: bool = False


@dataclass(frozen=True)
class KindMeasures:
    """One kind's measures as the evaluation takes them: `section` its Report JSON key (its
    accuracy and consistency are reported when the report has it), `accuracy` its entry
    made from that section, `consistency` the oracle whose tests and errors are one of the
    report's consistency measures (after KONTEST's); `not_sampled` its oracles whose
    questions a sampled session asks in full (from a file): no interval to estimate."""

    kind: str
    section: str = ""
    headline: KindHeadline | None = None
    accuracy: AccuracyOf | None = None
    consistency: str = ""
    not_sampled: tuple[str, ...] = ()


def ratio(part: int, whole: int) -> float | None:
    """part / whole rounded as the Report JSON keeps rates, None when whole is 0."""
    return round(part / whole, 6) if whole else None


def headline_of(report: Mapping[str, object], measures: Iterable[KindMeasures]) -> HeadlineJSON:
    """`{"measure", "title", "count", "of", "rate"}` of a Report JSON's headline: the one
    rate `kontest sessions`, the report's first line and the explorer show for the session,
    that of the kind it asks with the lowest headline rank (rate None before any test)."""
    kinds = report.get("kinds") or ["kontest"]
    assert isinstance(kinds, list)
    declared = [
        (found.headline.rank, order, found.kind, found.headline)
        for order, found in enumerate(measures)
        if found.headline is not None and found.kind in kinds
    ]
    if not declared:
        return HeadlineJSON(measure="", title="", count=0, of=0, rate=None)
    _, _, measure, headline = min(declared, key=lambda item: item[:2])
    count, of = headline.counts(report)
    return HeadlineJSON(
        measure=measure, title=headline.title, count=count, of=of, rate=ratio(count, of)
    )


def consistency_counts(report: Mapping[str, object], oracle: str) -> tuple[int, int]:
    """(errors, tests) of a consistency measure of a Report JSON (0, 0 when it has none)."""
    consistency = report.get("consistency") or {}
    assert isinstance(consistency, Mapping)
    cell = consistency.get(oracle) or {}
    return int(cell.get("errors", 0)), int(cell.get("tests", 0))


def accuracy_cell(report: Mapping[str, object], kind: str) -> Mapping[str, Any]:
    """A kind's `accuracy` entry of a Report JSON (empty when it has none)."""
    accuracy = report.get("accuracy") or {}
    assert isinstance(accuracy, Mapping)
    cell = accuracy.get(kind) or {}
    assert isinstance(cell, Mapping)
    return cell
