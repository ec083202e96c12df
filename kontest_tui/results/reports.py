"""A session's report: the stored one when it is current, else evaluated from its answers.

- `session_report(store, id)` reads: the report and first errors a run stored (store.reports),
  or, when there is none or it is stale, an evaluation of the stored answers made in memory.
  Reading never writes to the store.
- `refresh_report(store, id)` evaluates again and stores verdicts and report (when the
  database is writable and no run holds the session); `must_store=True` (`kontest report
  --re-evaluate`) makes a report that cannot be stored one StoreError line instead.
- `ensure_report(store, id)`: the stored report, refreshed first when it is missing or stale
  (the session page, explanations and the explorer's results, which list stored verdicts);
  on a read-only database a stale one is one StoreError line, never written.
- `current_report(store, id)`: the stored Report JSON when it is current, else None (cheap:
  the staleness check reads counts, no verdict).
"""

from __future__ import annotations

from kontest_tui.errors import KontestError, StoreError
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.results.evaluate import evaluate_session, evaluation_engine, store_evaluation
from kontest_tui.store.database import Store
from kontest_tui.store.reports import StoredReport


def current_report(store: Store, session_id: str) -> ReportJSON | None:
    """The stored Report JSON when it is current (same evaluating code, same answers and
    verdicts), else None."""
    stored = store.reports.read(session_id, engine=evaluation_engine(), limit=0)
    return stored.report if stored is not None else None


def session_report(
    store: Store, session_id: str, *, re_evaluate: bool = False, errors: int = 20
) -> StoredReport:
    """A session's report with its first `errors` error verdicts: the stored one unless
    `re_evaluate` or it is stale (store.reports says when); then the answers are evaluated
    again in memory. Nothing is written."""
    if not re_evaluate:
        stored = store.reports.read(session_id, engine=evaluation_engine(), limit=errors)
        if stored is not None:
            return stored
    return _as_stored(session_id, evaluate_session(store, session_id), errors)


def refresh_report(
    store: Store, session_id: str, *, errors: int = 20, must_store: bool = False
) -> StoredReport:
    """Evaluate the stored answers again and store the verdicts and report for the next
    reader (when the database is writable and no run holds the session; a busy database
    leaves the stored one as it was, the returned report is still right). `must_store`: a
    read-only database, a session a run holds or a failed write is a StoreError saying why
    (what was asked was storing; an exit 0 that stored nothing would hide it)."""
    if must_store and store.read_only:
        raise StoreError(
            f"cannot store the evaluation: {store.path} is read only (`kontest report`"
            " without --re-evaluate evaluates the answers in memory and stores nothing)"
        )
    evaluation = evaluate_session(store, session_id)
    if store.read_only or store.leases.held(session_id):
        if must_store:
            raise StoreError(
                f"cannot store the evaluation: a run is asking session {session_id} now"
                " (it stores its own when it ends)"
            )
        return _as_stored(session_id, evaluation, errors)
    try:
        store_evaluation(store, session_id, evaluation)
    except KontestError as error:
        if must_store:
            raise StoreError(f"cannot store the evaluation: {error}") from None
    return _as_stored(session_id, evaluation, errors)


def ensure_report(store: Store, session_id: str, *, errors: int = 20) -> StoredReport:
    """The stored report, refreshed first (refresh_report) when it is missing or stale, for
    the readers that list stored verdicts beside it (the session page, explanations, the
    explorer's views). A stale one on a read-only database cannot be refreshed: one
    StoreError line (`session_report` evaluates it in memory)."""
    stored = store.reports.read(session_id, engine=evaluation_engine(), limit=errors)
    if stored is not None:
        return stored
    if store.read_only:
        raise StoreError(
            f"the stored report of session {session_id} is stale or missing and"
            f" {store.path} is read only: `kontest report` evaluates it without storing;"
            " open a writable copy for its page, explanations and results"
        )
    return refresh_report(store, session_id, errors=errors)


def _as_stored(session_id: str, evaluation: Evaluation, errors: int) -> StoredReport:
    wrong = [verdict for verdict in evaluation.verdicts if verdict.error]
    return StoredReport(session_id, evaluation.to_json(), wrong[:errors], len(wrong))
