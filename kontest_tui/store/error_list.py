"""A stored session's error list, paged: every error verdict ranked in two orders, read from
the derived `result_errors` table (store.rollups ranks them; store.views keeps them built).

`store.error_list` (`ErrorList`): `errors` (a page, filtered by oracle, CLEAREST first as
issue 24 defines it, or TREE: the graph's order), `error_at` ("the clearest error" of a
session is `error_at(session, 0)`), `step_error` (`n` / `p`), `error_index` (where a verdict
stands), `count_errors` and `error_oracles`. Each page is one range read on an index.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kontest_tui.domain.records import Relation, Verdict
from kontest_tui.oracles.ontological import error_path

from . import rollups
from .records import row_to_relation, row_to_verdict
from .repository import Repository
from .view_records import CLEAREST, TREE, ErrorRow

_VERDICT_COLUMNS = ("id", "oracle", "relation", "template", "error", "refs", "answers", "detail")
_VERDICT_SELECT = ", ".join(f"v.{column}" for column in _VERDICT_COLUMNS)


def _rank(order: str, oracle: str | None) -> str:
    """The rank column of `order` (of one oracle's list when `oracle` is given)."""
    if order not in (CLEAREST, TREE):
        raise ValueError(f"unknown error order {order!r}")
    column = "clear_rank" if order == CLEAREST else "tree_rank"
    return f"oracle_{column}" if oracle else column


class ErrorList(Repository):
    """The error verdicts of stored sessions, ranked, a page at a time."""

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
        rank = _rank(order, oracle)
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

    def _error_rows(self, session_id: str, rows: Sequence[Sequence[Any]]) -> list[ErrorRow]:
        """The rows `errors` read as ErrorRows, the nodes of their paths named."""
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
        names = self.store.tree.node_names(session_id, (node for *_, path in made for node in path))
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
        rank = _rank(order, oracle)
        rows = self._fetch(
            f"SELECT {rank}, oracle FROM result_errors WHERE session = ? AND verdict = ?",
            (session_id, verdict_id),
        )
        if not rows or (oracle and rows[0][1] != oracle):
            return None
        return int(rows[0][0])
