"""The comparison as one standalone HTML page (`kontest compare --format html`): no script,
no external file. Bars per model (its headline rates with their 95% intervals), the overlap
diagram (per error type, one bar stacked by the subset of models finding each error), then
every table of report.compare_many.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from kontest_tui.kinds.registry import all_kinds
from kontest_tui.oracles.intervals import wilson_interval
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.compare_cells import session_label
from kontest_tui.report.compare_json import CompareJSON
from kontest_tui.report.compare_many import LEFT_OUT, left_out_lines
from kontest_tui.report.tables import Table
from kontest_tui.report.words import oracle_name

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f0f0f0; }
.bar { display: inline-block; height: 0.9em; background: #4a7bd0; vertical-align: middle; }
.ci { display: inline-block; height: 0.3em; background: #999; vertical-align: middle; }
h2 { font-size: 1.1em; margin-top: 1.5em; }
"""


Measure = tuple[str, int, int, Sequence[float] | None, float | None]


def _measures(report: ReportJSON) -> list[Measure]:
    """(name, count, of, the report's interval or None, its design effect or None) of the
    rates a model's bars show: KONTEST's error rate, then the headline of each kind whose
    section the report has and which declares a bar (`KindHeadline.bar`: the logic rules'
    hallucination rate, FactChecker's accuracy, Wilson's interval where the report gives
    none)."""
    rates = report.get("rates") or {}
    measures: list[Measure] = []
    total = rates.get("total")
    if total and total.get("tests"):
        measures.append(
            (
                "KONTEST error rate",
                total["errors"],
                total["tests"],
                total.get("interval"),
                total.get("design_effect"),
            )
        )
    barred = [
        (info.headline.rank, info)
        for info in all_kinds().values()
        if info.headline is not None and info.headline.bar and info.section_keys
    ]
    for _, info in sorted(barred, key=lambda item: item[0]):
        assert info.headline is not None
        if not report.get(info.section_keys[0]):
            continue
        cell = rates.get(info.headline_rate) if info.headline_rate else None
        interval = cell["interval"] if cell else None
        deff = cell.get("design_effect") if cell else None
        measures.append((info.headline.title, *info.headline.counts(report), interval, deff))
    return measures


def _bars(data: CompareJSON) -> str:
    """Bars per model: its rates (see _measures) with their 95% intervals."""
    rows = []
    for report in data["sessions"]:
        for name, count, of, given, deff in _measures(report):
            if not of:
                continue
            low, high = given if given is not None else wilson_interval(count, of)
            effect = f" deff {deff:.2f}" if given is not None and deff is not None else ""
            width = 300 * count / of
            rows.append(
                f"<tr><td>{html.escape(session_label(report))}</td><td>{html.escape(name)}</td>"
                f"<td><span class='bar' style='width:{width:.0f}px'></span> "
                f"{100 * count / of:.1f}% <span class='ci' style='width:"
                f"{300 * (high - low):.0f}px'></span> "
                f"[{100 * low:.1f}-{100 * high:.1f}]{effect}</td></tr>"
            )
    if not rows:
        return ""
    return (
        "<h2>Rates per model (bar = rate, grey = 95% interval width, deff = its design "
        "effect)</h2><table>"
        "<tr><th>model</th><th>measure</th><th>rate</th></tr>" + "".join(rows) + "</table>"
    )


def _overlap_svg(data: CompareJSON) -> str:
    """The overlap diagram: per error type, one stacked bar of the subsets finding the errors."""
    overlap = data.get("overlap") or {}
    if not overlap:
        return ""
    palette = ["#4a7bd0", "#d0704a", "#5aa05a", "#a05aa0", "#c0a030", "#30a0c0", "#888888"]
    parts = ["<h2>Which models find each error (KONTEST Fig. 4): stacked by subset</h2>"]
    for oracle, cell in overlap.items():
        total = max(cell["errors"], 1)
        x, rects, legend = 0.0, [], []
        for i, (subset, count) in enumerate(cell["by_subset"].items()):
            width = 600 * count / total
            colour = palette[i % len(palette)]
            rects.append(
                f"<rect x='{x:.1f}' y='0' width='{width:.1f}' height='18' fill='{colour}'>"
                f"<title>{html.escape(subset)}: {count}</title></rect>"
            )
            legend.append(
                f"<span style='color:{colour}'>&#9632;</span> {html.escape(subset)} {count}"
            )
            x += width
        parts.append(
            f"<p><b>{html.escape(oracle_name(oracle))}</b> ({cell['errors']} errors, found by all: {cell['all']})"
            f"<br><svg width='600' height='18' xmlns='http://www.w3.org/2000/svg'>{''.join(rects)}"
            f"</svg><br>{' &nbsp; '.join(legend)}</p>"
        )
    return "".join(parts)


def comparison_page(title: str, data: CompareJSON, tables: Sequence[Table]) -> str:
    """The comparison as one standalone HTML page: bars, the overlap diagram, the tables."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    left_out = left_out_lines(data)
    if left_out:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in left_out)
        body.append(f"<p>{html.escape(LEFT_OUT)}</p><ul>{items}</ul>")
    body += [_bars(data), _overlap_svg(data)]
    for name, header, rows in tables:
        body.append(
            f"<h2>{html.escape(name)}</h2><table><tr>"
            + "".join(f"<th>{html.escape(h)}</th>" for h in header)
            + "</tr>"
        )
        body += [
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
        ]
        body.append("</table>")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )
