"""A session explained for a reader who never saw the tool: one standalone HTML page (and its
Markdown twin) read from the store, never by evaluating the session again.

What it holds: what was tested and the counts per kind of error (the stored report), each
template by its text, a legend of every symbol (report.legend), the picture of the model's
KG (report.picture; only the nodes with errors and the way to them with `errors_only`, only
the subtrees of `entities` for big graphs), and every error as a card with its questions and
replies as visible text, clearest first (report.explain; the first `max_cards`), and the
questions asked by hand about its relations (probes), which change no figure.

`kontest report --format html|markdown` and the explorer's export (`w`) write these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Answer, Verdict
from kontest_tui.errors import KontestError, StoreError
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.names import NodeNames
from kontest_tui.kg.scope import apply_scope
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.paths import write_text_atomic
from kontest_tui.report.explain import ExplanationCard, build_card
from kontest_tui.report.explain_render import CARD_CSS, card_html, cards_markdown, escape_markdown
from kontest_tui.report.explain_store import stored_evidence
from kontest_tui.report.legend import (
    ANSWER_SYMBOLS,
    ERROR_SYMBOLS,
    PICTURE_SYMBOLS,
    template_legend,
)
from kontest_tui.report.picture import Picture, draw_picture
from kontest_tui.report.words import findings_lines, oracle_checks, oracle_name
from kontest_tui.results.evaluate import evaluation_engine, session_graph
from kontest_tui.results.reports import ensure_report
from kontest_tui.store.database import Store
from kontest_tui.store.records import template_set_from_dict
from kontest_tui.store.view_records import CLEAREST

MAX_CARDS = 200  # error cards in one page (the rest: `kontest explain --error N`)

_ANSWERS = {answer.value: answer for answer in Answer}


@dataclass(slots=True)
class SessionDocument:
    """What a session's page shows (see the module docstring)."""

    session: str
    model: str
    kg_name: str
    report: ReportJSON
    templates: list[tuple[str, str]]
    picture: Picture
    cards: list[ExplanationCard]
    total_errors: int  # error verdicts in the scope shown
    errors_only: bool = False
    entities: tuple[str, ...] = ()
    # questions asked by hand about its relations (probe mode), oldest first: (relation,
    # question, how it was asked, reply, read as, became); no metric counts them
    probes: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.model} on {self.kg_name} · session {self.session}"


def build_session_document(
    store: Store,
    session_id: str | None = None,
    *,
    errors_only: bool = False,
    entities: Sequence[str] = (),
    depth: int | None = None,
    max_cards: int = MAX_CARDS,
) -> SessionDocument:
    """Read a session's page from the store: its stored report (evaluated and stored first
    only when there is none or it is stale), stored answers and error verdicts."""
    session_id = store.sessions.resolve(session_id)
    stored = ensure_report(store, session_id, errors=0)
    row = store.sessions.get(session_id)
    whole = session_graph(store, session_id)
    kg, _ = apply_scope(whole, entities, depth)
    relations = [
        relation
        for relation in store.relations.load(session_id)
        if relation.parent in kg.nodes and relation.child in kg.nodes
    ]
    kept = {relation.id for relation in relations}
    atomic: dict[tuple[str, str], Answer | None] = {}
    for relation_id, per_template in store.responses.atomic_answers(session_id).items():
        if relation_id in kept:
            for template_id, value in per_template.items():
                atomic[(relation_id, template_id)] = _ANSWERS.get(value) if value else None
    total = store.verdicts.count_errors(session_id)
    errors = [
        verdict
        for verdict in _errors_clearest_first(store, session_id, total)
        if verdict.relation_id in kept
    ]
    template_ids = [str(t) for t in row.get("template_ids") or []]
    try:
        template_set = template_set_from_dict(row["templates_json"], f"session {session_id}")
    except KontestError:
        template_set = None
    picture = draw_picture(
        kg, relations, atomic, errors, errors_only=errors_only, templates=template_ids or None
    )
    probes = probe_rows(store, session_id, NodeNames(whole), kept if entities else None)
    chosen = errors[: max(max_cards, 0)]
    cards: list[ExplanationCard] = []
    if chosen:
        evidence = stored_evidence(store, session_id, chosen, NodeNames(whole))
        cards = [build_card(verdict, evidence) for verdict in chosen]
    return SessionDocument(
        session=session_id,
        model=str(row.get("model") or ""),
        kg_name=str(row.get("kg_name") or whole.name),
        report=stored.report,
        templates=template_legend(template_set, template_ids),
        picture=picture,
        cards=cards,
        total_errors=len(errors),
        errors_only=errors_only,
        entities=tuple(_scope_names(kg, entities)),
        probes=probes,
    )


