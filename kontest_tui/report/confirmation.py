"""Errors asked again, as `kontest confirm` prints them: one line per error (its status, the
tries that held of those counted, the test and the relation by name) and a summary line, as
text, Markdown or JSON (oracles.confirmation gives the rules, store.confirmations the
records)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from kontest_tui.oracles.confirmation import STATUSES as STATUSES
from kontest_tui.oracles.confirmation import status_word as status_word
from kontest_tui.report.render import ReportNames
from kontest_tui.report.tables import markdown_table, text_table
from kontest_tui.report.words import oracle_name
from kontest_tui.store.confirmations import Confirmation

CONFIRM_FORMATS = ("text", "markdown", "json")
HEADER = ("relation", "test", "status", "held")


def summary_line(
    confirmations: Sequence[Confirmation], calls: int, seconds: float, draws: int
) -> str:
    """`Confirmed 6 of 27 errors (mixed 13, not reproduced 8): 169 calls in 9.6 s, 2 new
    samples per error`."""
    counts: dict[str, int] = {}
    for confirmation in confirmations:
        counts[confirmation.status] = counts.get(confirmation.status, 0) + 1
    confirmed = counts.pop("confirmed", 0)
    others = ", ".join(f"{status_word(status)} {count}" for status, count in sorted(counts.items()))
    samples = (
        f"{draws} new sample{'s' if draws != 1 else ''} per error"
        if draws
        else "no new sample (temperature 0)"
    )
    return (
        f"Confirmed {confirmed} of {len(confirmations)} error{'s' if len(confirmations) != 1 else ''}"
        + (f" ({others})" if others else "")
        + f": {calls} calls in {seconds:.1f} s, {samples}"
    )


def _relation(confirmation: Confirmation, names: ReportNames | None) -> str:
    relation = names.relations.get(confirmation.relation) if names is not None else None
    if relation is None or names is None:
        return confirmation.relation
    return f"{names.names.name(relation.parent)} > {names.names.name(relation.child)}"


def _rows(
    confirmations: Sequence[Confirmation], names: ReportNames | None
) -> list[tuple[str, ...]]:
    return [
        (
            _relation(confirmation, names),
            oracle_name(confirmation.oracle),
            status_word(confirmation.status),
            f"{confirmation.held}/{confirmation.counted}",
        )
        for confirmation in confirmations
    ]


def render_confirmations(
    confirmations: Sequence[Confirmation],
    *,
    calls: int,
    seconds: float,
    draws: int,
    names: ReportNames | None = None,
    fmt: str = "text",
) -> str:
    """The errors asked again in `fmt` (text, markdown, json)."""
    if fmt == "json":
        data: list[Mapping[str, object]] = [
            {
                "oracle": confirmation.oracle,
                "relation": confirmation.relation,
                "refs": [list(ref) for ref in confirmation.refs],
                "status": confirmation.status,
                "trials": confirmation.trials,
                "counted": confirmation.counted,
                "held": confirmation.held,
                "calls": confirmation.calls,
            }
            for confirmation in confirmations
        ]
        document = {"errors": data, "calls": calls, "seconds": round(seconds, 3), "draws": draws}
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    line = summary_line(confirmations, calls, seconds, draws)
    rows = _rows(confirmations, names)
    if fmt == "markdown":
        return f"{line}\n\n{markdown_table(HEADER, rows)}"
    return f"{line}\n\n{text_table(HEADER, rows)}"
