"""The explorer's views over the session database: each a few indexed reads, at any size.

`store.views` (`ResultViews`) reads the derived `result_*` tables (store.rollups writes them)
over the Store's connection (open the Store in the thread that reads):
- `children`: a node's children in the results tree with their roll-ups (store.rollups),
  read when the node is expanded;
- `errors` / `error_at` / `step_error` / `error_index`: the error list, paged, filtered by
  oracle, in one of two orders (CLEAREST first, as issue 24 defines it, or TREE: the graph's
  order); "the clearest error" of a session is `error_at(session, 0)`;
- `gap_groups` / `gap_page`: the gap lists, paged per template;
- `relations_into` / `relation_detail`: one node's or one relation's answers, verdicts and
  transcripts, read on demand.

The derived tables are written with the session's report; `ensure` builds them for a report
stored before they existed (or by other code: store.rollups.VERSION), in TEMP tables on a
read-only database. The start screen's sessions and a session's header are read from the
session rows (store.sessions).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from kontest_tui.domain.records import Answer, Relation, Verdict
from kontest_tui.errors import StoreError
from kontest_tui.oracles.ontological import error_path

from . import rollups
from .records import JsonObject, row_to_conversation, row_to_relation, row_to_verdict
from .repository import Repository
from .view_records import (
    CLEAREST,
    TREE,
    ConversationRecord,
    ErrorRow,
    GapRow,
    RelationDetail,
    Rollup,
    TreeNode,
    TurnRecord,
)

_ANSWERS = {answer.value: answer for answer in Answer}
_PATH_MARK = "yes-path "
_VERDICT_COLUMNS = ("id", "oracle", "relation", "template", "error", "refs", "answers", "detail")
_VERDICT_SELECT = ", ".join(
    f"v.{column}" for column in _VERDICT_COLUMNS
)  # oracles.ontological writes an error's indirect path after it


def _answer(value: object) -> Answer | None:
    return _ANSWERS.get(value) if isinstance(value, str) else None


def _rollup(text: str) -> Rollup:
    data = json.loads(text)
    return Rollup(
        relations=int(data.get("relations", 0)),
        errors={str(k): int(v) for k, v in data.get("errors", {}).items()},
        answers={
            str(t): {str(a): int(n) for a, n in counts.items()}
            for t, counts in data.get("answers", {}).items()
        },
    )


class ResultViews(Repository):
    """The explorer's views of stored sessions (the derived `result_*` tables)."""

    # -- whether the derived tables are there ------------------------------------------------

    def ready(self, session_id: str) -> bool:
        """Whether the session's derived tables match its stored report and this code."""
        rows = self._fetch(
            "SELECT v.version, v.report_created, r.created FROM result_views v"
            " JOIN session_reports r ON r.session = v.session WHERE v.session = ?",
            (session_id,),
        )
        return bool(rows) and rows[0][0] == rollups.VERSION and rows[0][1] == rows[0][2]

    def done_report(self, session_id: str, engine: str) -> JsonObject | None:
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
        report = json.loads(rows[0][0])
        return report if isinstance(report, dict) else None

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

    # -- the results tree --------------------------------------------------------------------

    def children(
        self, session_id: str, parent: str | None, *, errors_only: bool = False
    ) -> list[TreeNode]:
        """The children of `parent` (None: the roots) in KG order, with their roll-ups;
        `errors_only`: only those with errors into them or below them."""
        rows = self._fetch(
            "SELECT e.child, e.relation, e.answers, n.name, n.label, n.children, n.own,"
            " n.subtree FROM result_edges e JOIN result_nodes n"
            " ON n.session = e.session AND n.node = e.child"
            " WHERE e.session = ? AND e.parent = ? ORDER BY e.position",
            (session_id, parent or ""),
        )
        nodes = [
            TreeNode(
                node=row[0],
                parent=parent or "",
                name=row[3],
                label=row[4],
                children=int(row[5]),
                relation=row[1],
                answers={str(t): _answer(a) for t, a in json.loads(row[2]).items()},
                own=(own := _rollup(row[6])),
                subtree=_rollup(row[7]) if row[7] else own,
            )
            for row in rows
        ]
        if errors_only:
            nodes = [node for node in nodes if node.subtree.error_total]
        return nodes

    def way(self, session_id: str, node: str) -> tuple[str, ...]:
        """Node ids from a root down to `node` (its first tree path); () when not in the tree."""
        rows = self._fetch(
            "SELECT way FROM result_nodes WHERE session = ? AND node = ?", (session_id, node)
        )
        return tuple(json.loads(rows[0][0])) if rows else ()

    def node_names(self, session_id: str, nodes: Iterable[str]) -> dict[str, str]:
        """Display names of these nodes (those in the tree)."""
        wanted = list(dict.fromkeys(nodes))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            found.update(
                self._fetch(
                    f"SELECT node, name FROM result_nodes WHERE session = ? AND node IN"
                    f" ({', '.join('?' for _ in part)})",
                    (session_id, *part),
                )
            )
        return found

    # -- errors --------------------------------------------------------------------------------

    @staticmethod
    def _rank(order: str, oracle: str | None) -> str:
        if order not in (CLEAREST, TREE):
            raise ValueError(f"unknown error order {order!r}")
        column = "clear_rank" if order == CLEAREST else "tree_rank"
        return f"oracle_{column}" if oracle else column

    def count_errors(self, session_id: str, oracle: str | None = None) -> int:
        """Error verdicts of the session (of one oracle)."""
        sql = "SELECT COUNT(*) FROM result_errors WHERE session = ?"
        params: tuple[str, ...] = (session_id,)
        if oracle:
            sql, params = sql + " AND oracle = ?", (session_id, oracle)
        return int(self._fetch(sql, params)[0][0])

    def error_oracles(self, session_id: str) -> list[str]:
        """The oracles with errors in this session, in the clearest-first order of oracles."""
        # Each next oracle found on the (session, oracle, ...) index: a few lookups, not a scan.
        found = {
            row[0]
            for row in self._fetch(
                "WITH RECURSIVE o(name) AS (SELECT MIN(oracle) FROM result_errors"
                " WHERE session = ?1 UNION ALL SELECT (SELECT MIN(oracle) FROM result_errors"
                " WHERE session = ?1 AND oracle > o.name) FROM o WHERE o.name IS NOT NULL)"
                " SELECT name FROM o WHERE name IS NOT NULL",
                (session_id,),
            )
        }
        known = [oracle for oracle in rollups.CLEAREST_ORACLES if oracle in found]
        return known + sorted(found - set(known))

    def errors(
        self,
        session_id: str,
        *,
        offset: int = 0,
        limit: int = 50,
        oracle: str | None = None,
        order: str = CLEAREST,
    ) -> list[ErrorRow]:
        """Errors `offset` .. `offset + limit - 1` of the session's error list in `order`
        (CLEAREST: the clearest first, store.rollups; TREE: the graph's order), only those of
        `oracle` when given. Each page is one range read on an index."""
        rank = self._rank(order, oracle)
        where = "e.session = ?" + (" AND e.oracle = ?" if oracle else "")
        params: list[object] = [session_id, *([oracle] if oracle else [])]
        rows = self._fetch(
            f"SELECT e.{rank}, {_VERDICT_SELECT}, r.id, r.parent, r.child, r.type, r.path,"
            " r.parent_label, r.child_label, pn.name, cn.name, cn.way"
            " FROM result_errors e JOIN verdicts v ON v.id = e.verdict"
            " LEFT JOIN relations r ON r.pk = v.relation_key"
            " LEFT JOIN result_nodes pn ON pn.session = e.session AND pn.node = r.parent"
            " LEFT JOIN result_nodes cn ON cn.session = e.session AND cn.node = r.child"
            f" WHERE {where} AND e.{rank} >= ? AND e.{rank} < ? ORDER BY e.{rank}",
            (*params, max(offset, 0), max(offset, 0) + max(limit, 0)),
        )
        return self._error_rows(session_id, rows)

    def _error_rows(self, session_id: str, rows: list[tuple[Any, ...]]) -> list[ErrorRow]:
        made: list[tuple[int, Verdict, Relation | None, str, str, tuple[str, ...], list[str]]] = []
        for row in rows:
            verdict = row_to_verdict(dict(zip(_VERDICT_COLUMNS, row[1:9], strict=True)))
            relation = None
            if row[9] is not None:
                relation = row_to_relation(
                    {
                        "id": row[9],
                        "parent": row[10],
                        "child": row[11],
                        "type": row[12],
                        "path": row[13],
                    }
                )
            parent_name = row[16] or row[14] or verdict.relation_id
            child_name = row[17] or row[15] or ""
            way = tuple(json.loads(row[18])) if row[18] else ()
            path = error_path(verdict)
            made.append((int(row[0]), verdict, relation, parent_name, child_name, way, path))
        names = self.node_names(session_id, (node for *_, path in made for node in path))
        return [
            ErrorRow(
                index=index,
                verdict_id=int(rows[i][1]),
                verdict=verdict,
                relation=relation,
                parent_name=parent_name,
                child_name=child_name,
                path_names=tuple(names.get(node, node) for node in path),
                way=way,
            )
            for i, (index, verdict, relation, parent_name, child_name, way, path) in enumerate(made)
        ]

    def error_at(
        self, session_id: str, index: int, *, oracle: str | None = None, order: str = CLEAREST
    ) -> ErrorRow | None:
        """The error at `index` of the list (`error_at(session, 0)`: the clearest error)."""
        found = self.errors(session_id, offset=index, limit=1, oracle=oracle, order=order)
        return found[0] if found else None

    def step_error(
        self,
        session_id: str,
        index: int | None,
        step: int,
        *,
        oracle: str | None = None,
        order: str = CLEAREST,
    ) -> ErrorRow | None:
        """The error `step` places after (before, when negative) the one at `index`, wrapping
        around; from None: the first (step > 0) or the last. None when there is no error."""
        total = self.count_errors(session_id, oracle)
        if not total:
            return None
        target = (0 if step > 0 else total - 1) if index is None else (index + step) % total
        return self.error_at(session_id, target, oracle=oracle, order=order)

    def error_index(
        self,
        session_id: str,
        verdict_id: int,
        *,
        oracle: str | None = None,
        order: str = CLEAREST,
    ) -> int | None:
        """Where a verdict stands in the list (None: not an error of it)."""
        rank = self._rank(order, oracle)
        rows = self._fetch(
            f"SELECT {rank}, oracle FROM result_errors WHERE session = ? AND verdict = ?",
            (session_id, verdict_id),
        )
        if not rows or (oracle and rows[0][1] != oracle):
            return None
        return int(rows[0][0])

    # -- gaps --------------------------------------------------------------------------------

    def gap_groups(self, session_id: str) -> list[tuple[str, int]]:
        """(group, size) of each template's gap then the intersection (store.rollups)."""
        sizes = dict(
            self._fetch(
                "SELECT grp, COUNT(*) FROM result_gaps WHERE session = ? GROUP BY grp",
                (session_id,),
            )
        )
        groups = [*self.templates(session_id), "intersection"]
        return [(group, int(sizes.get(group, 0))) for group in groups]

    def gap_page(
        self, session_id: str, group: str, *, offset: int = 0, limit: int = 50
    ) -> list[GapRow]:
        """Relations `offset` .. `offset + limit - 1` of one gap group, in relation order."""
        rows = self._fetch(
            "SELECT g.position, g.relation, r.parent_label, r.child_label, pn.name, cn.name,"
            " cn.way FROM result_gaps g"
            " LEFT JOIN relations r ON r.session = g.session AND r.id = g.relation"
            " LEFT JOIN result_nodes pn ON pn.session = g.session AND pn.node = r.parent"
            " LEFT JOIN result_nodes cn ON cn.session = g.session AND cn.node = r.child"
            " WHERE g.session = ? AND g.grp = ? AND g.position >= ? AND g.position < ?"
            " ORDER BY g.position",
            (session_id, group, max(offset, 0), max(offset, 0) + max(limit, 0)),
        )
        return [
            GapRow(
                index=int(row[0]),
                group=group,
                relation_id=row[1],
                parent_name=row[4] or row[2] or row[1],
                child_name=row[5] or row[3] or "",
                way=tuple(json.loads(row[6])) if row[6] else (),
            )
            for row in rows
        ]

    # -- one node's or one relation's detail -------------------------------------------------

    def relations_into(self, session_id: str, node: str) -> list[RelationDetail]:
        """Every relation ending at `node`, each with its answers, errors and transcripts."""
        ids = [
            row[0]
            for row in self._fetch(
                "SELECT id FROM relations WHERE session = ? AND child = ? ORDER BY position",
                (session_id, node),
            )
        ]
        return [
            detail for detail in map(lambda r: self.relation_detail(session_id, r), ids) if detail
        ]

    def relation_detail(self, session_id: str, relation_id: str) -> RelationDetail | None:
        """One relation's atomic answers, error verdicts and conversations turn by turn."""
        rows = self._fetch(
            "SELECT pk, id, parent, child, type, path, parent_label, child_label FROM relations"
            " WHERE session = ? AND id = ?",
            (session_id, relation_id),
        )
        if not rows:
            return None
        pk, *_ = rows[0]
        relation = row_to_relation(
            {
                "id": rows[0][1],
                "parent": rows[0][2],
                "child": rows[0][3],
                "type": rows[0][4],
                "path": rows[0][5],
            }
        )
        names = self.node_names(session_id, relation.path or (relation.parent, relation.child))
        cursor = self.conn.execute(
            "SELECT * FROM conversations WHERE relation_key = ? ORDER BY position", (pk,)
        )
        columns = [column[0] for column in cursor.description or ()]
        conversations = []
        atomic: dict[str, Answer | None] = {}
        for values in cursor.fetchall():
            row = dict(zip(columns, values, strict=True))
            conversation = row_to_conversation(row)
            answered = {
                turn: (raw, answer, error)
                for turn, raw, answer, error in self._fetch(
                    "SELECT turn, raw, answer, error FROM responses WHERE conversation_key = ?",
                    (row["pk"],),
                )
            }
            turns = []
            for index, query in enumerate(conversation.turns):
                raw, answer, error = answered.get(index, (None, None, None))
                turns.append(
                    TurnRecord(query.text, raw, _answer(answer) if error is None else None, error)
                )
            conversations.append(ConversationRecord(conversation, tuple(turns)))
            if (
                conversation.kind == "atomic"
                and str(conversation.test_kind) == "kontest"
                and conversation.turns
            ):
                atomic.setdefault(conversation.turns[0].template_id, turns[0].answer)
        verdict_rows = self.conn.execute(
            "SELECT * FROM verdicts WHERE relation_key = ? AND error = 1 ORDER BY id", (pk,)
        )
        verdict_columns = [column[0] for column in verdict_rows.description or ()]
        found = [dict(zip(verdict_columns, values, strict=True)) for values in verdict_rows]
        errors = tuple(row_to_verdict(row) for row in found)
        paths = [error_path(verdict) for verdict in errors]
        path_names = self.node_names(session_id, (node for path in paths for node in path))
        return RelationDetail(
            relation=relation,
            parent_name=names.get(relation.parent, rows[0][6]),
            child_name=names.get(relation.child, rows[0][7]),
            answers=atomic,
            errors=errors,
            conversations=tuple(conversations),
            path_names=tuple(names.get(node, node) for node in relation.path),
            error_ids=tuple(int(row["id"]) for row in found),
            error_paths=tuple(tuple(path_names.get(node, node) for node in path) for path in paths),
        )
