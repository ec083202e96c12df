"""Two sessions on one KG side by side: their reports and the relations they answer differently.

`find_comparable_sessions` lists the stored sessions worth comparing with the current one
(same KG, shared relations, answers stored) and says why the others are left out;
`compare_sessions` pairs two sessions' reports (Report JSON) with each shared relation whose
atomic answers differ under a template both asked.

Many sessions (one model each, one KG), as the papers' tables (`kontest compare`):
`build_comparison(entries)` takes, per session, its Report JSON (exactly what `kontest
report --format json` prints), its verdicts, its timing and its variant answers, and gives
the compare JSON `{"sessions": [REPORT, ...], "overlap": {...}, "timing": [...],
"variant_table": {...}}`:

- `overlap`, per error type (oracle): how many distinct errors are found by exactly which
  subset of the sessions (KONTEST Fig. 4: unique to one model, found by all). An error is
  identified by (oracle, relation, template, the answers it compares), the same across
  sessions on one KG and scope;
- `timing`, per session: model calls, wall time, tokens (where the server reports them) and
  time per call (KONTEST Table 14);
- `variant_table`: the thesis's Table 4 across models (`variant_table()`).

`render_comparison(data, fmt)` lays it out as text, Markdown, CSV (one block per table) or a
standalone HTML page (tables and bar charts, no external file), each rate with its 95% Wilson
score interval: KONTEST tests/errors per oracle (Tables 3/10), gap and coverage (Table 5),
FactChecker accuracy per question type (Tables 5/6), logic hallucination rate per rule with
the knowledge/inference split (HalluVault Fig. 11) and the variant x model matrix (thesis
Table 4: failure rate per covering-array row per model, and each variant's answers;
`variant_table` in the JSON).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Protocol

from kontest_tui.domain.records import Answer, Relation, Verdict
from kontest_tui.errors import InvalidInputError
from kontest_tui.oracles.evaluate import ORACLES, Evaluation
from kontest_tui.store.database import Store


class AnsweredSession(Protocol):
    """What a comparison reads of a session (run.api.StoredSession has it)."""

    @property
    def relations(self) -> Sequence[Relation]: ...

    @property
    def evaluation(self) -> Evaluation: ...


@dataclass(frozen=True)
class AnswerDifference:
    """A shared relation the two sessions' models answer differently (atomic questions):
    (this answer, other answer) per template both asked."""

    relation: Relation
    answers: dict[str, tuple[Answer | None, Answer | None]]

    @property
    def differing_templates(self) -> list[str]:
        """Templates whose answers differ (both answered)."""
        return [
            tid
            for tid, (mine, theirs) in self.answers.items()
            if mine is not None and theirs is not None and mine != theirs
        ]


@dataclass
class SessionComparison:
    """Two sessions on one KG: their reports (the engine's Report JSON) and the shared
    relations whose atomic answers differ."""

    left: dict[str, Any]
    right: dict[str, Any]
    shared: int  # relations both sessions asked
    templates: list[str]  # templates both asked
    differences: list[AnswerDifference]

    def differing(self, template_id: str) -> int:
        """Shared relations whose `template_id` answers differ."""
        return sum(template_id in diff.differing_templates for diff in self.differences)


def compare_sessions(left: AnsweredSession, right: AnsweredSession) -> SessionComparison:
    """Both reports, and each shared relation where the two models' atomic answers (from
    each Evaluation's `atomic_answers`) differ under a template both asked, both answered."""
    mine = left.evaluation.atomic_answers()
    theirs = right.evaluation.atomic_answers()
    right_ids = {relation.id for relation in right.relations}
    shared = [relation for relation in left.relations if relation.id in right_ids]
    templates = [tid for tid in left.evaluation.templates if tid in right.evaluation.templates]
    differences = []
    for relation in shared:
        pairs = {
            tid: (mine.get((relation.id, tid)), theirs.get((relation.id, tid))) for tid in templates
        }
        difference = AnswerDifference(relation, pairs)
        if difference.differing_templates:
            differences.append(difference)
    return SessionComparison(
        left=dict(left.evaluation.to_json()),
        right=dict(right.evaluation.to_json()),
        shared=len(shared),
        templates=templates,
        differences=differences,
    )


@dataclass(frozen=True)
class StoredSessionChoice:
    """A stored session offered for comparison (or an ensemble) with the current one."""

    id: str
    model: str
    date: str
    status: str
    relations: int  # relations the stored session asked
    shared: int  # of them, relations the current session has too

    def describe(self, total: int) -> str:
        """`sim:forgetful · 2026-11-23 11:11 · ID` (with the overlap when partial)."""
        text = f"{self.model} · {self.date} · {self.id}"
        if not self.shared == self.relations == total:
            text += f" · {self.shared}/{total} relations shared"
        return text


@dataclass
class ComparableSessions:
    """The stored sessions offered, and one line per reason others are not."""

    offered: list[StoredSessionChoice]
    left_out: list[str]


def find_comparable_sessions(
    store: Store,
    kg_names: Sequence[str],
    relation_ids: Collection[str],
    exclude: str | None = None,
) -> ComparableSessions:
    """Stored sessions on the same KG (a name in `kg_names`) sharing relations with the
    current session, newest first; sessions on other KGs, without a shared relation or
    without answers are left out, with the reason."""
    offered: list[StoredSessionChoice] = []
    other_kgs: dict[str, int] = {}
    disjoint = unanswered = 0
    for row in reversed(list(store.iter_sessions())):
        session_id = str(row["id"])
        if session_id == exclude:
            continue
        kg_name = str(row.get("kg_name") or "")
        if kg_name not in kg_names:
            other_kgs[kg_name] = other_kgs.get(kg_name, 0) + 1
            continue
        if not row.get("answered"):
            unanswered += 1
            continue
        ids = [str(relation["id"]) for relation in store.iter_relations(session_id)]
        shared = sum(relation_id in relation_ids for relation_id in ids)
        if not shared:
            disjoint += 1
            continue
        date = str(row.get("created") or row.get("updated") or "")[:16].replace("T", " ")
        offered.append(
            StoredSessionChoice(
                session_id,
                str(row.get("model") or ""),
                date,
                str(row.get("status") or ""),
                len(ids),
                shared,
            )
        )
    name = kg_names[0] if kg_names else "this KG"
    left_out: list[str] = []
    if other_kgs:
        names = ", ".join(sorted(other_kgs))
        count = sum(other_kgs.values())
        left_out.append(
            f"{count} session{'s' if count != 1 else ''} on other KGs ({names}): "
            "their answers are about other relations"
        )
    if disjoint:
        left_out.append(
            f"{disjoint} on {name} with no relation in common (another depth or per-path setting)"
        )
    if unanswered:
        left_out.append(f"{unanswered} on {name} without answers yet")
    return ComparableSessions(offered, left_out)


# ---------------------------------------------------------------------------- many sessions

COMPARE_FORMATS: tuple[str, ...] = ("text", "markdown", "csv", "json", "html")
Z95 = 1.959964  # the normal quantile of a two-sided 95% interval
MAX_VARIANT_ROWS = 60  # rows of the variant x model matrix shown in text/markdown/html
Table = tuple[str, tuple[str, ...], list[tuple[str, ...]]]


@dataclass
class CompareEntry:
    """One session's inputs: its report, verdicts, timing and variant answers."""

    session: str
    report: dict[str, Any]
    verdicts: Sequence[Verdict] = ()
    timing: dict[str, Any] = field(default_factory=dict)
    # conversation id -> (question text, parsed answer), for variant/annotated questions
    variant_answers: dict[str, tuple[str, str]] = field(default_factory=dict)
    # conversation id -> covering-array row (0 = the original question)
    variant_rows: dict[str, int] = field(default_factory=dict)
    # conversation id -> the annotation's class ("yes"/"no"), for annotated questions
    variant_expected: dict[str, str] = field(default_factory=dict)


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (None without trials), as fractions."""
    if trials <= 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_json(successes: int, trials: int) -> dict[str, Any]:
    """{"count", "of", "rate", "ci95": [low, high]} with 6-decimal fractions."""
    interval = wilson(successes, trials)
    return {
        "count": successes,
        "of": trials,
        "rate": round(successes / trials, 6) if trials else None,
        "ci95": [round(interval[0], 6), round(interval[1], 6)] if interval else None,
    }


def error_key(verdict: Verdict) -> tuple[str, str, str, tuple[tuple[str, int], ...]]:
    """What identifies an error across sessions on one KG: oracle, relation, template, refs."""
    return (
        verdict.oracle,
        verdict.relation_id,
        verdict.template_id or "",
        tuple((str(cid), int(turn)) for cid, turn in verdict.refs),
    )


def compute_overlap(entries: Sequence[CompareEntry]) -> dict[str, Any]:
    """Per oracle: distinct errors, how many each exact subset of sessions finds
    (`by_subset`, subsets named by their session ids joined with "+"), the errors unique to
    each session and those found by all."""
    names = [entry.session for entry in entries]
    found: dict[str, dict[tuple[Any, ...], set[str]]] = {}
    for entry in entries:
        for verdict in entry.verdicts:
            if verdict.error:
                by_key = found.setdefault(verdict.oracle, {})
                by_key.setdefault(error_key(verdict), set()).add(entry.session)
    overlap: dict[str, Any] = {}
    for oracle in sorted(found, key=lambda name: (name not in ORACLES, name)):
        subsets: dict[str, int] = {}
        for sessions in found[oracle].values():
            label = "+".join(name for name in names if name in sessions)
            subsets[label] = subsets.get(label, 0) + 1
        ordered = {
            "+".join(combo): subsets["+".join(combo)]
            for size in range(1, len(names) + 1)
            for combo in combinations(names, size)
            if "+".join(combo) in subsets
        }
        overlap[oracle] = {
            "errors": len(found[oracle]),
            "by_subset": ordered,
            "unique": {name: subsets.get(name, 0) for name in names},
            "all": subsets.get("+".join(names), 0),
        }
    return overlap


def check_comparable(entries: Sequence[CompareEntry], identities: Sequence[Any]) -> None:
    """Sessions must share one KG and scope (same `identities`); InvalidInputError otherwise."""
    if len(entries) < 1:
        raise InvalidInputError("no finished session to compare")
    first = identities[0]
    for entry, identity in zip(entries[1:], identities[1:], strict=True):
        if identity != first:
            raise InvalidInputError(
                f"session {entry.session} is on another KG or scope than {entries[0].session} "
                "(compare sessions of one KG, entity and depth)"
            )


def build_comparison(entries: Sequence[CompareEntry]) -> dict[str, Any]:
    """The compare JSON (see the module docstring)."""
    return {
        "sessions": [entry.report for entry in entries],
        "overlap": compute_overlap(entries),
        "timing": [{"session": entry.session, **entry.timing} for entry in entries],
        "variant_table": variant_table(entries),
    }


VARIANT_ORACLES: tuple[str, ...] = ("annotation", "variant")


def row_label(row: int) -> str:
    """The thesis's name of a covering-array row: q1 is the original question (row 0)."""
    return f"q{row + 1}"


def variant_table(entries: Sequence[CompareEntry]) -> dict[str, Any]:
    """Thesis Table 4 across models (seed 004, Sec. 1.3.4, Tabelle 4): covering-array rows
    (q1 = the original question, q2... its variants) against models.

    `oracles[oracle]["rows"]`: per row index, each session's failed tests / tests with the 95%
    Wilson interval, summed over every varied question; `total` per session. Oracle
    "annotation" is the thesis's own: a row fails when its answer's class (true, false,
    undefined) is not the annotation, so an undefined answer fails. Oracle "variant" holds a
    valid answer against its question's reference answer (the original's when valid), for KG
    questions that have no annotation. The counts are the sessions' verdicts, so each total
    equals that oracle's tests and errors in the session's report.
    `questions`: the Table itself, one line per variant asked in every session (first
    session's order): its row, text, expected class when annotated, each session's answer
    and whether it failed under each oracle (null: not tested)."""
    names = [entry.session for entry in entries]
    counts: dict[str, dict[int, dict[str, list[int]]]] = {}
    failed: dict[tuple[str, str, str], bool] = {}  # (session, oracle, conversation) -> error
    for entry in entries:
        for verdict in entry.verdicts:
            if verdict.oracle not in VARIANT_ORACLES or not verdict.refs:
                continue
            cid = str(verdict.refs[-1][0])  # annotation: the variant; variant: (reference, it)
            row = entry.variant_rows.get(cid)
            if row is None:
                continue
            cell = counts.setdefault(verdict.oracle, {}).setdefault(row, {})
            tally = cell.setdefault(entry.session, [0, 0])
            tally[0] += int(verdict.error)
            tally[1] += 1
            failed[(entry.session, verdict.oracle, cid)] = verdict.error
    oracles: dict[str, Any] = {}
    for oracle in VARIANT_ORACLES:
        if oracle not in counts:
            continue
        rows = []
        for row in sorted(counts[oracle]):
            cell = counts[oracle][row]
            rows.append(
                {
                    "row": row,
                    "label": row_label(row),
                    "sessions": {name: rate_json(*cell.get(name, [0, 0])) for name in names},
                }
            )
        total = {
            name: rate_json(
                sum(c.get(name, [0, 0])[0] for c in counts[oracle].values()),
                sum(c.get(name, [0, 0])[1] for c in counts[oracle].values()),
            )
            for name in names
        }
        oracles[oracle] = {"rows": rows, "total": total}
    questions = []
    if entries:
        for cid, (text, _) in entries[0].variant_answers.items():
            if not all(cid in entry.variant_answers for entry in entries):
                continue
            row = entries[0].variant_rows.get(cid, 0)
            questions.append(
                {
                    "conversation": cid,
                    "row": row,
                    "label": row_label(row),
                    "question": text,
                    "expected": entries[0].variant_expected.get(cid),
                    "answers": {entry.session: entry.variant_answers[cid][1] for entry in entries},
                    "failed": {
                        oracle: {name: failed.get((name, oracle, cid)) for name in names}
                        for oracle in oracles
                    },
                }
            )
    return {"oracles": oracles, "questions": questions}


# ---------------------------------------------------------------------------- tables


def _label(report: Mapping[str, Any]) -> str:
    return f"{report.get('model') or '-'} ({report.get('session') or '-'})"


def _cell(count: int, of: int) -> str:
    """`12/250 4.8% [3.0-7.5]`"""
    interval = wilson(count, of)
    if interval is None:
        return f"{count}/{of} -"
    return f"{count}/{of} {100 * count / of:.1f}% [{100 * interval[0]:.1f}-{100 * interval[1]:.1f}]"


def comparison_tables(data: Mapping[str, Any]) -> list[Table]:
    """(title, header, rows) of every table the text, Markdown, CSV and HTML forms show."""
    reports: list[Mapping[str, Any]] = data["sessions"]
    labels = [_label(report) for report in reports]
    tables: list[Table] = []
    kontest = [r for r in reports if any(r.get("tests", {}).get(o) for o in ORACLES)]
    if kontest:
        header = ("model", *ORACLES, "total")
        rows = []
        for report in reports:
            tests, errors = report.get("tests", {}), report.get("errors", {})
            cells = [_cell(errors.get(o, 0), tests.get(o, 0)) for o in ORACLES]
            total_tests = sum(tests.get(o, 0) for o in ORACLES)
            cells.append(_cell(errors.get("total", 0), total_tests))
            rows.append((_label(report), *cells))
        tables.append(
            ("KONTEST errors / valid tests per oracle (Tables 3, 10; 95% Wilson)", header, rows)
        )
        templates = sorted({t for r in reports for t in r.get("gap", {}).get("per_template", {})})
        header = ("model", *(f"gap {t}" for t in templates), "gap all", "coverage")
        rows = []
        for report in reports:
            gap, relations = report["gap"], report["relations"]
            cells = [
                _cell(gap["per_template"][t]["missing"], relations)
                if t in gap["per_template"]
                else "-"
                for t in templates
            ]
            cells.append(_cell(gap["intersection"]["missing"], relations))
            cells.append(_cell(report["coverage"]["covered"], relations))
            rows.append((_label(report), *cells))
        tables.append(
            ("Knowledge gap and coverage, of relations (Table 5; 95% Wilson)", header, rows)
        )
    factcheck = [r for r in reports if r.get("factcheck")]
    if factcheck:
        types = sorted({t for r in factcheck for t in r["factcheck"]["per_type"]})
        header = ("question type", *labels)
        rows = []
        for qtype in [*types, "total"]:
            cells = []
            for report in reports:
                section = report.get("factcheck") or {}
                cell = section if qtype == "total" else section.get("per_type", {}).get(qtype)
                cells.append(_cell(cell["correct"], cell["asked"]) if cell else "-")
            rows.append((qtype, *cells))
        tables.append(
            ("FactChecker accuracy, correct / asked (Tables 5, 6; 95% Wilson)", header, rows)
        )
    logic = [r for r in reports if r.get("logic")]
    if logic:
        rules = sorted({rule for r in logic for rule in r["logic"]["per_rule"]})
        header = ("rule", *labels)
        rows = []
        for rule in [*rules, "total"]:
            cells = []
            for report in reports:
                section = report.get("logic") or {}
                cell = section if rule == "total" else section.get("per_rule", {}).get(rule)
                if not cell:
                    cells.append("-")
                    continue
                split = (
                    f" k{cell.get('error_knowledge', 0)}/i{cell.get('error_inference', 0)}"
                    f"/u{cell.get('error_unclassified', 0)}"
                )
                cells.append(_cell(cell["errors"], cell["valid"]) + split)
            rows.append((rule, *cells))
        tables.append(
            (
                "Logic hallucination rate, errors / valid answers (HalluVault Fig. 11; 95% Wilson; "
                "k = error-knowledge, i = error-inference, u = unclassified)",
                header,
                rows,
            )
        )
    consistency = [r for r in reports if (r.get("consistency") or {}).get("variant")]
    annotated = [r for r in reports if r.get("annotation")]
    if consistency or annotated:
        header = ("measure", *labels)
        rows = []
        if consistency:
            cells = []
            for report in reports:
                cell = (report.get("consistency") or {}).get("variant")
                cells.append(_cell(cell["errors"], cell["tests"]) if cell else "-")
            rows.append(("variant flips / tests", *cells))
        if annotated:
            cells = []
            for report in reports:
                cell = (report.get("accuracy") or {}).get("annotation")
                cells.append(_cell(cell["correct"], cell["asked"]) if cell else "-")
            rows.append(("annotation accuracy", *cells))
        tables.append(("Covering-array variants (thesis; 95% Wilson)", header, rows))
    tables += _variant_tables(data.get("variant_table") or {}, reports, labels)
    overlap = data.get("overlap") or {}
    if overlap:
        names = [report.get("session") for report in reports]
        header = ("error type", "errors", *(f"only {label}" for label in labels), "all")
        rows = [
            (
                oracle,
                str(cell["errors"]),
                *(str(cell["unique"].get(n, 0)) for n in names),
                str(cell["all"]),
            )
            for oracle, cell in overlap.items()
        ]
        tables.append(
            ("Errors found by exactly one model or by all (KONTEST Fig. 4)", header, rows)
        )
    timing = data.get("timing") or []
    if timing:
        header = ("model", "calls", "wall s", "s / call", "tokens", "cached")
        rows = [
            (
                labels[i] if i < len(labels) else str(row.get("session")),
                str(row.get("calls", 0)),
                f"{row.get('wall_s', 0.0):.1f}",
                "-" if row.get("s_per_call") is None else f"{row['s_per_call']:.3f}",
                "-" if row.get("tokens") is None else str(row["tokens"]),
                str(row.get("cached", 0)),
            )
            for i, row in enumerate(timing)
        ]
        tables.append(("Time and calls (KONTEST Table 14)", header, rows))
    return tables


ORACLE_TITLES = {
    "annotation": "failed / asked, an answer other than the annotation fails, undefined included",
    "variant": "flips / valid answers, against the question's original answer",
}


def _variant_tables(
    table: Mapping[str, Any], reports: Sequence[Mapping[str, Any]], labels: Sequence[str]
) -> list[Table]:
    """Thesis Table 4: failure rate per covering-array row per model, then the answers."""
    names = [report.get("session") for report in reports]
    tables: list[Table] = []
    for oracle, block in (table.get("oracles") or {}).items():
        rows = [
            (row["label"], *(_rate_cell(row["sessions"].get(name)) for name in names))
            for row in [*block["rows"], {"label": "total", "sessions": block["total"]}]
        ]
        tables.append(
            (
                f"Variant x model, {oracle} oracle ({ORACLE_TITLES.get(oracle, oracle)}): failure "
                "rate per covering-array row, q1 = original (thesis Table 4; 95% Wilson)",
                ("row", *labels),
                rows,
            )
        )
    questions = table.get("questions") or []
    if questions:
        rows = []
        for item in questions[:MAX_VARIANT_ROWS]:
            cells = []
            for name in names:
                answer = str(item["answers"].get(name, "-"))
                for oracle, mark in (("annotation", " *"), ("variant", " ~")):
                    if (item["failed"].get(oracle) or {}).get(name):
                        answer += mark
                cells.append(answer)
            rows.append((item["label"], item["question"], item.get("expected") or "-", *cells))
        more = (
            f", first {MAX_VARIANT_ROWS} of {len(questions)}"
            if len(questions) > MAX_VARIANT_ROWS
            else ""
        )
        tables.append(
            (
                f"Variant x model answers (thesis Table 4{more}; * = fails the annotation, "
                "~ = flips from the original answer)",
                ("row", "variant", "expected", *labels),
                rows,
            )
        )
    return tables


def _rate_cell(cell: Mapping[str, Any] | None) -> str:
    return _cell(cell["count"], cell["of"]) if cell else "-"


# ---------------------------------------------------------------------------- rendering


def check_compare_format(fmt: str) -> str:
    if fmt not in COMPARE_FORMATS:
        raise InvalidInputError(
            f"unknown compare format {fmt!r}; choose one of {', '.join(COMPARE_FORMATS)}"
        )
    return fmt


def render_comparison(data: Mapping[str, Any], fmt: str = "text") -> str:
    """The comparison in `fmt` (see COMPARE_FORMATS)."""
    check_compare_format(fmt)
    if fmt == "json":
        public = {key: data[key] for key in ("sessions", "overlap", "timing", "variant_table")}
        return json.dumps(public, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    tables = comparison_tables(data)
    title = f"Comparison of {len(data['sessions'])} sessions"
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        for name, header, rows in tables:
            writer.writerow(["table", *header])
            writer.writerows([name, *row] for row in rows)
        return buffer.getvalue()
    if fmt == "markdown":
        parts = [f"# {title}", ""]
        for name, header, rows in tables:
            parts += [f"## {_md(name)}", "", _markdown_table(header, rows)]
        return "\n".join(parts).rstrip("\n") + "\n"
    if fmt == "html":
        return _html(title, data, tables)
    parts = [title, ""]
    for name, header, rows in tables:
        parts += [name, _text_table(header, rows)]
    return "\n".join(parts).rstrip("\n") + "\n"


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = [
        "| " + " | ".join(_md(h) for h in header) + " |",
        "|" + "|".join(["---"] * len(header)) + "|",
    ]
    lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *map(line, rows)]) + "\n"


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


