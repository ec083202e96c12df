"""The oracles' verdicts on a session's answers (`verdicts`), stored with the session's report.

An evaluation is stored whole, in one transaction: its verdicts, its Report JSON
(store.reports) and the explorer's derived tables (store.rollups), by `replace` (results
evaluated again) or by the end of a run (`store.sessions.finish_run`); a streamed run appends
its verdicts chunk by chunk (`append`) after `clear`. `store.verdicts` (`Verdicts`) reads
them whole, page by page (the errors, filtered by oracle or relation), or per relation; the
reads are only as current as the stored report (results.reports says when it is).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.records import Verdict

from . import reports, rollups
from .records import row_to_verdict, verdict_values
from .repository import Repository
from .schema import now_iso

_VERDICT_INSERT = (
    "INSERT INTO verdicts (session, oracle, relation, relation_key, template, error, refs,"
    " answers, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_COLUMNS = ("oracle", "relation", "template", "error", "refs", "answers", "detail")
# A verdict's relation through its key (verdicts are indexed by relation_key).
_OF_RELATION = " AND relation_key = (SELECT pk FROM relations WHERE session = ? AND id = ?)"
# A session's errors with what makes an error the same one in another session of the same
# scope (`Verdicts.changes`): its oracle, relation and template and the turns it compares by
# conversation id, except a variant's (a covering array made again numbers other sentences
# alike), which is known by the questions it compares.
_KEYED_ERRORS = (
    "SELECT v.id, v.oracle, v.relation, COALESCE(v.template, '') AS template,"
    " CASE WHEN v.oracle IN ('variant', 'annotation') THEN (SELECT group_concat("
    "json_extract(c.turns, '$[' || json_extract(j.value, '$[1]') || '].text'), char(10))"
    " FROM json_each(v.refs) j JOIN conversations c"
    " ON c.session = v.session AND c.id = json_extract(j.value, '$[0]'))"
    " ELSE v.refs END AS compared FROM verdicts v WHERE v.session = {} AND v.error = 1"
)
_ONLY_IN = (
    "WITH one AS ("
    + _KEYED_ERRORS.format(":one")
    + "), other AS ("
    + _KEYED_ERRORS.format(":other")
    + ") SELECT {} FROM one WHERE (one.oracle, one.relation, one.template, one.compared)"
    " NOT IN (SELECT oracle, relation, template, compared FROM other)"
)


@dataclass(frozen=True, slots=True)
class ChangedError:
    """An error of one session that the other has not, with its relation's labels."""

    verdict: Verdict
    parent_label: str
    child_label: str
    parent: str = ""  # the relation's node ids ("" when the relation is not stored)
    child: str = ""


@dataclass(frozen=True, slots=True)
class ErrorChanges:
    """How the errors of a session asked again differ from its parent's (`Verdicts.changes`)."""

    before: int  # the parent's errors
    after: int  # the session's errors
    gone: int  # errors of the parent the session has not
    new: int  # errors of the session the parent has not
    first_gone: list[ChangedError] = field(default_factory=list)
    first_new: list[ChangedError] = field(default_factory=list)

    @property
    def kept(self) -> int:
        """Errors both have."""
        return self.before - self.gone


def insert_verdicts(
    conn: sqlite3.Connection,
    session_id: str,
    relation_keys: Mapping[str, int],
    verdicts: Iterable[Verdict],
) -> None:
    """The session's verdicts as rows (store.records.verdict_values; `relation_keys`:
    relation id -> row key), streamed into one statement inside the caller's transaction."""
    conn.executemany(
        _VERDICT_INSERT,
        (verdict_values(session_id, relation_keys, verdict) for verdict in verdicts),
    )


def replace_evaluation(
    conn: sqlite3.Connection,
    session_id: str,
    verdicts: Iterable[Verdict] | None,
    report: Mapping[str, object] | None,
    engine: str,
    *,
    views: bool = True,
) -> int:
    """The session's verdicts (and report, made by `engine`, with the explorer's views)
    replaced inside the caller's transaction (the stored verdicts kept when `verdicts` is
    None; no report stored when `report` is None; `views` False: the views are left to be
    built by the first reader that needs them, store.views.ResultViews.ensure); the number
    of verdicts stored."""
    conn.execute("DELETE FROM session_reports WHERE session = ?", (session_id,))
    if verdicts is not None:
        conn.execute("DELETE FROM verdicts WHERE session = ?", (session_id,))
        keys = dict(conn.execute("SELECT id, pk FROM relations WHERE session = ?", (session_id,)))
        insert_verdicts(conn, session_id, keys, verdicts)
    count = int(
        conn.execute("SELECT COUNT(*) FROM verdicts WHERE session = ?", (session_id,)).fetchone()[0]
    )
    if report is not None:
        reports.write_report(conn, session_id, engine=engine, report=report, verdicts=count)
        if views:
            rollups.write_result_views(conn, session_id)  # the explorer's views (store.views)
    return count


def _errors_where(
    session_id: str, oracle: str | None, relation: str | None
) -> tuple[str, list[object]]:
    """The WHERE clause (and its parameters) of a session's error verdicts, filtered."""
    where = "session = ? AND error = 1"
    params: list[object] = [session_id]
    if oracle is not None:
        where += " AND oracle = ?"
        params.append(oracle)
    if relation is not None:
        where += _OF_RELATION
        params += [session_id, relation]
    return where, params