def probe_rows(
    store: Store, session_id: str, names: NodeNames, kept: set[str] | None = None
) -> list[tuple[str, str, str, str, str, str]]:
    """The session's probes as the page lists them (those about `kept` relations when
    given): the relation by its labels, the question, a template's text or `typed`, the
    reply (or the error), what it was read as, and what it became (template, synonym)."""
    probes = [p for p in store.probes.of_session(session_id) if kept is None or p.relation in kept]
    relations = store.relations.by_id(session_id, {probe.relation for probe in probes})
    rows = []
    for probe in probes:
        relation = relations.get(probe.relation)
        rows.append(
            (
                names.relation(relation) if relation is not None else probe.relation,
                clean_text(probe.question),
                f"template {clean_text(probe.template)}" if probe.template else "typed",
                clean_text(probe.raw) if probe.error is None else f"failed: {probe.error}",
                probe.answer.value if probe.error is None else "-",
                probe.promoted or "-",
            )
        )
    return rows


PROBE_HEADER = ("relation", "question", "asked as", "reply", "read as", "became")


def _probes_note(document: SessionDocument) -> str:
    return (
        f"{len(document.probes)} questions asked by hand about relations of this session "
        "(probe mode), each alone, oldest first. They change no figure above unless one "
        "became a template or a synonym."
    )


def _errors_clearest_first(store: Store, session_id: str, total: int) -> list[Verdict]:
    """Every error verdict, clearest first (store.error_list); the stored order when the
    views cannot be built (a read-only file)."""
    try:
        store.views.ensure(session_id, evaluation_engine())
        rows = store.error_list.errors(session_id, limit=total, order=CLEAREST)
        return [row.verdict for row in rows]
    except StoreError:
        return store.verdicts.errors(session_id, limit=total)


def _scope_names(kg: KnowledgeGraph, entities: Sequence[str]) -> list[str]:
    return [clean_text(kg.label(root)) for root in kg.roots()] if entities else []


def summary_rows(report: ReportJSON) -> list[tuple[str, str, int, int, str]]:
    """(test, what it checks, tests, errors, rate) for each oracle that ran a test, in
    words (report.words; the JSON keys are in the report's JSON)."""
    tests, errors = report.get("tests") or {}, report.get("errors") or {}
    rows = []
    for oracle, checks in oracle_checks().items():
        ran = int(tests.get(oracle) or 0)
        if not ran:
            continue
        wrong = int(errors.get(oracle) or 0)
        rows.append((oracle_name(oracle), checks, ran, wrong, f"{100 * wrong / ran:.1f}%"))
    return rows


def _intro(document: SessionDocument) -> str:
    report = document.report
    return (
        f"The model {document.model} was asked about {report.get('relations', 0)} relations "
        f'of the knowledge graph {document.kg_name} (each one "A contains B"), in questions '
        "filled from the templates below: each question alone in a fresh chat, and two "
        "phrasings in one chat. An error is a set of answers that cannot all be right. "
        f"{report.get('executions', 0)} questions were answered ({report.get('valid', 0)} "
        f"with yes or no, {report.get('invalid', 0)} with neither)."
    )


FINDINGS_NOTE = (
    "One fact the model is unsure of fails several tests at once, so the errors above are "
    "folded per relation here, each finding counted once:"
)


def page_findings(document: SessionDocument) -> list[str]:
    """The report's findings in sentences (report.words.findings_lines; none for a report
    stored before they were counted, or without KONTEST questions)."""
    findings = document.report.get("findings")
    if findings is None:
        return []
    return findings_lines(findings, document.report.get("relations"))


def _scope_note(document: SessionDocument) -> str:
    notes = []
    if document.entities:
        notes.append("Only the subtree of " + ", ".join(document.entities) + ".")
    if document.errors_only:
        notes.append("Only the nodes with errors and the way down to them.")
    return " ".join(notes)


def _cards_note(document: SessionDocument) -> str:
    shown, total = len(document.cards), document.total_errors
    if total == 0:
        return "No errors."
    if shown < total:
        return (
            f"{total} errors, clearest first; the first {shown} are explained here "
            f"(kontest explain {document.session} --error N for the others)."
        )
    return f"{total} error{'s' if total != 1 else ''}, clearest first."


# -- HTML ------------------------------------------------------------------------------------

PAGE_CSS = (
    CARD_CSS + "body{max-width:none}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #d0d7de;padding:.2em .6em;text-align:left}"
    "td.n{text-align:right}.picture{overflow:auto;border:1px solid #d0d7de}"
    "svg{font:13px ui-monospace,monospace}code{font-family:ui-monospace,monospace}"
)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{cell}</td>'
            if isinstance(cell, int)
            else f"<td>{escape(str(cell))}</td>"
            for cell in row
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _findings_html(document: SessionDocument) -> list[str]:
    lines = page_findings(document)
    if not lines:
        return []
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return [f"<p>{escape(FINDINGS_NOTE)}</p><ul>{items}</ul>"]


