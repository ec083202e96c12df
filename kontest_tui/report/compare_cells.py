"""The cells of the comparison tables: a count, its rate and its 95% interval.

`count_cell` writes `12/250 4.8% [3.0-7.5]` with the interval given (a report's clustered
one, oracles.intervals) or Wilson's; `rate_json` is the same as JSON (`{count, of, rate,
ci95}`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kontest_tui.oracles.intervals import wilson_interval
from kontest_tui.oracles.report_json import ReportJSON
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


def count_cell(count: int, of: int, interval: Sequence[float] | None = None) -> str:
    """`12/250 4.8% [3.0-7.5]`: the count, the rate and its 95% interval (the one given,
    else Wilson's)."""
    if of <= 0:
        return f"{count}/{of} -"
    low, high = interval if interval is not None else wilson_interval(count, of)
    return f"{count}/{of} {100 * count / of:.1f}% [{100 * low:.1f}-{100 * high:.1f}]"


def session_label(report: ReportJSON) -> str:
    """`sim:forgetful (20261123-234412-bf2138)`: a session's model and id, naming a column."""
    return f"{report.get('model') or '-'} ({report.get('session') or '-'})"
