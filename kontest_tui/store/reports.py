"""A session's stored evaluation: its Report JSON in `session_reports`, its verdicts in `verdicts`.

A run stores both once, at its end, in the transaction that finishes it. `kontest report`
reads them back (`read_report`) instead of re-evaluating every answer. A stored report is
*stale*, and not returned, when
- it was made by other evaluation code (`engine` differs: results.evaluate.evaluation_engine), or
- the session's answers changed since: the count of response rows or the newest
  `responses.created` differs from what was evaluated (a resume added or deleted rows), or
- its verdict rows were changed (their count differs).

`store.reports` (`Reports`) reads a stored report; it is written by the transaction that
stores the verdicts (`store.verdicts.replace`, `store.sessions.finish_run`). Reading never
writes: a stale report is None, and what to do then is the reader's (results.reports).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field

from kontest_tui.domain.records import Verdict
from kontest_tui.errors import InvalidInputError, StoreError
from kontest_tui.oracles.report_json import ReportJSON, report_from_json

from .records import dump_json, row_to_verdict
from .repository import Repository
from .schema import now_iso


@dataclass(slots=True)
class StoredReport:
    """A report read from the store: the Report JSON, the first error verdicts, their count."""

    session: str
    report: ReportJSON
    errors: list[Verdict] = field(default_factory=list)  # the first `limit` errors, in order
    total_errors: int = 0


def answers_mark(conn: sqlite3.Connection, session_id: str) -> tuple[int, str | None]:
    """(response rows, newest created) of a session: what a stored report was made from."""
    row = conn.execute(
        "SELECT COUNT(*), MAX(created) FROM responses WHERE session = ?", (session_id,)
    ).fetchone()
    return int(row[0]), row[1]


def write_report(
    conn: sqlite3.Connection,
    session_id: str,
    *,
    engine: str,
    report: Mapping[str, object],
    verdicts: int,
) -> None:
    """Store the report of the evaluation just stored (inside the caller's transaction), and
    its headline rate on the session row."""
    responses, newest = answers_mark(conn, session_id)
    conn.execute(
        "INSERT OR REPLACE INTO session_reports"
        " (session, engine, responses, answers_until, verdicts, report, created)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, engine, responses, newest, verdicts, dump_json(dict(report)), now_iso()),
    )
    headline = report.get("headline")
    if isinstance(headline, Mapping):  # the session lists' rate (oracles.measures.headline_of)
        conn.execute(
            "UPDATE sessions SET headline_measure = ?, headline_rate = ? WHERE id = ?",
            (headline.get("measure") or None, headline.get("rate"), session_id),
        )


def read_report(
    conn: sqlite3.Connection, session_id: str, *, engine: str, limit: int = 20
) -> StoredReport | None:
    """The stored report with its first `limit` error verdicts, or None when there is none
    or it is stale (see the module docstring)."""
    row = conn.execute(
        "SELECT engine, responses, answers_until, verdicts, report FROM session_reports"
        " WHERE session = ?",
        (session_id,),
    ).fetchone()
    if row is None or row[0] != engine:
        return None
    if answers_mark(conn, session_id) != (row[1], row[2]):
        return None
    verdicts = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(error), 0) FROM verdicts WHERE session = ?", (session_id,)
    ).fetchone()
    if verdicts[0] != row[3]:
        return None
    cursor = conn.execute(
        "SELECT * FROM verdicts WHERE session = ? AND error = 1 ORDER BY id LIMIT ?",
        (session_id, limit),
    )
    columns = [column[0] for column in cursor.description or ()]
    errors = [row_to_verdict(dict(zip(columns, values, strict=True))) for values in cursor]
    return StoredReport(session_id, stored_report_json(row[4]), errors, int(verdicts[1]))


def stored_report_json(text: str) -> ReportJSON:
    """A stored report's JSON text read back, checked to be a Report JSON (a hand-edited one
    of another shape is a ValueError: a damaged row)."""
    try:
        return report_from_json(json.loads(text), "the stored report")
    except InvalidInputError as error:
        raise ValueError(str(error)) from None


class Reports(Repository):
    """The sessions' stored reports (`session_reports`), read only when current."""

    def read(self, session_id: str, *, engine: str, limit: int = 20) -> StoredReport | None:
        """The session's stored report and its first `limit` errors; None when there is
        none or it is stale (`read_report`)."""
        with self._damaged_rows("session_reports", session_id):
            try:
                return read_report(self.conn, session_id, engine=engine, limit=limit)
            except sqlite3.Error as error:
                raise StoreError(f"{self.store.path}: {error}") from None
