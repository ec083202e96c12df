"""The weighted ensemble's gap under several fold splits, as `kontest ensemble` prints it.

The cross-validated gap depends on which relations fall into which fold: `spread_table`
lays out, per template and for all templates, the gap's range and median over the splits
(`kontest ensemble --splits N`, mitigate.ensemble.SplitSpread) beside the gap of the split
shown above it and the majority vote's (which no split changes).
"""

from __future__ import annotations

from statistics import median

from kontest_tui.mitigate.ensemble_json import CrossValidationJSON
from kontest_tui.report.tables import Table


def spread_table(data: CrossValidationJSON) -> Table | None:
    """(title, header, rows) of the spread over splits; None with one split or none."""
    spread = data.get("spread")
    if spread is None or len(spread["seeds"]) < 2:
        return None
    seeds = spread["seeds"]
    rows: list[tuple[str, ...]] = []
    named = [*spread["weighted"].items(), ("all", spread["all"])]
    for template_id, gaps in named:
        if template_id == "all":
            this, majority = data["all"]["weighted"], data["all"]["majority"]
        else:
            cells = data["per_template"][template_id]
            this, majority = cells["weighted"]["missing"], cells["majority"]["missing"]
        rows.append(
            (
                template_id,
                f"{min(gaps)}-{max(gaps)}",
                f"{median(gaps):g}",
                str(this),
                str(majority),
                " ".join(str(gap) for gap in gaps),
            )
        )
    return (
        f"Weighted ensemble's gap over {len(seeds)} fold splits (seeds {seeds[0]}-{seeds[-1]}): "
        "the cross-validated gap depends on the split",
        ("template", "range", "median", f"seed {data['seed']}", "majority", "per seed"),
        rows,
    )
