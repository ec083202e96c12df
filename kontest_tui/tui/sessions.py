"""Stored sessions for the explorer: the recent-sessions list, opening one's results over the
store's views (store.views), finding others to compare with, and the ensemble across them.

Each function opens the store in the thread that calls it (a worker) and closes it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kontest_tui.errors import StoreError
from kontest_tui.paths import default_db_path
from kontest_tui.report import compare
from kontest_tui.report.compare import ComparableSessions, SessionComparison
from kontest_tui.report.render import render_stored_ensemble
from kontest_tui.run.api import (
    ReportJSON,
    StoredSession,
    ensure_report,
    evaluation_engine,
    load_session,
)
from kontest_tui.store import Store
from kontest_tui.store.search import NodeMatch
from kontest_tui.store.tree import ResultTree
from kontest_tui.store.view_records import ErrorRow, SessionHeader, SessionSummary, TreeNode

_STORE_OPENING = threading.Lock()


def open_store(path: str | Path | None) -> Store:
    """A Store on `path` (the default database when None). Open it in the thread using it.

    Opening is serialised: two workers creating the schema of a new file at once would
    collide ("table sessions already exists").
    """
    with _STORE_OPENING:
        return Store(Path(path) if path else default_db_path())


@contextmanager
def open_views(path: str | Path | None, session_id: str | None = None) -> Iterator[Store]:
    """A Store on `path` for reading the explorer's views (store.tree, store.error_list,
    store.gaps, store.details), open for the calling thread. On a read-only database whose
    file lacks the session's views (another kontest built them) they are built again in
    this Store's TEMP tables, which close with it."""
    store = open_store(path)
    try:
        if session_id is not None and store.read_only and not store.views.ready(session_id):
            store.views.ensure(session_id, evaluation_engine())
        yield store
    finally:
        store.close()


def list_sessions(db: str | Path | None, limit: int = 30) -> list[SessionSummary]:
    """Recent sessions, newest first, from stored columns (one query, no evaluation)."""
    store = open_store(db)
    try:
        return store.sessions.summaries(limit)
    finally:
        store.close()


@dataclass(frozen=True)
class OpenedResults:
    """What the results screen shows first: the session, its stored report, the tree's
    roots and how many errors it has."""

    header: SessionHeader
    report: ReportJSON
    roots: list[TreeNode]
    errors: int
    oracles: list[str]
    children: dict[str, list[TreeNode]]  # the levels that start open (node id -> children)
    place: OpenedPlace | None = None  # where the reader was when the results last closed


@dataclass(frozen=True)
class OpenedPlace:
    """Where a session's results were left: the node's way down, the error shown (its row
    in the clearest-first list), whether only the nodes with errors were shown."""

    way: tuple[str, ...]
    error: ErrorRow | None
    errors_only: bool


def read_place(store: Store, session_id: str) -> OpenedPlace | None:
    """The session's last place in its results (store.places), with the way to its node."""
    place = store.places.get(session_id)
    if place is None or not place.node:
        return None
    way = store.tree.way(session_id, place.node)
    if not way:
        return None
    error = store.error_list.error_of(session_id, place.verdict) if place.verdict else None
    return OpenedPlace(way, error, place.errors_only)


def find_nodes(db: str | Path | None, session_id: str, text: str) -> list[NodeMatch]:
    """The nodes of a session's results matching `text` by label, alias or id, best first
    (store.search)."""
    with open_views(db, session_id) as store:
        return store.search.find_nodes(session_id, text)


EXPAND_BUDGET = 300  # nodes shown open at first; deeper levels are read when opened


def read_open_levels(
    tree: ResultTree, session_id: str, roots: list[TreeNode], budget: int = EXPAND_BUDGET
) -> dict[str, list[TreeNode]]:
    """The children of the first levels, as many whole levels as fit in `budget` nodes."""
    shown = len(roots)
    level = roots
    found: dict[str, list[TreeNode]] = {}
    while level:
        count = sum(row.children for row in level)  # known before reading them
        if not count or shown + count > budget:
            break
        below = {row.node: tree.children(session_id, row.node) for row in level if row.children}
        found.update(below)
        shown += count
        level = [row for rows in below.values() for row in rows]
    return found


def open_results(db: str | Path | None, session_id: str) -> OpenedResults:
    """A session's stored report (results.reports.ensure_report: evaluated and stored only
    when there is none or it is stale) and the first level of its views (built when missing)."""
    store = open_store(db)
    try:
        views = store.views
        header = store.sessions.header(session_id)
        if store.leases.held(session_id):
            raise StoreError(
                f"session {session_id} is being run by another process: open it when it ends"
            )
        report = views.done_report(session_id, evaluation_engine())
        if report is None:  # checked against the answers, evaluated again when stale
            report = ensure_report(store, session_id, errors=0).report
            views.ensure(session_id, evaluation_engine())
        roots = store.tree.children(session_id, None)
        return OpenedResults(
            header=header,
            report=report,
            roots=roots,
            errors=store.error_list.count_errors(session_id),
            oracles=store.error_list.error_oracles(session_id),
            children=read_open_levels(store.tree, session_id, roots),
            place=read_place(store, session_id),
        )
    finally:
        store.close()


@dataclass(frozen=True)
class PairCompared:
    """Two stored sessions compared (report.compare.compare_stored_sessions) and the names
    of the nodes of the relations their answers differ on."""

    comparison: SessionComparison
    names: dict[str, str]  # node id -> its name in the first session's results tree


def compare_pair(db: str | Path | None, left: str, right: str) -> PairCompared:
    """Compare tab: two stored sessions' stored reports and the shared relations whose
    atomic answers differ, read from the store (no session loaded or evaluated again)."""
    store = open_store(db)
    try:
        comparison = compare.compare_stored_sessions(store, left, right)
        nodes = {
            node
            for difference in comparison.differences
            for node in difference.relation.path
            or (difference.relation.parent, difference.relation.child)
        }
        store.views.ensure(left, evaluation_engine())  # the tree's names (built when missing)
        return PairCompared(comparison, store.tree.node_names(left, nodes))
    finally:
        store.close()


def read_session(db: str | Path | None, session_id: str) -> StoredSession:
    """A stored session with its records and evaluation (run.api.load_session), for the
    curation screens (they show and ask over every relation of it)."""
    store = open_store(db)
    try:
        return load_session(store, session_id)
    finally:
        store.close()


def find_comparable_sessions(
    db: str | Path | None, kg_names: Sequence[str], session_id: str
) -> ComparableSessions:
    """Stored sessions worth comparing with `session_id` (report.compare)."""
    store = open_store(db)
    try:
        relation_ids = set(store.relations.ids(session_id))
        return compare.find_comparable_sessions(store, kg_names, relation_ids, session_id)
    finally:
        store.close()


def describe_ensemble(db: str | Path | None, session_ids: Sequence[str], k: int = 5) -> str:
    """Ensemble tab: the weighted ensemble across stored sessions on one KG, cross-validated
    over relations from their stored answers (as `kontest ensemble` does), as text."""
    store = open_store(db)
    try:
        return render_stored_ensemble(store, session_ids, k=k)
    finally:
        store.close()