def _bars(data: Mapping[str, Any]) -> str:
    """Bars per model: KONTEST error rate and, where asked, FactChecker and logic accuracy."""
    rows = []
    for report in data["sessions"]:
        measures: list[tuple[str, int, int]] = []
        tests = report.get("tests", {})
        total = sum(tests.get(o, 0) for o in ORACLES)
        if total:
            measures.append(("KONTEST error rate", report["errors"].get("total", 0), total))
        for kind in ("factcheck", "logic"):
            section = report.get(kind)
            if section:
                measures.append((f"{kind} accuracy", section["correct"], section["asked"]))
        for name, count, of in measures:
            interval = wilson(count, of) or (0.0, 0.0)
            width = 300 * count / of if of else 0
            rows.append(
                f"<tr><td>{html.escape(_label(report))}</td><td>{html.escape(name)}</td>"
                f"<td><span class='bar' style='width:{width:.0f}px'></span> "
                f"{100 * count / of:.1f}% <span class='ci' style='width:"
                f"{300 * (interval[1] - interval[0]):.0f}px'></span> "
                f"[{100 * interval[0]:.1f}-{100 * interval[1]:.1f}]</td></tr>"
            )
    if not rows:
        return ""
    return (
        "<h2>Rates per model (bar = rate, grey = 95% Wilson interval width)</h2><table>"
        "<tr><th>model</th><th>measure</th><th>rate</th></tr>" + "".join(rows) + "</table>"
    )


def _overlap_svg(data: Mapping[str, Any]) -> str:
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
            f"<p><b>{html.escape(oracle)}</b> ({cell['errors']} errors, found by all: {cell['all']})"
            f"<br><svg width='600' height='18' xmlns='http://www.w3.org/2000/svg'>{''.join(rects)}"
            f"</svg><br>{' &nbsp; '.join(legend)}</p>"
        )
    return "".join(parts)


def _html(title: str, data: Mapping[str, Any], tables: Sequence[Table]) -> str:
    body = [f"<h1>{html.escape(title)}</h1>", _bars(data), _overlap_svg(data)]
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
