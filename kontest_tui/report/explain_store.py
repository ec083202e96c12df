"""Explanation cards of a stored session: which error to explain, and the evidence its card
needs, read from the store a few rows at a time (by id: store.relations, store.responses,
store.verdicts), never the whole session.

`kontest explain` and the explorer call `stored_cards`; `choose_errors` picks the verdicts
(the N-th error, a relation's errors, one oracle's), `stored_evidence` reads what their
cards show. `report_names` reads the names a report's error list shows
(`render_named_report`: `kontest run` and `kontest report`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import FactcheckExtras
from kontest_tui.domain.records import Conversation, TestKind, Verdict
from kontest_tui.errors import InvalidInputError, KontestError, StoreError
from kontest_tui.kg.names import NodeNames
from kontest_tui.kinds.registry import KINDS, all_kinds
from kontest_tui.oracles.confirmation import confirmed_headline, status_rank, status_word
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.oracles.findings import RelationFold, fold_conversations, label_doubts
from kontest_tui.oracles.margins import is_weak
from kontest_tui.oracles.ontological import error_path
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.explain import (
    CardEvidence,
    ExplanationCard,
    build_card,
    conversations_needed,
    folded_relations,
    premises_needed,
    relations_needed,
)
from kontest_tui.report.prompts import prompting_of
from kontest_tui.report.render import MAX_ERRORS, ReportNames, render_report
from kontest_tui.report.words import MappedNames, Naming, card_oracles, oracle_name, quoted
from kontest_tui.results.evaluate import evaluation_engine, session_graph
from kontest_tui.results.relation_names import label_of, resolve_relation
from kontest_tui.results.reports import ensure_report
from kontest_tui.store.confirmations import error_key
from kontest_tui.store.database import Store
from kontest_tui.store.records import template_set_from_dict
from kontest_tui.store.reports import StoredReport
from kontest_tui.store.view_records import CLEAREST

# The oracles a card explains, as `--kind` accepts them: KONTEST's, then the built-in kinds'
# that declare a card (report.words.card_oracles adds the plugin kinds').
CARD_KINDS = card_oracles(KINDS)


@dataclass(frozen=True, slots=True)
class ChosenErrors:
    """The error verdicts asked for, where they stand in the order, and how many there are."""

    session: str
    verdicts: list[Verdict]
    first: int  # 1-based position of verdicts[0] among the errors matching the filters
    total: int


def choose_errors(
    store: Store,
    session_id: str,
    *,
    number: int | None = None,
    relation: str | None = None,
    kind: str | None = None,
) -> ChosenErrors:
    """The error to explain: the `number`-th (1-based) among those of oracle `kind`, clearest
    first (store.error_list's order: atomic errors with both answers valid and short distinct
    labels come first); of one `relation`: every error of it, or its `number`-th.

    The session's verdicts are the stored ones (evaluated and stored first when there are
    none or they are stale, as `kontest report` does). One readable line when nothing fits."""
    if kind is not None and kind not in card_oracles():
        known = ", ".join(card_oracles())
        raise InvalidInputError(f"unknown error kind {kind!r} (kinds: {known})")
    if number is not None and number < 1:
        raise InvalidInputError(f"--error counts from 1, not {number}")
    report = ensure_report(store, session_id, errors=0)
    on = ""
    if relation is not None:
        named = resolve_relation(store, session_id, relation)
        relation, on = named.id, f" on {label_of(named)}"
    total = store.verdicts.count_errors(session_id, oracle=kind, relation=relation)
    of_kind = f"{quoted(oracle_name(kind))} " if kind is not None else ""
    if total == 0:
        if report.total_errors == 0:
            raise InvalidInputError(f"session {session_id} has no errors to explain")
        raise InvalidInputError(f"session {session_id} has no {of_kind}errors{on}")
    if number is not None and number > total:
        counted = f"{total} {of_kind}error{'s' if total != 1 else ''}{on}"
        raise InvalidInputError(
            f"session {session_id} has {counted}: --error takes 1 to {total}, not {number}"
            if total > 1
            else f"session {session_id} has {counted}: --error takes only 1, not {number}"
        )
    if number is None and relation is not None:
        verdicts = store.verdicts.errors(session_id, oracle=kind, relation=relation, limit=total)
        return ChosenErrors(session_id, verdicts, 1, total)
    first = number or 1
    if relation is None:
        clearest = _clearest(store, session_id, first - 1, kind)
        if clearest is not None:
            return ChosenErrors(session_id, [clearest], first, total)
    verdicts = store.verdicts.errors(
        session_id, oracle=kind, relation=relation, offset=first - 1, limit=1
    )
    return ChosenErrors(session_id, verdicts, first, total)


def _clearest(store: Store, session_id: str, index: int, kind: str | None) -> Verdict | None:
    """The error at `index` of the clearest-first list (store.error_list, the order the
    explorer's `n` and Errors tab use); None when the views cannot be built (a read-only
    database without them): the stored order is used then."""
    try:
        store.views.ensure(session_id, evaluation_engine())
    except StoreError:
        return None
    row = store.error_list.error_at(session_id, index, oracle=kind, order=CLEAREST)
    return row.verdict if row is not None else None


def stored_evidence(
    store: Store, session_id: str, verdicts: Sequence[Verdict], names: Naming | None = None
) -> CardEvidence:
    """What the cards of `verdicts` show, read by id from the store. `names` (e.g. the
    explorer's views' names of the nodes shown) saves reading the session's KG again."""
    wanted: set[str] = set()
    for verdict in verdicts:
        wanted |= conversations_needed(verdict)
    conversations = store.relations.conversations_by_id(session_id, wanted)
    premises = premises_needed(conversations.values()) - set(conversations)
    if premises:
        conversations.update(store.relations.conversations_by_id(session_id, premises))
    for relation_id in folded_relations(verdicts):  # where each error stands (findings)
        for conversation in store.relations.conversations_of(session_id, relation_id):
            if conversation.test_kind is TestKind.KONTEST:
                conversations.setdefault(conversation.id, conversation)
    relation_ids: set[str] = set()
    for verdict in verdicts:
        relation_ids |= relations_needed(verdict, conversations.values())
    row = store.sessions.get(session_id)
    try:
        template_set = template_set_from_dict(row["templates_json"], f"session {session_id}")
    except KontestError:
        template_set = None
    try:
        kg_name, kg_source = store.sessions.kg_origin(session_id)
    except KontestError:
        kg_name, kg_source = "", ""
    model = str(row.get("model") or "") or None
    return CardEvidence(
        conversations=conversations,
        responses=store.responses.of_conversations(session_id, conversations),
        relations=store.relations.by_id(session_id, relation_ids),
        names=names if names is not None else NodeNames(session_graph(store, session_id)),
        template_set=template_set,
        session=session_id,
        model=model,
        kg_name=str(row.get("kg_name") or "") or kg_name or None,
        kg_source=kg_source or None,
        prompting=prompting_of(model, row.get("options_json")),
        doubts=middle_node_doubts(store, session_id, verdicts),
        confirmations=store.confirmations.of_errors(
            session_id, [verdict for verdict in verdicts if verdict.error]
        ),
    )


