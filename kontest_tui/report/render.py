"""Render an evaluation (or its Report JSON) and ensemble results as text, JSON, Markdown or CSV.

- text: the headline and the findings (each counted once: oracles.findings), aligned
  plain-text tables (tests run / planned, errors and rate per oracle; gap; coverage), then
  the first errors (named ones folded by relation: a repeat under its disagreement);
- json: `Evaluation.to_json()` with sorted keys, indent 2 (`failed` = turns with no answer
  after all attempts, counted apart from `valid` and `invalid`);
- markdown: the same tables as GitHub-flavoured Markdown;
- csv: one row per metric, `metric,value`, metric names are the dotted JSON keys
  (`tests.atomic`, `gap.per_template.t1.missing`, ...); `render_verdicts(evaluation, "csv")`
  gives one row per verdict instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Relation, Verdict
from kontest_tui.errors import InvalidInputError
from kontest_tui.kinds.registry import kind_info
from kontest_tui.mitigate.ensemble_json import EnsembleJSON
from kontest_tui.oracles.confirmation import status_word
from kontest_tui.oracles.evaluate import ORACLES, Evaluation
from kontest_tui.oracles.findings import OPPOSITE_ALONE, REPEAT, RelationFold, folds_of
from kontest_tui.oracles.ontological import error_path
from kontest_tui.oracles.report_json import RateJSON, ReportJSON, report_section
from kontest_tui.report.ensemble_spread import spread_table
from kontest_tui.report.evidence import evidence_tables
from kontest_tui.report.kinds import kind_section_tables
from kontest_tui.report.tables import (
    Table,
    csv_table,
    escape_markdown,
    markdown_table,
    text_table,
)
from kontest_tui.report.words import (
    MappedNames,
    Naming,
    describe_fact,
    findings_lines,
    fold_note,
    oracle_name,
    verdict_brief,
    verdict_sentence,
)
from kontest_tui.store.confirmations import error_key
from kontest_tui.store.database import Store
from kontest_tui.store.reports import StoredReport

if TYPE_CHECKING:  # the ensemble (and every oracle it evaluates with) only where it is shown
    from kontest_tui.mitigate.ensemble import CrossValidation, EnsembleResult

FORMATS: tuple[str, ...] = ("text", "json", "markdown", "csv")
MAX_ERRORS = 20  # errors a text or Markdown report lists
# An evaluation, a report read from the store (its first errors only) or a Report JSON.
ReportInput = Evaluation | StoredReport | ReportJSON
# tests = valid tests run; planned = tests the conversations allow; rate = errors / tests.


@dataclass(frozen=True, slots=True)
class ReportNames:
    """How a report names things: the errors' relations by id (those an `Evaluation` holds
    need not be given), the names of their nodes, and the templates' texts by id (the gap
    table shows each template with its text)."""

    relations: Mapping[str, Relation]
    names: Naming
    templates: Mapping[str, str] = field(default_factory=dict)
    # The errors' relations folded (oracles.findings): repeats go under their disagreement.
    folds: Mapping[str, RelationFold] = field(default_factory=dict)
    # What an error's line ends with, by error key (store.confirmations.error_key): its
    # confirmation status and the weak mark ("confirmed, weak").
    marks: Mapping[tuple[str, str], str] = field(default_factory=dict)


# deff: the interval's design effect (oracles.intervals: how much the tests of one fact
# hang together; the interval is that much wider than for independent tests)
ORACLE_HEADER = ("test", "tests", "planned", "errors", "rate", "95% interval", "deff")


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise InvalidInputError(
            f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}"
        )
    return fmt


def render_report(
    evaluation: ReportInput,
    fmt: str = "text",
    *,
    max_errors: int = MAX_ERRORS,
    labels: Mapping[str, str] | None = None,
    names: ReportNames | None = None,
) -> str:
    """The report of one session in `fmt`; text/markdown list up to `max_errors` errors
    when given an `Evaluation` or a `StoredReport` (which holds the first errors it was read
    with; a plain Report JSON mapping has no verdicts), each in words (`describe_error`).
    `names` (the errors' relations and their nodes' names, e.g.
    `report.explain_store.report_names`) or `labels` (node id -> label, e.g. from the KG)
    name the entities in that list instead of ids."""
    check_format(fmt)
    report: ReportJSON
    if isinstance(evaluation, StoredReport):
        report = evaluation.report
        errors, total_errors = evaluation.errors, evaluation.total_errors
    else:
        report = evaluation.to_json() if isinstance(evaluation, Evaluation) else evaluation
        verdicts = evaluation.verdicts if isinstance(evaluation, Evaluation) else []
        errors = [v for v in verdicts if v.error]
        total_errors = len(errors)
    if fmt == "json":
        return json.dumps(report, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return csv_table(("metric", "value"), flatten(report))
    if names is None and labels is not None:
        names = ReportNames({}, MappedNames(labels))
    lines = error_lines(errors[:max_errors], evaluation, names)
    templates = names.templates if names is not None else {}
    if fmt == "markdown":
        return _report_markdown(report, lines, total_errors, templates)
    return _report_text(report, lines, total_errors, templates)


def render_verdicts(verdicts: Evaluation | Iterable[Verdict], fmt: str = "csv") -> str:
    """One row per verdict (csv, markdown, text) or a JSON list."""
    check_format(fmt)
    chosen = verdicts.verdicts if isinstance(verdicts, Evaluation) else list(verdicts)
    header = ("oracle", "relation", "template", "error", "answers", "refs", "detail")
    rows = [
        (
            v.oracle,
            v.relation_id,
            v.template_id or "",
            "yes" if v.error else "no",
            " ".join(str(a) for a in v.answers),
            " ".join(f"{cid}#{turn}" for cid, turn in v.refs),
            v.detail,
        )
        for v in chosen
    ]
    if fmt == "json":
        return json.dumps([dict(zip(header, row, strict=True)) for row in rows], indent=2) + "\n"
    if fmt == "csv":
        return csv_table(header, rows)
    if fmt == "markdown":
        return markdown_table(header, rows)
    return text_table(header, rows)


def render_stored_ensemble(
    store: Store,
    session_ids: Sequence[str],
    k: int = 5,
    seed: int = 0,
    fmt: str = "text",
    splits: int = 8,
) -> str:
    """The weighted ensemble over stored sessions on one KG, cross-validated over relations
    (mitigate.ensemble.cross_validate_sessions: the atomic answers read from the store, no
    evaluation), with its spread over `splits` fold splits, as `kontest ensemble` prints it:
    the explorer's Ensemble tab."""
    from kontest_tui.mitigate.ensemble import cross_validate_sessions

    result = cross_validate_sessions(store, session_ids, k=k, seed=seed, splits=splits)
    return render_ensemble(result, fmt)