def document_html(document: SessionDocument) -> str:
    """The standalone page: no script, no network; every text escaped."""
    report = document.report
    coverage = report.get("coverage") or {}
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(document.title)}</title><style>{PAGE_CSS}</style></head><body>",
        f"<h1>{escape(document.title)}</h1>",
        f"<p>{escape(_intro(document))}</p>",
        "<h2>Errors per kind of test</h2>",
        _table(("test", "it checks that", "tests", "errors", "rate"), summary_rows(report)),
        *_findings_html(document),
        f"<p>Covered: {escape(str(coverage.get('covered', 0)))} relations got a yes under "
        f"at least one template ({escape(str(coverage.get('pct', 0)))}%).</p>",
        "<h2>Templates</h2>",
        _table(
            ("template", "text ({parent} and {child} are the two entities)"), document.templates
        ),
        "<h2>Legend</h2>",
        _table(("symbol", "meaning"), [*ANSWER_SYMBOLS, *ERROR_SYMBOLS, *PICTURE_SYMBOLS]),
        "<h2>The model's knowledge graph</h2>",
        f"<p>{document.picture.relations} relations, {document.picture.errors} errors on "
        f"{document.picture.nodes_with_errors} nodes. Each node shows the answers to the "
        "relation from its parent, per template. " + escape(_scope_note(document)) + "</p>",
        f'<div class="picture">{document.picture.svg}</div>',
        "<h2>The errors explained</h2>",
        f"<p>{escape(_cards_note(document))}</p>",
        *(card_html(card, level=3) for card in document.cards),
    ]
    if document.probes:
        parts += [
            "<h2>Questions asked by hand</h2>",
            f"<p>{escape(_probes_note(document))}</p>",
            _table(PROBE_HEADER, document.probes),
        ]
    parts.append("</body></html>\n")
    return "".join(parts)


# -- Markdown --------------------------------------------------------------------------------


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(escape_markdown(cell) for cell in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(escape_markdown(str(cell)) for cell in row) + " |" for row in rows]
    return lines


def _findings_markdown(document: SessionDocument) -> list[str]:
    lines = page_findings(document)
    if not lines:
        return []
    return [escape_markdown(FINDINGS_NOTE), "", *(f"- {escape_markdown(x)}" for x in lines), ""]


def document_markdown(document: SessionDocument) -> str:
    """The page as Markdown: the same sections, entities by label (the picture is the
    HTML page's)."""
    report = document.report
    coverage = report.get("coverage") or {}
    lines = [
        f"# {escape_markdown(document.title)}",
        "",
        escape_markdown(_intro(document)),
        "",
        "## Errors per kind of test",
        "",
        *_markdown_table(
            ("test", "it checks that", "tests", "errors", "rate"), summary_rows(report)
        ),
        "",
        *_findings_markdown(document),
        escape_markdown(
            f"Covered: {coverage.get('covered', 0)} relations got a yes under at least one "
            f"template ({coverage.get('pct', 0)}%)."
        ),
        "",
        "## Templates",
        "",
        *_markdown_table(("template", "text"), document.templates),
        "",
        "## Legend",
        "",
        *_markdown_table(("symbol", "meaning"), [*ANSWER_SYMBOLS, *ERROR_SYMBOLS]),
        "",
        "## The errors explained",
        "",
        escape_markdown(" ".join(filter(None, (_scope_note(document), _cards_note(document))))),
        "",
    ]
    text = "\n".join(lines) + "\n" + cards_markdown(document.cards, level=3)
    if document.probes:
        probes = [
            "## Questions asked by hand",
            "",
            escape_markdown(_probes_note(document)),
            "",
            *_markdown_table(PROBE_HEADER, document.probes),
        ]
        text = text.rstrip("\n") + "\n\n" + "\n".join(probes) + "\n"
    return text


def write_session_files(store: Store, session_id: str, folder: Path) -> list[Path]:
    """Write a session's exports side by side in `folder`, all read from the store:
    `kontest-ID.json` and `.csv` (the stored report), `.md` (the page as Markdown),
    `.html` (the page), `-errors.html` (only the nodes with errors: big graphs) and, when
    the session has probes, `-probes.csv`. Their paths."""
    from kontest_tui.report.export import export_probes
    from kontest_tui.report.render import render_report

    folder.mkdir(parents=True, exist_ok=True)
    stored = ensure_report(store, session_id)
    document = build_session_document(store, session_id)
    errors_only = build_session_document(store, session_id, errors_only=True)
    texts = {
        f"kontest-{session_id}.json": render_report(stored, "json"),
        f"kontest-{session_id}.md": document_markdown(document),
        f"kontest-{session_id}.csv": render_report(stored, "csv"),
        f"kontest-{session_id}.html": document_html(document),
        f"kontest-{session_id}-errors.html": document_html(errors_only),
    }
    if next(store.probes.of_session(session_id), None) is not None:
        texts[f"kontest-{session_id}-probes.csv"] = export_probes(store, session_id, "csv")
    written = []
    for name, text in texts.items():
        written.append(write_text_atomic(folder / name, text))
    return written