def middle_node_doubts(
    store: Store, session_id: str, verdicts: Sequence[Verdict]
) -> dict[str, str]:
    """The doubtful nodes (oracles.findings.label_doubts) among the middle nodes of the
    ontological errors in `verdicts`, from the labels of the session's KG that they share
    (store.sessions.nodes_sharing_labels), never the whole graph."""
    middle = {node for verdict in verdicts for node in error_path(verdict)[1:-1]}
    if not middle:
        return {}
    try:
        doubts = label_doubts(store.sessions.nodes_sharing_labels(session_id, middle))
    except KontestError:
        return {}
    return {node: doubts[node] for node in middle if node in doubts}


def stored_cards(
    store: Store,
    session_id: str | None = None,
    *,
    number: int | None = None,
    relation: str | None = None,
    kind: str | None = None,
    names: Naming | None = None,
) -> list[ExplanationCard]:
    """The cards of the chosen errors of a stored session (the latest when None)."""
    session_id = store.sessions.resolve(session_id)
    chosen = choose_errors(store, session_id, number=number, relation=relation, kind=kind)
    evidence = stored_evidence(store, session_id, chosen.verdicts, names)
    return [build_card(verdict, evidence) for verdict in chosen.verdicts]


def card_nodes(evidence: CardEvidence, verdict: Verdict) -> set[str]:
    """Every node a verdict's card names: the nodes of the relations it shows, the yes-path
    of an ontological error, a fact-check question's distractor and middle node."""
    nodes: set[str] = set()
    for relation in evidence.relations.values():
        nodes.update(relation.path)
        nodes.update((relation.parent, relation.child))
    nodes.update(error_path(verdict))
    for conversation in evidence.conversations.values():
        extras = conversation.extras
        if isinstance(extras, FactcheckExtras):
            nodes.update(node for node in (extras.distractor, extras.middle) if node)
    return nodes


def stored_naming(store: Store, session_id: str, nodes: set[str]) -> Naming:
    """Names of these nodes: read from the explorer's views (store.tree, a few rows) when
    they are built, else from the session's KG."""
    if store.views.ready(session_id):
        return MappedNames(store.tree.node_names(session_id, nodes))
    return NodeNames(session_graph(store, session_id))


def explain_verdict(store: Store, session_id: str, verdict: Verdict) -> ExplanationCard:
    """The card of one stored verdict, its nodes named by `stored_naming`."""
    evidence = stored_evidence(store, session_id, [verdict], MappedNames({}))
    evidence.names = stored_naming(store, session_id, card_nodes(evidence, verdict))
    return build_card(verdict, evidence)