def render_ensemble(result: CrossValidation | EnsembleResult, fmt: str = "text") -> str:
    """Table 5 of the paper for one ensemble run: gap per template for the weighted ensemble
    (cross-validated), majority vote and the models' mean, then the totals. A single
    `EnsembleResult` (no cross-validation) renders as one ensemble column vs the models' mean."""
    check_format(fmt)
    if fmt in ("json", "csv"):
        whole = result.to_json()
        if fmt == "json":
            return json.dumps(whole, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        return csv_table(("metric", "value"), flatten(whole))
    from kontest_tui.mitigate.ensemble import EnsembleResult

    if isinstance(result, EnsembleResult):
        return _render_single_ensemble(result.to_json(), fmt)
    data = result.to_json()
    header = ("template", "weighted", "majority", "models (mean)")
    rows = [
        (
            template_id,
            _count_pct(cells["weighted"]),
            _count_pct(cells["majority"]),
            _count_pct(cells["models_mean"]),
        )
        for template_id, cells in data["per_template"].items()
    ]
    totals = data["all"]
    rows.append(
        (
            "all",
            _versus_mean(totals["weighted"], totals["weighted_improvement_pct"]),
            _versus_mean(totals["majority"], totals["majority_improvement_pct"]),
            _number(totals["models_mean"]),
        )
    )
    weights = ", ".join(f"{name} {weight:.3f}" for name, weight in data["weights"].items())
    title = (
        f"Ensemble of {len(data['models'])} models, {data['relations']} relations, "
        f"{data['k']}-fold cross-validation (seed {data['seed']})"
    )
    note = "all: gap summed over templates, and how far below or above the models' mean gap"
    spread = spread_table(data)
    if fmt == "markdown":
        return (
            f"## {title}\n\nWeights (all relations): {weights}\n\n"
            + markdown_table(header, rows)
            + f"\n{note}\n"
            + (f"\n## {spread[0]}\n\n{markdown_table(spread[1], spread[2])}" if spread else "")
        )
    return f"{title}\nWeights (all relations): {weights}\n\n{text_table(header, rows)}{note}\n" + (
        f"\n{spread[0]}\n{text_table(spread[1], spread[2])}" if spread else ""
    )


def _versus_mean(gap: int, improvement_pct: float) -> str:
    """An ensemble's total gap with its distance from the models' mean gap in words (the
    template rows' brackets hold a share of relations instead)."""
    side = "below" if improvement_pct >= 0 else "above"
    return f"{gap} ({abs(improvement_pct):.2f}% {side} mean)"


def _render_single_ensemble(data: EnsembleJSON, fmt: str) -> str:
    method = data["method"]
    header = ("template", method, "models (mean)")
    rows = [
        (template_id, _count_pct(cells["ensemble"]), _count_pct(cells["models_mean"]))
        for template_id, cells in data["per_template"].items()
    ]
    totals = data["all"]
    rows.append(
        (
            "all",
            _versus_mean(totals["ensemble"], totals["improvement_pct"]),
            _number(totals["models_mean"]),
        )
    )
    weights = ", ".join(f"{name} {weight:.3f}" for name, weight in data["weights"].items())
    title = f"{method.capitalize()} ensemble of {len(data['models'])} models, {data['relations']} relations"
    if fmt == "markdown":
        return f"## {title}\n\nWeights: {weights}\n\n" + markdown_table(header, rows)
    return f"{title}\nWeights: {weights}\n\n{text_table(header, rows)}"


def flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Nested mappings as (dotted key, value) rows; lists are JSON-encoded, None is empty."""
    rows: list[tuple[str, str]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows.extend(flatten(value, name + "."))
        elif isinstance(value, list):
            rows.append((name, json.dumps(value, ensure_ascii=False)))
        else:
            rows.append((name, "" if value is None else str(value)))
    return rows


def asks_kontest(report: ReportJSON) -> bool:
    """Does the session ask KONTEST questions (its report then has KONTEST's tables, gap and
    coverage)? A report without `kinds` is KONTEST's alone."""
    return "kontest" in (report.get("kinds") or ["kontest"])


def interval_text(cell: RateJSON | None) -> str:
    """`12.0-19.8%` of a `rates` cell, "not estimated" or "-" (no test)."""
    if not cell or not cell.get("tests"):
        return "-"
    interval = cell.get("interval")
    if interval is None:
        return "not estimated"
    return f"{100 * interval[0]:.1f}-{100 * interval[1]:.1f}%"


def design_effect_text(cell: RateJSON | None) -> str:
    """`1.52`: the design effect of a `rates` cell's interval, "-" when it has none."""
    if not cell or not cell.get("tests") or cell.get("interval") is None:
        return "-"
    return f"{float(cell.get('design_effect', 1.0)):.2f}"


def _report_rows(
    report: ReportJSON, templates: Mapping[str, str] | None = None
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    tests, errors = report["tests"], report["errors"]
    planned = report.get("tests_planned") or {}
    rates = report.get("rates") or {}
    # KONTEST's oracles only: the other kinds are in their own tables (never summed with these).
    names = [name for name in ORACLES if name in tests]

    def row(name: str, run: int, failed: int, possible: int | None) -> tuple[str, ...]:
        shown = "-" if possible is None else str(possible)
        return (
            name if name == "total" else oracle_name(name),
            str(run),
            shown,
            str(failed),
            _rate(failed, run),
            interval_text(rates.get(name)),
            design_effect_text(rates.get(name)),
        )

    oracle_rows = [row(name, tests[name], errors.get(name, 0), planned.get(name)) for name in names]
    if names:
        total_planned = sum(planned.get(name, 0) for name in names) if planned else None
        total_tests = sum(tests[name] for name in names)
        total_errors = sum(errors.get(name, 0) for name in names)
        oracle_rows.append(row("total", total_tests, total_errors, total_planned))
    gap = report["gap"]
    gap_rows: list[tuple[str, ...]] = [
        (_template_name(str(template_id), templates), str(cell["missing"]), f"{cell['pct']:.2f}%")
        for template_id, cell in gap["per_template"].items()
    ]
    gap_rows.append(
        ("intersection", str(gap["intersection"]["missing"]), f"{gap['intersection']['pct']:.2f}%")
    )
    return oracle_rows, gap_rows


def _template_name(template_id: str, templates: Mapping[str, str] | None) -> str:
    """`t1: Does {parent} have a {child}?` (the id alone when its text is not known)."""
    text = (templates or {}).get(template_id)
    return f"{template_id}: {text}" if text else template_id


def headline_text(report: ReportJSON) -> str:
    """`hallucination rate 29.7% (199 of 671), 95% interval 25.3-33.1% (design effect 1.47)`:
    the session's headline rate (Report JSON `headline`), its interval where the report has
    one."""
    headline = report.get("headline") or {}
    rate = headline.get("rate")
    if not headline.get("measure"):
        return "no test yet"
    shown = "-" if rate is None else f"{100 * rate:.1f}%"
    text = f"{headline['title']} {shown} ({headline['count']} of {headline['of']})"
    rates = report.get("rates") or {}
    kind = kind_info(headline["measure"])  # its `rates` cell: the headline's interval
    cell = rates.get(kind.headline_rate) if kind is not None and kind.headline_rate else None
    if cell and cell.get("interval"):
        text += f", 95% interval {interval_text(cell)} (design effect {design_effect_text(cell)})"
    return text


FINDINGS_TITLE = "Findings, each counted once:"
_NESTED = "\t"  # marks a line nested under the one before (`_headline`)


def _headline(report: ReportJSON) -> list[str]:
    """The report's first lines; the findings, nested under their title, start with
    `_NESTED` (text indents them, Markdown makes them a nested list)."""
    lines = [
        f"Session {report.get('session') or '-'}  model {report.get('model') or '-'}",
        f"Headline: {headline_text(report)}",
    ]
    confirmation = report.get("confirmation")
    if confirmation:
        lines.append(confirmation_text(confirmation))
    findings = report.get("findings")
    if findings is not None:
        lines.append(FINDINGS_TITLE)
        relations = report.get("relations")
        lines += [_NESTED + line for line in findings_lines(findings, relations)]
    kontest = asks_kontest(report)
    if kontest:
        coverage = report["coverage"]
        lines += [
            f"Relations {report['relations']}  queries {report['queries']}  executions "
            f"{report['executions']} (valid {report['valid']}, invalid {report['invalid']}, "
            f"of which refusals {report.get('refusals', 0)})  failed {report.get('failed', 0)}",
            f"Coverage {coverage['covered']} of {report['relations']} relations "
            f"({coverage['pct']:.2f}%)",
        ]
    failed = report.get("failed", 0)
    if failed:
        reasons = report.get("failed_reasons") or {}
        why = ", ".join(f"{count} {reason}" for reason, count in reasons.items())
        lines.append(
            f"Failed: {failed} turns got no answer"
            + (f" ({why})" if why else " after all attempts")
            + " and are in no test, gap or coverage"
        )
    stopped = report.get("stopped") or {}
    if stopped.get("length") or stopped.get("timeout"):
        lines.append(
            f"Stopped early: {stopped.get('length', 0)} answers cut by the token limit, "
            f"{stopped.get('timeout', 0)} by the timeout (kept as far as they went)"
        )
    if report.get("answers_from_cache"):
        lines.append(
            f"Answers from cache: {report['answers_from_cache']} (repeats of this session's requests, and earlier sessions' answers with --reuse-cache)"
        )
    pending = report.get("pending_relations")
    if pending and kontest:
        if report.get("cut") or failed:  # their relations have no answer under a template
            lines.append(
                f"Pending: {pending} relations without an answer under every template "
                "(failed or cut turns, or not asked yet)"
            )
        else:
            lines.append(f"Pending: {pending} relations still waiting for answers")
    return lines + answer_notes(report)


def confirmation_text(confirmation: Mapping[str, Any]) -> str:
    """`Confirmed: 6 of 27 errors asked again (mixed 13, not reproduced 8); 169 calls in
    4.2 s, apart from the session's answers; over confirmed errors: KONTEST error rate 3.7%
    (6 of 164)`."""
    statuses = dict(confirmation.get("statuses") or {})
    confirmed = int(statuses.pop("confirmed", 0))
    others = ", ".join(
        f"{status_word(status)} {count}" for status, count in sorted(statuses.items()) if count
    )
    text = (
        f"Confirmed: {confirmed} of {confirmation.get('errors', 0)} errors asked again"
        + (f" ({others})" if others else "")
        + f"; {confirmation.get('calls', 0)} calls in {float(confirmation.get('seconds', 0)):.1f}"
        " s, apart from the session's answers"
    )
    headline = confirmation.get("headline")
    if headline and headline.get("rate") is not None:
        text += (
            f"; over confirmed errors: {headline['title']} {100 * headline['rate']:.1f}% "
            f"({headline['count']} of {headline['of']})"
        )
    return text


def answer_notes(report: ReportJSON) -> list[str]:
    """The lines about how readable and how sure the answers were: answers cut before
    anything readable, the margins (or that the server gave none), weak errors, and replies
    that look like a base model asked in chat mode."""
    lines: list[str] = []
    cut = report.get("cut") or 0
    if cut:
        kinds = report.get("cut_by_kind") or {}
        per = ", ".join(f"{kind} {count}" for kind, count in kinds.items())
        lines.append(
            f"Cut: {cut} answers ended (token limit or timeout) before saying anything readable"
            + (f" ({per})" if per else "")
            + ": graded neither right nor wrong, in no test, gap or coverage, not asked again"
        )
    margins = report_section(report, "margins")
    if margins is not None:
        lines.append(margins_text(margins))
    echoes = report.get("echoes") or 0
    if echoes:
        from kontest_tui.models.specs import completions_kinds

        lines.append(
            f"Note: {echoes} replies continue the prompt (chat-template tokens or the question "
            "itself): this looks like a base model asked in chat mode; ask it with "
            f"{completions_kinds()} instead"
        )
    return lines


def margins_text(margins: Mapping[str, Any]) -> str:
    """`Margins: kontest 120 of 120 yes/no answers (P(yes) 0.37-0.61, 118 low); weak errors
    40 (...)` or the note that the server gave none."""
    if margins.get("note"):
        return f"Margins: {margins['note']}"
    parts = []
    for kind, cell in (margins.get("per_kind") or {}).items():
        span = cell.get("range")
        shown = f"P(yes) {span[0]:.2f}-{span[1]:.2f}, " if span else ""
        parts.append(
            f"{kind} {cell['with_margin']} of {cell['answers']} yes/no answers "
            f"({shown}{cell['low']} low)"
        )
    text = "Margins: " + "; ".join(parts)
    weak = margins.get("weak") or {}
    if "total" in weak:
        low = margins.get("low_margin")
        text += f"; weak errors {weak['total']}" + (
            f" (every answer compared had P(yes) within {low} of 0.5)" if low is not None else ""
        )
    return text


SectionTable = Table
ACCURACY_HEADER = (
    "kind",
    "asked",
    "valid",
    "correct",
    "errors",
    "refusals",
    "invalid",
    "accuracy",
    "error rate",
    "halluc. rate",
)


def accuracy_table(report: ReportJSON) -> SectionTable | None:
    """Accuracy of the kinds with known answers (FactChecker, logic rules, annotations):
    accuracy = correct of asked, error rate = errors of valid answers (the tests)."""
    accuracy = report.get("accuracy")
    if not accuracy:
        return None
    rows = [
        (
            oracle_name(name),
            *(str(cell[key]) for key in ACCURACY_HEADER[1:7]),
            _percent(cell["accuracy"]),
            _percent(cell["error_rate"]),
            _percent(cell.get("hallucination_rate")),
        )
        for name, cell in accuracy.items()
    ]
    title = (
        "Accuracy (answers held to the KG or the annotation; not added to KONTEST's errors): "
        "accuracy = correct of asked, error rate = errors of valid answers, hallucination rate "
        "= errors of all responses (HalluVault, logic rules)"
    )
    return title, ACCURACY_HEADER, rows


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def section_tables(report: ReportJSON) -> list[SectionTable]:
    """(title, header, rows) of the other test kinds' sections present in a report (each
    kind's own, report.kinds): what the text and Markdown reports print and the explorer's
    Kinds tab shows."""
    tables: list[SectionTable] = []
    accuracy = accuracy_table(report)
    if accuracy is not None:
        tables.append(accuracy)
    stability = (report.get("consistency") or {}).get("stability")
    if stability:
        tables.append(
            (
                "Stability (every conversation asked from scratch): the atomic answer vs the "
                "same question as a sequential conversation's first turn",
                ("test", "tests", "errors", "rate", "95% interval", "deff"),
                [
                    (
                        oracle_name("stability"),
                        str(stability["tests"]),
                        str(stability["errors"]),
                        _rate(stability["errors"], stability["tests"]),
                        interval_text((report.get("rates") or {}).get("stability")),
                        design_effect_text((report.get("rates") or {}).get("stability")),
                    )
                ],
            )
        )
    tables += kind_section_tables(report)
    sample = report.get("sample")
    if isinstance(sample, Mapping):
        tables.append(sample_table(sample))
    return tables


def sample_table(sample: Mapping[str, Any]) -> SectionTable:
    """Every rate of a sampled session with its 95% interval and the population it estimates
    (oracles/intervals.py)."""
    population = sample["population"]
    title = (
        f"Sample: {sample['relations']} of {population} relations (stratified by relation type "
        f"and depth, seed {sample['seed']}); each rate estimates the rate over all {population} "
        "relations, with its 95% interval (Wilson)"
    )

    def row(name: str, cell: Mapping[str, Any], population_of: str) -> tuple[str, ...]:
        interval = f"{100 * cell['low']:.1f}% - {100 * cell['high']:.1f}%"
        if not cell.get("estimated", True):
            interval = "not estimated"
            population_of = "none: biased low on a sample (paths lack unsampled relations)"
        return (
            name,
            str(cell["tests"]),
            str(cell["errors"]),
            f"{100 * cell['rate']:.1f}%",
            interval,
            population_of,
        )

    rows = [
        row(
            "total without ontological" if name == "total" else f"{name} errors",
            cell,
            f"{name} tests of all {population} relations",
        )
        for name, cell in sample["rates"].items()
    ]
    rows += [
        row(f"gap {name}", cell, f"all {population} relations")
        for name, cell in sample["gap"].items()
    ]
    header = ("rate", "tests", "errors", "sample", "95% interval", "estimates")
    return title, header, rows


def _title(report: ReportJSON) -> str:
    return "KONTEST report" if asks_kontest(report) else "Report"


def _report_text(
    report: ReportJSON,
    errors: Sequence[str],
    total_errors: int,
    templates: Mapping[str, str],
) -> str:
    oracle_rows, gap_rows = _report_rows(report, templates)
    head = [line.replace(_NESTED, "  ", 1) for line in _headline(report)]
    parts = ["\n".join([_title(report), *head]), ""]
    if asks_kontest(report):
        parts.append(text_table(ORACLE_HEADER, oracle_rows))
        if report["relations"]:
            parts.append(text_table(("knowledge gap", "missing", "% of relations"), gap_rows))
    for title, header, rows in [*section_tables(report), *evidence_tables(report, templates)]:
        parts.append(title)
        if rows:
            parts.append(text_table(header, rows))
        else:
            parts.append("")
    if errors:
        shown = f"first {len(errors)} of {total_errors}" if total_errors > len(errors) else "all"
        parts.append(f"Errors ({shown}):")
        parts.extend(f"  {line.replace(_NESTED, '  ', 1)}" for line in errors)
        parts.append("")
    return "\n".join(parts).rstrip("\n") + "\n"


def _report_markdown(
    report: ReportJSON,
    errors: Sequence[str],
    total_errors: int,
    templates: Mapping[str, str],
) -> str:
    oracle_rows, gap_rows = _report_rows(report, templates)
    head = [
        f"  - {line[1:]}" if line.startswith(_NESTED) else f"- {line}" for line in _headline(report)
    ]
    parts = [f"# {_title(report)}", "", *head, ""]
    if asks_kontest(report):
        parts.append("## KONTEST tests and errors\n")
        parts.append(markdown_table(ORACLE_HEADER, oracle_rows))
        if report["relations"]:
            parts.append("## Knowledge gap\n")
            parts.append(markdown_table(("template", "missing", "% of relations"), gap_rows))
    for title, header, rows in [*section_tables(report), *evidence_tables(report, templates)]:
        parts.append(f"## {escape_markdown(title)}\n")
        if rows:
            parts.append(markdown_table(header, rows))
    if errors:
        shown = f"first {len(errors)} of {total_errors}" if total_errors > len(errors) else "all"
        parts.append(f"## Errors ({shown})\n")
        parts.extend(
            f"  - {escape_markdown(line[1:])}"
            if line.startswith(_NESTED)
            else f"- {escape_markdown(line)}"
            for line in errors
        )
        parts.append("")
    return "\n".join(parts).rstrip("\n") + "\n"


def describe_error(
    verdict: Verdict, relation: Relation | None = None, names: Naming | None = None
) -> str:
    """One error as a line for a reader: its relation by labels, the test by name and what the
    model said in words (report.words), e.g. `Ulster > Kinawley · two phrasings alone: asked
    the same thing in two phrasings, each alone, the model said yes to one and no to the
    other`. Without names, the relation and nodes are named by their ids."""
    path = error_path(verdict)
    if names is not None and relation is not None:
        where = f"{names.name(relation.parent)} > {names.name(relation.child)}"
        fact: str | None = describe_fact(relation, names)
    else:
        where, fact = clean_text(verdict.relation_id), None
    path_names = [names.name(node) for node in path] if names is not None else path
    sentence = verdict_sentence(verdict, fact=fact, path_names=path_names)
    return f"{where} · {oracle_name(verdict.oracle)}: {sentence}"


def error_lines(
    errors: Sequence[Verdict], evaluation: ReportInput, names: ReportNames | None
) -> list[str]:
    """The errors listed, one line each, folded by relation (oracles.findings) when they are
    named (`names`): an error that repeats its relation's disagreement alone goes under it (a
    line starting with `_NESTED`), a flip after the model's own reply says so. The folds
    come from `names` (read from the store) or from the evaluation's verdicts. Unnamed, the
    errors are listed as they are (a stored report and its evaluation print alike)."""
    folds: Mapping[str, RelationFold] = {}
    if names is not None:
        folds = names.folds
        if not folds and isinstance(evaluation, Evaluation):
            folds = folds_of(evaluation.verdicts, {verdict.relation_id for verdict in errors})
    shown: list[tuple[str, str | None]] = []  # (line, the relation whose repeats follow)
    repeats: dict[str, list[str]] = {}  # relation id -> its repeats, under its disagreement
    for verdict in errors:
        fold = folds.get(verdict.relation_id)
        place = fold.place(verdict) if fold is not None else None
        mark = names.marks.get(error_key(verdict)) if names is not None else None
        marked = f" [{mark}]" if mark else ""
        if place == REPEAT and verdict.relation_id in repeats:
            repeats[verdict.relation_id].append(
                f"{_NESTED}repeated: {oracle_name(verdict.oracle)}: {verdict_brief(verdict)}"
                + marked
            )
            continue
        line = _describe(verdict, evaluation, names) + marked
        note = fold_note(place, fold)
        opens = place == OPPOSITE_ALONE and verdict.relation_id not in repeats
        if opens:
            repeats[verdict.relation_id] = []
        shown.append((f"{line}; {note}" if note else line, verdict.relation_id if opens else None))
    lines: list[str] = []
    for line, relation_id in shown:
        lines.append(line)
        if relation_id is not None:
            lines += repeats[relation_id]
    return lines


def _describe(verdict: Verdict, evaluation: ReportInput, names: ReportNames | None) -> str:
    relation = None
    if names is not None:
        relation = names.relations.get(verdict.relation_id)
    if relation is None and isinstance(evaluation, Evaluation):
        relation = evaluation.relation(verdict.relation_id)
    return describe_error(verdict, relation, names.names if names is not None else None)


def _rate(errors: int, tests: int) -> str:
    return f"{100.0 * errors / tests:.1f}%" if tests else "-"


def _count_pct(cell: Mapping[str, Any]) -> str:
    return f"{_number(cell['missing'])} ({cell['pct']:.2f}%)"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"
