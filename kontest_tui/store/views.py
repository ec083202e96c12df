"""The explorer's derived tables of a stored session: whether they are built, and building them.

A session's results are read from tables derived from its stored report (store.rollups
writes them in the transaction that stores the report: `result_nodes`, `result_edges`,
`result_errors`, `result_gaps`, `result_views`), a few indexed reads at any size, by one
repository per thing the explorer shows:

- `store.tree` (store.tree): a node's children with their roll-ups, read when it is opened;
- `store.error_list` (store.error_list): the error list, paged, in two orders;
- `store.gaps` (store.gaps): the gap lists, paged per template;
- `store.details` (store.details): one node's or one relation's answers, verdicts and
  transcripts, read on demand from the session's own tables.

`store.views` (`ResultViews`) says whether they match the stored report and this code
(`ready`), reads a done session's report when they do (`done_report`) and builds them when
they are missing or outdated (`ensure`: a report stored before they existed, or by another
store.rollups.VERSION), in TEMP tables on a read-only database. The start screen's sessions
and a session's header are read from the session rows (store.sessions).
"""

from __future__ import annotations

import json

from kontest_tui.errors import StoreError
from kontest_tui.oracles.report_json import ReportJSON

from . import rollups
from .reports import stored_report_json
from .repository import Repository


class ResultViews(Repository):
    """Whether a session's derived tables are built, and building them."""

    def ready(self, session_id: str) -> bool:
        """Whether the session's derived tables match its stored report and this code."""
        rows = self._fetch(
            "SELECT v.version, v.report_created, r.created FROM result_views v"
            " JOIN session_reports r ON r.session = v.session WHERE v.session = ?",
            (session_id,),
        )
        return bool(rows) and rows[0][0] == rollups.VERSION and rows[0][1] == rows[0][2]

    def done_report(self, session_id: str, engine: str) -> ReportJSON | None:
        """The stored report of a done session whose views are built, made by `engine`;
        None otherwise. A done session's report is current without counting its rows (what
        store.reports checks): a run that adds answers marks the session running first and
        stores a new report at its end, and an edit in place deletes the report (triggers)."""
        rows = self._fetch(
            "SELECT r.report FROM session_reports r JOIN sessions s ON s.id = r.session"
            " JOIN result_views v ON v.session = r.session AND v.report_created = r.created"
            " WHERE r.session = ? AND s.status = 'done' AND r.engine = ? AND v.version = ?",
            (session_id, engine, rollups.VERSION),
        )
        if not rows:
            return None
        with self._damaged_rows("session_reports", session_id):
            return stored_report_json(rows[0][0])

    def ensure(self, session_id: str, engine: str) -> None:
        """Build the derived tables when they are missing or outdated. The session's report
        must be stored and current (made by `engine`: results.reports.ensure_report stores
        it). A read-only database is never written: they are built in connection-private
        TEMP tables then (store.rollups.shadow_in_temp), gone when the Store closes."""
        if self.ready(session_id):
            return
        if self.store.reports.read(session_id, engine=engine, limit=0) is None:
            if self.store.read_only:
                raise StoreError(
                    f"the stored report of session {session_id} is stale or missing and"
                    f" {self.store.path} is read only: `kontest report` evaluates it without"
                    " storing; open a writable copy to explore it"
                )
            raise StoreError(f"session {session_id} has no current stored report to show")
        try:
            with self.store.transaction() as conn:
                if self.store.read_only:
                    rollups.shadow_in_temp(conn)
                rollups.write_result_views(conn, session_id)
        except StoreError as error:
            raise StoreError(f"cannot build the views of {session_id}: {error}") from None

    def templates(self, session_id: str) -> list[str]:
        """The templates of the session's gap lists (the report's order)."""
        rows = self._fetch("SELECT templates FROM result_views WHERE session = ?", (session_id,))
        return [str(t) for t in json.loads(rows[0][0])] if rows else []
