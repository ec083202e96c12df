"""Stored sessions for the explorer: the recent-sessions list, loading one for the results
screen, finding others to compare with, and the ensemble across them.

Each function opens the store in the thread that calls it (a worker) and closes it.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kontest_tui.errors import KontestError
from kontest_tui.mitigate.ensemble import cross_validate
from kontest_tui.paths import default_db_path
from kontest_tui.report import compare
from kontest_tui.report.compare import ComparableSessions
from kontest_tui.report.render import render_ensemble
from kontest_tui.run.api import load_session
from kontest_tui.run.session import evaluate_session, session_kinds
from kontest_tui.store import Store
from kontest_tui.tui.plan import SessionPlan, SessionResult

_STORE_OPENING = threading.Lock()


def open_store(path: str | Path | None) -> Store:
    """A Store on `path` (the default database when None). Open it in the thread using it.

    Opening is serialised: two workers creating the schema of a new file at once would
    collide ("table sessions already exists").
    """
    with _STORE_OPENING:
        return Store(Path(path) if path else default_db_path())


@dataclass
class SessionSummary:
    """One row of the start screen's recent-sessions table."""

    id: str
    model: str
    kg: str
    date: str
    status: str
    error_rate: float | None
    kinds: tuple[str, ...] = ("kontest",)  # the test kinds the session asked


def summarize_session_row(row: Mapping[str, Any]) -> SessionSummary:
    """A store sessions row (a dict) as the start screen shows it."""
    rate = row.get("oracle_error_rate", row.get("error_rate"))
    return SessionSummary(
        id=str(row.get("id", "")),
        model=str(row.get("model") or row.get("model_spec") or ""),
        kg=str(row.get("kg") or row.get("kg_name") or ""),
        date=str(row.get("created") or row.get("updated") or "")[:16].replace("T", " "),
        status=str(row.get("status") or ""),
        error_rate=float(rate) if isinstance(rate, int | float) else None,
    )


def list_sessions(db: str | Path | None, limit: int = 30) -> list[SessionSummary]:
    """Recent sessions, newest first, each with its error rate from run.session's evaluation."""
    store = open_store(db)
    try:
        rows = list(store.iter_sessions())[-limit:]
        summaries: list[SessionSummary] = []
        for row in reversed(rows):
            summary = summarize_session_row(row)
            try:
                summary.error_rate = float(evaluate_session(store, summary.id).error_rate)
            except KontestError:
                summary.error_rate = None
            summary.kinds = session_kinds_of(store, summary.id)
            summaries.append(summary)
        return summaries
    finally:
        store.close()


def session_kinds_of(store: Store, session_id: str) -> tuple[str, ...]:
    """The test kinds a stored session asked (run.session.session_kinds; KONTEST when the
    session predates test kinds or cannot be read)."""
    try:
        kinds, _options, _problems = session_kinds(store, session_id)
    except KontestError:
        return ("kontest",)
    return tuple(str(kind.value) for kind in kinds) or ("kontest",)


def load_session_result(db: str | Path | None, session_id: str) -> SessionResult:
    """A stored session as the results screen needs it (plan, raw answers, evaluation)."""
    store = open_store(db)
    try:
        stored = load_session(store, session_id)
    finally:
        store.close()
    plan = SessionPlan(
        kg=stored.kg,
        kg_source=stored.kg_name,
        depth=stored.depth,
        relations=stored.relations,
        conversations=stored.conversations,
        template_set=stored.template_set,
        template_ids=stored.template_ids,
        model_spec=stored.model,
        per_path=stored.per_path,
        kinds=tuple(kind.value for kind in stored.kinds),
        kind_options=stored.kind_options,
    )
    return SessionResult(
        plan=plan,
        raw=stored.raw,
        answers=stored.answers,
        evaluation=stored.evaluation,
        session_id=stored.id,
    )


def find_comparable_sessions(
    db: str | Path | None,
    kg_names: Sequence[str],
    relation_ids: Collection[str],
    exclude: str | None = None,
) -> ComparableSessions:
    """Stored sessions worth comparing with the current one (report.compare)."""
    store = open_store(db)
    try:
        return compare.find_comparable_sessions(store, kg_names, relation_ids, exclude)
    finally:
        store.close()


def describe_ensemble(results: Sequence[SessionResult], k: int = 5) -> str:
    """The weighted ensemble across sessions on one KG (cross-validated over relations, as
    `kontest ensemble` does), rendered by the report module as text."""
    evaluations = [result.evaluation for result in results if result.evaluation is not None]
    return str(render_ensemble(cross_validate(evaluations, k=k), "text"))