class Verdicts(Repository):
    """The sessions' stored verdicts."""

    # -- writing -------------------------------------------------------------------------

    def replace(
        self,
        session_id: str,
        verdicts: Iterable[Verdict],
        *,
        report: Mapping[str, object] | None = None,
        engine: str = "",
        oracle_error_rate: float | None = None,
        oracle_errors: int | None = None,
    ) -> int:
        """Replace the session's verdicts with `verdicts` (and its stored report with
        `report`, made by `engine`; none when None) and store its error rate and count on
        the session row, in one transaction; return the count."""
        with self.store.transaction() as conn:
            count = replace_evaluation(conn, session_id, verdicts, report, engine)
            conn.execute(
                "UPDATE sessions SET oracle_error_rate = ?, oracle_errors = ?, updated = ?"
                " WHERE id = ?",
                (oracle_error_rate, oracle_errors, now_iso(), session_id),
            )
        return count

    def clear(self, session_id: str) -> None:
        """Delete the session's verdicts and stored report (a streamed run stores new ones
        chunk by chunk; its report is stale until the run's end stores the new one)."""
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM session_reports WHERE session = ?", (session_id,))
            conn.execute("DELETE FROM verdicts WHERE session = ?", (session_id,))

    def append(
        self, session_id: str, verdicts: Iterable[Verdict], relation_keys: Mapping[str, int]
    ) -> None:
        """Store more verdicts of the session (`relation_keys`: relation id -> row key of
        the relations they name) in one transaction."""
        with self.store.transaction() as conn:
            insert_verdicts(conn, session_id, relation_keys, verdicts)

    # -- reading -------------------------------------------------------------------------

    def load(self, session_id: str) -> list[Verdict]:
        """Every verdict of the session, in stored order."""
        with self._damaged_rows("verdicts", session_id):
            return [
                row_to_verdict(row)
                for row in self._dicts(
                    "SELECT * FROM verdicts WHERE session = ? ORDER BY id", (session_id,)
                )
            ]

    def errors(
        self,
        session_id: str,
        *,
        oracle: str | None = None,
        relation: str | None = None,
        offset: int = 0,
        limit: int = 1,
    ) -> list[Verdict]:
        """Error verdicts in the order they were stored, filtered by oracle and relation."""
        where, params = _errors_where(session_id, oracle, relation)
        sql = f"SELECT * FROM verdicts WHERE {where} ORDER BY id LIMIT ? OFFSET ?"
        with self._damaged_rows("verdicts", session_id):
            return [row_to_verdict(row) for row in self._dicts(sql, [*params, limit, offset])]

    def count_errors(
        self, session_id: str, *, oracle: str | None = None, relation: str | None = None
    ) -> int:
        """How many error verdicts `errors` would page through."""
        where, params = _errors_where(session_id, oracle, relation)
        return int(self._fetch(f"SELECT COUNT(*) FROM verdicts WHERE {where}", params)[0][0])

    def errors_by_relation(self, session_id: str, oracles: Sequence[str]) -> dict[str, int]:
        """relation id -> its error verdicts of `oracles` (relations without one left out)."""
        return {
            str(relation): int(count)
            for relation, count in self._fetch(
                "SELECT relation, COUNT(*) FROM verdicts WHERE session = ? AND error = 1"
                f" AND oracle IN ({', '.join('?' for _ in oracles)}) GROUP BY relation",
                (session_id, *oracles),
            )
        }

    def changes(self, before: str, after: str, *, limit: int = 20) -> ErrorChanges:
        """The stored errors of session `after` against those of `before` (a session asked
        again, run.rerun, against its parent): the counts gone and new and the first `limit`
        of each, in stored order. As current as both stored reports."""
        counts = [
            int(row[0])
            for row in self._fetch(
                "SELECT COUNT(*) FROM verdicts WHERE session = ? AND error = 1"
                " UNION ALL SELECT COUNT(*) FROM verdicts WHERE session = ? AND error = 1",
                (before, after),
            )
        ]
        found: list[int] = []
        lists: list[list[ChangedError]] = []
        for one, other in ((before, after), (after, before)):
            sides = {"one": one, "other": other}
            found.append(int(self._fetch(_ONLY_IN.format("COUNT(*)"), sides)[0][0]))
            ids = [
                int(row[0])
                for row in self._fetch(
                    _ONLY_IN.format("one.id") + " ORDER BY one.id LIMIT :limit",
                    {**sides, "limit": limit},
                )
            ]
            lists.append(self._changed(one, ids))
        return ErrorChanges(counts[0], counts[1], found[0], found[1], lists[0], lists[1])

    def _changed(self, session_id: str, ids: Sequence[int]) -> list[ChangedError]:
        if not ids:
            return []
        rows = self._dicts(
            "SELECT v.*, COALESCE(r.parent_label, '') AS parent_label,"
            " COALESCE(r.child_label, '') AS child_label, COALESCE(r.parent, '') AS parent_id,"
            " COALESCE(r.child, '') AS child_id FROM verdicts v"
            " LEFT JOIN relations r ON r.pk = v.relation_key"
            f" WHERE v.id IN ({', '.join('?' for _ in ids)}) ORDER BY v.id",
            ids,
        )
        with self._damaged_rows("verdicts", session_id):
            return [
                ChangedError(
                    row_to_verdict(row),
                    row["parent_label"],
                    row["child_label"],
                    row["parent_id"],
                    row["child_id"],
                )
                for row in rows
            ]

    def errors_and_all_of(self, session_id: str, oracles: Sequence[str] = ()) -> list[Verdict]:
        """The session's error verdicts and every verdict of `oracles`, in stored order."""
        condition = "error = 1"
        if oracles:
            condition = f"(error = 1 OR oracle IN ({', '.join('?' for _ in oracles)}))"
        rows = self._fetch(
            f"SELECT {', '.join(_COLUMNS)} FROM verdicts WHERE session = ? AND {condition}"
            " ORDER BY id",
            (session_id, *oracles),
        )
        with self._damaged_rows("verdicts", session_id):
            return [row_to_verdict(dict(zip(_COLUMNS, row, strict=True))) for row in rows]
