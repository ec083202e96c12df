"""What asking a session again changed (results.delta), as text, Markdown or JSON.

`render_rerun` prints what `kontest rerun` did: the plan (run.rerun: the turns reused and
asked, the model calls) and the delta (the errors gone and new, each measure before and
after); the explorer's Templates tab shows the same lines (`delta_lines`, `rate_rows`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kontest_tui.domain.rerun import RerunPlanJSON
from kontest_tui.kinds.registry import kind_delta
from kontest_tui.report.tables import escape_markdown, markdown_table, text_table
from kontest_tui.report.words import oracle_name
from kontest_tui.results.delta import ChangedErrorJSON, DeltaJSON, RatioJSON

RATE_HEADER = ("measure", "before", "after")


def measure_name(code: str) -> str:
    """A measure of results.delta.rate_changes in words."""
    name, _, which = code.partition(":")
    declared = kind_delta(name)
    if declared is not None:
        return declared.label
    return {
        "errors": f"  {oracle_name(which)}" if which else "KONTEST errors (of tests)",
        "invalid": "invalid (of KONTEST answers)",
        "refusals": "refusals (of KONTEST answers)",
        "gap": f"gap {which} (of relations)",
        "template_invalid": f"{which} invalid answers (of its questions)",
        "template_errors": f"{which} errors (of its questions)",
    }.get(name, code)


def ratio_text(ratio: RatioJSON) -> str:
    """`12 of 149 (8.1%)`."""
    rate = ratio["rate"]
    shown = "" if rate is None else f" ({100 * rate:.1f}%)"
    return f"{ratio['count']} of {ratio['of']}{shown}"


def rate_rows(delta: DeltaJSON) -> list[tuple[str, str, str]]:
    """(measure, before, after) of each measure."""
    return [
        (measure_name(row["measure"]), ratio_text(row["before"]), ratio_text(row["after"]))
        for row in delta["rates"]
    ]


def compact_ratio(ratio: RatioJSON) -> str:
    """`12/149 8.1%`."""
    rate = ratio["rate"]
    return f"{ratio['count']}/{ratio['of']}" + ("" if rate is None else f" {100 * rate:.1f}%")


def compact_rate_lines(delta: DeltaJSON) -> list[str]:
    """Each measure on one line, `measure  before -> after`, aligned: what fits the
    explorer's panes at 80 columns."""
    rows = [
        (measure_name(row["measure"]), compact_ratio(row["before"]), compact_ratio(row["after"]))
        for row in delta["rates"]
    ]
    width = max((len(name) for name, _, _ in rows), default=0)
    before = max((len(first) for _, first, _ in rows), default=0)
    return [
        f"{name.ljust(width)}  {first.rjust(before)} → {second}" for name, first, second in rows
    ]


def plan_line(plan: RerunPlanJSON) -> str:
    """What the new session reused and asked."""
    parts = [
        f"{plan['changed']:,} whose question changed",
        f"{plan['after_changed']:,} after a changed turn",
    ]
    if plan["missing"]:
        parts.append(f"{plan['missing']:,} not answered in {plan['parent']}")
    kinds = ", ".join(f"{kind} {count:,}" for kind, count in plan["asked_by_kind"].items())
    return (
        f"{plan['turns']:,} turns: {plan['reused']:,} answers reused from {plan['parent']}, "
        f"{plan['asked']:,} asked ({'; '.join(parts)}"
        + (f"; by kind: {kinds}" if kinds else "")
        + f"), {plan['requests']:,} distinct requests"
    )


def delta_lines(delta: DeltaJSON) -> list[str]:
    """The delta's head: the answers reused and asked, the model calls, the errors."""
    errors = delta["errors"]
    return [
        f"Session {delta['after']} asked again from {delta['before']}: {delta['reused']:,} "
        f"answers reused, {delta['asked']:,} asked, {delta['calls']:,} model calls",
        f"Errors: {errors['before']:,} before, {errors['after']:,} after: {errors['gone']:,} "
        f"gone, {errors['new']:,} new, {errors['kept']:,} kept",
    ]


def error_line(found: ChangedErrorJSON) -> str:
    """`Luxembourg > Garnich · two phrasings alone (t1): detail`."""
    where = f"{found['parent']} > {found['child']}" if found["parent"] else found["relation"]
    template = f" ({found['template']})" if found["template"] else ""
    return f"{where} · {oracle_name(found['oracle'])}{template}: {found['detail']}"


def _listed(title: str, count: int, rows: Sequence[ChangedErrorJSON]) -> tuple[str, list[str]]:
    shown = "all" if count <= len(rows) else f"first {len(rows)} of {count:,}"
    return f"{title} ({shown})", [error_line(row) for row in rows]


def render_rerun(delta: DeltaJSON, plan: RerunPlanJSON | None = None, fmt: str = "text") -> str:
    """The plan (when given) and the delta in `fmt`: text, markdown or json."""
    if fmt == "json":
        data: dict[str, object] = {"delta": delta}
        if plan is not None:
            data["plan"] = plan
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    head = delta_lines(delta)
    if plan is not None:
        head.insert(1, plan_line(plan))
        if plan["changed_templates"]:
            head.insert(2, f"Templates whose text changed: {', '.join(plan['changed_templates'])}")
    lists = [
        _listed("Errors gone", delta["errors"]["gone"], delta["gone"]),
        _listed("Errors new", delta["errors"]["new"], delta["new"]),
    ]
    if fmt == "markdown":
        parts = ["# Asked again", "", *(f"- {escape_markdown(line)}" for line in head), ""]
        parts.append(markdown_table(RATE_HEADER, rate_rows(delta)))
        for title, lines in lists:
            if lines:
                parts += [f"## {title}", "", *(f"- {escape_markdown(line)}" for line in lines), ""]
        return "\n".join(parts).rstrip("\n") + "\n"
    parts = [*head, "", text_table(RATE_HEADER, rate_rows(delta))]
    for title, lines in lists:
        if lines:
            parts += [f"{title}:", *(f"  {line}" for line in lines), ""]
    return "\n".join(parts).rstrip("\n") + "\n"
