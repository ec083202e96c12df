"""The cells of the comparison tables: a count, its rate and its 95% interval.

`count_cell` writes `12/250 4.8% [3.0-7.5]` with Wilson's interval, or `12/250 4.8% [2.6-8.9]
deff 1.84` with the interval given and its design effect (a report's clustered one,
oracles.intervals); `report_rate_cell` writes a rate the session's report has with the
report's interval (one interval per rate: the report's and the comparison's are the same);
`rate_json` is the same as JSON (`{count, of, rate, ci95}`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kontest_tui.oracles.intervals import wilson_interval
from kontest_tui.oracles.report_json import RateJSON, ReportJSON
from kontest_tui.report.compare_json import RateCellJSON

NOT_ESTIMATED = "not estimated"


def rate_json(successes: int, trials: int) -> RateCellJSON:
    """{"count", "of", "rate", "ci95": [low, high]} with 6-decimal fractions (Wilson)."""
    if trials <= 0:
        return RateCellJSON(count=successes, of=trials, rate=None, ci95=None)
    low, high = wilson_interval(successes, trials)
    return RateCellJSON(
        count=successes,
        of=trials,
        rate=round(successes / trials, 6),
        ci95=[round(low, 6), round(high, 6)],
    )


def count_cell(
    count: int,
    of: int,
    interval: Sequence[float] | None = None,
    design_effect: float | None = None,
) -> str:
    """`12/250 4.8% [3.0-7.5]`: the count, the rate and its 95% interval (the one given,
    else Wilson's), then the given interval's design effect (`deff 1.84`)."""
    if of <= 0:
        return f"{count}/{of} -"
    low, high = interval if interval is not None else wilson_interval(count, of)
    text = f"{count}/{of} {100 * count / of:.1f}% [{100 * low:.1f}-{100 * high:.1f}]"
    return text if design_effect is None else f"{text} deff {design_effect:.2f}"


def report_rate(report: ReportJSON, name: str) -> RateJSON | None:
    """The report's rate `name` (its `rates` cell) when it has tests, else None."""
    cell = (report.get("rates") or {}).get(name)
    return cell if cell and cell.get("tests") else None


def report_rate_cell(report: ReportJSON, name: str, count: int, of: int) -> str:
    """A rate of the report: its count, rate, clustered interval and design effect (the
    report's `rates` cell); "not estimated" when the report says so (a sampled session's
    ontological rate); Wilson's on `count` of `of` when the report has no such rate."""
    cell = report_rate(report, name)
    if cell is None:
        return count_cell(count, of)
    if cell.get("interval") is None:
        return NOT_ESTIMATED
    return count_cell(
        int(cell["errors"]),
        int(cell["tests"]),
        cell.get("interval"),
        float(cell.get("design_effect", 1.0)),
    )


def report_rate_json(report: ReportJSON, name: str, count: int, of: int) -> RateCellJSON:
    """`rate_json` of a rate, with the report's clustered interval and design effect when
    the report has it (and it is estimated), else Wilson's."""
    cell = report_rate(report, name)
    if cell is None or cell.get("interval") is None or int(cell["tests"]) != of:
        return rate_json(count, of)
    interval = cell["interval"]
    assert interval is not None
    return RateCellJSON(
        count=count,
        of=of,
        rate=round(count / of, 6) if of else None,
        ci95=[round(interval[0], 6), round(interval[1], 6)],
        design_effect=round(float(cell.get("design_effect", 1.0)), 4),
    )


def session_label(report: ReportJSON) -> str:
    """`sim:forgetful (20261123-234412-bf2138)`: a session's model and id, naming a column."""
    return f"{report.get('model') or '-'} ({report.get('session') or '-'})"