def report_names(store: Store, session_id: str, verdicts: Sequence[Verdict]) -> ReportNames:
    """What a report's error list (report.render) names: the verdicts' relations and their
    nodes' names, read from the store (`stored_naming`; the labels stored with the relations
    when the session's KG snapshot cannot be read: a report never needs the KG)."""
    relations = store.relations.by_id(session_id, {verdict.relation_id for verdict in verdicts})
    nodes: set[str] = set()
    for relation in relations.values():
        nodes.update((relation.parent, relation.child))
    for verdict in verdicts:
        nodes.update(error_path(verdict))
    try:
        template_set = template_set_from_dict(
            store.sessions.get(session_id)["templates_json"], f"session {session_id}"
        )
        texts = {template.id: clean_text(template.text) for template in template_set.templates}
    except KontestError:
        texts = {}
    try:
        names = stored_naming(store, session_id, nodes)
    except KontestError:
        labels: dict[str, str] = {}
        for named in store.relations.names(session_id):
            labels.update({named.parent: named.parent_label, named.child: named.child_label})
        names = MappedNames(labels)
    return ReportNames(
        relations,
        names,
        texts,
        stored_folds(store, session_id, relations),
        error_marks(store, session_id, verdicts),
    )


def error_marks(
    store: Store, session_id: str, verdicts: Sequence[Verdict]
) -> dict[tuple[str, str], str]:
    """What each error's line says besides: its confirmation status when it was asked
    again, and `weak` when every answer it compares is low-margin (oracles.margins)."""
    statuses = store.confirmations.statuses(session_id)
    responses = store.responses.of_conversations(
        session_id, {conversation for verdict in verdicts for conversation, _turn in verdict.refs}
    )
    margins = {
        key: response.p_yes
        for key, response in responses.items()
        if response.p_yes is not None and response.error is None
    }
    marks: dict[tuple[str, str], str] = {}
    for verdict in verdicts:
        key = error_key(verdict)
        words = [status_word(statuses[key])] if key in statuses else []
        if is_weak(verdict, margins):
            words.append("weak")
        if words:
            marks[key] = ", ".join(words)
    return marks


def with_confirmation(store: Store, session_id: str, report: ReportJSON) -> ReportJSON:
    """The Report JSON with its `confirmation` section (store.confirmations: the errors
    asked again per status, their calls and seconds, the headline over confirmed errors)
    when any error was asked again; else as it is."""
    summary = store.confirmations.summary(session_id)
    if not summary.errors:
        return report
    section: dict[str, object] = summary.to_json()
    measures = [info.measures for info in all_kinds().values()]
    headline = confirmed_headline(report.get("headline") or {}, summary.confirmed, measures)
    if headline is not None:
        section["headline"] = headline
    return {**report, "confirmation": section}


def stored_folds(
    store: Store, session_id: str, relation_ids: Iterable[str]
) -> dict[str, RelationFold]:
    """The folds of a few relations (oracles.findings): their KONTEST conversations and
    answers read by id, the metamorphic oracle run again on them."""
    conversations: list[Conversation] = []
    for relation_id in relation_ids:
        conversations += [
            conversation
            for conversation in store.relations.conversations_of(session_id, relation_id)
            if conversation.test_kind is TestKind.KONTEST
        ]
    responses = store.responses.of_conversations(
        session_id, [conversation.id for conversation in conversations]
    )
    answers = {key: response.answer for key, response in responses.items() if not response.error}
    return fold_conversations(conversations, answers)


def render_named_report(
    store: Store,
    session_id: str,
    shown: Evaluation | StoredReport,
    fmt: str = "text",
    *,
    max_errors: int = MAX_ERRORS,
) -> str:
    """`report.render.render_report` of a stored session with its error list named by
    labels (`report_names`): what `kontest run` and `kontest report` print."""
    if isinstance(shown, StoredReport):
        errors, total = shown.errors, shown.total_errors
        report = shown.report
    else:
        errors = [verdict for verdict in shown.verdicts if verdict.error]
        total, report = len(errors), shown.to_json()
    confirmed = with_confirmation(store, session_id, report)
    if fmt not in ("text", "markdown"):
        return render_report(confirmed, fmt)
    if confirmed is not report:  # errors asked again: the confirmed ones first
        errors = confirmed_first(store, session_id, errors, max_errors)
    errors = errors[:max_errors]
    names = report_names(store, session_id, errors)
    stored = StoredReport(session_id, confirmed, errors, total)
    return render_report(stored, fmt, max_errors=max_errors, names=names)


def confirmed_first(
    store: Store, session_id: str, errors: Sequence[Verdict], limit: int
) -> list[Verdict]:
    """The first `limit` errors in the clearest-first list, where confirmed errors come
    first (store.error_list), when the explorer's views are built or can be; else
    `errors` ordered by status (oracles.confirmation.STATUSES)."""
    try:
        store.views.ensure(session_id, evaluation_engine())
        return [row.verdict for row in store.error_list.errors(session_id, limit=limit)]
    except KontestError:
        statuses = store.confirmations.statuses(session_id)
        return sorted(errors, key=lambda v: status_rank(statuses.get(error_key(v), "")))
