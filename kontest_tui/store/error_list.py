"""A stored session's error list, paged: every error verdict ranked in two orders, read from
the derived `result_errors` table (store.rollups ranks them; store.views keeps them built).

`store.error_list` (`ErrorList`): `errors` (a page, CLEAREST first as store.rollups ranks it,
TREE: the graph's order, RELATION: by the relation's name, TEMPLATE: by template, filtered by
an `ErrorFilter`: oracle, template, clear answers, the nodes a find matched, confirmation
status, weak), `error_at` ("the
clearest error" of a session is `error_at(session, 0)`), `step_error` (`n` / `p`),
`error_index` (where a verdict stands), `count_errors` and `error_oracles`. A page of one oracle's list (or the whole list) in the first two orders
is one range read on an index; other filters and orders read one index in their order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from kontest_tui.domain.records import Relation, Verdict
from kontest_tui.oracles.ontological import error_path

from . import rollups
from .records import row_to_relation, row_to_verdict
from .repository import Repository
from .view_records import CLEAREST, RELATION, TEMPLATE, TREE, ErrorFilter, ErrorRow

_VERDICT_COLUMNS = ("id", "oracle", "relation", "template", "error", "refs", "answers", "detail")
_VERDICT_SELECT = ", ".join(f"v.{column}" for column in _VERDICT_COLUMNS)


_MARGINS = {1: "weak", 0: "sure"}  # result_errors.weak; -1: no margin known

_ORDER_BY = {
    CLEAREST: "e.clear_rank",
    TREE: "e.tree_rank",
    RELATION: "e.name_rank",
    TEMPLATE: "e.template, e.clear_rank",
}


def _rank(order: str, oracle: str | None) -> str:
    """The rank column of `order` (of one oracle's list when `oracle` is given)."""
    if order not in (CLEAREST, TREE):
        raise ValueError(f"unknown error order {order!r}")
    column = "clear_rank" if order == CLEAREST else "tree_rank"
    return f"oracle_{column}" if oracle else column


def _merged(oracle: str | None, where: ErrorFilter | None) -> ErrorFilter:
    """`where` with `oracle` (given apart, as the callers before filters did) folded in."""
    where = where or ErrorFilter()
    if oracle and where.oracle != oracle:
        return replace(where, oracle=oracle)
    return where


def _conditions(session_id: str, where: ErrorFilter) -> tuple[str, list[object]]:
    """SQL conditions on `result_errors e` for the session and the filter, with parameters."""
    sql = ["e.session = ?"]
    params: list[object] = [session_id]
    if where.oracle:
        sql.append("e.oracle = ?")
        params.append(where.oracle)
    if where.template is not None:  # "t1" in "t1", "t1+t2", "t2+t1"
        sql.append("instr('+' || e.template || '+', ?) > 0")
        params.append(f"+{where.template}+")
    if where.clear is not None:
        sql.append("e.clear = ?")
        params.append(int(where.clear))
    if where.nodes:
        marks = ", ".join("?" for _ in where.nodes)
        sql.append(f"(e.node IN ({marks}) OR e.parent IN ({marks}))")
        params.extend([*where.nodes, *where.nodes])
    if where.status is not None:
        sql.append("e.status = ?")
        params.append(where.status)
    if where.weak is not None:
        sql.append("e.weak = ?")
        params.append(int(where.weak))
    return " AND ".join(sql), params


class ErrorList(Repository):
    """The error verdicts of stored sessions, ranked, a page at a time."""

    def count_errors(
        self, session_id: str, oracle: str | None = None, *, where: ErrorFilter | None = None
    ) -> int:
        """Error verdicts of the session (of one oracle; those `where` keeps)."""
        conditions, params = _conditions(session_id, _merged(oracle, where))
        return int(
            self._fetch(f"SELECT COUNT(*) FROM result_errors e WHERE {conditions}", params)[0][0]
        )

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
        where: ErrorFilter | None = None,
    ) -> list[ErrorRow]:
        """Errors `offset` .. `offset + limit - 1` of the session's error list in `order`
        (CLEAREST: the clearest first, store.rollups; TREE: the graph's order; RELATION: by
        the relation's name; TEMPLATE: by template, then the clearest first), only those of
        `oracle` and those `where` keeps. A list of one oracle (or all) in the first two
        orders is a range of a stored rank; the others read an index in their order."""
        if order not in _ORDER_BY:
            raise ValueError(f"unknown error order {order!r}")
        start, stop = max(offset, 0), max(offset, 0) + max(limit, 0)
        chosen = _merged(oracle, where)
        conditions, params = _conditions(session_id, chosen)
        select = (
            f"{_VERDICT_SELECT}, r.id, r.parent, r.child, r.type, r.path,"
            " r.parent_label, r.child_label, pn.name, cn.name, cn.way, e.status, e.weak"
            " FROM result_errors e JOIN verdicts v ON v.id = e.verdict"
            " LEFT JOIN relations r ON r.pk = v.relation_key"
            " LEFT JOIN result_nodes pn ON pn.session = e.session AND pn.node = r.parent"
            " LEFT JOIN result_nodes cn ON cn.session = e.session AND cn.node = r.child"
        )
        if chosen.by_oracle_only and order in (CLEAREST, TREE):
            rank = _rank(order, chosen.oracle)
            rows = self._fetch(
                f"SELECT e.{rank}, {select} WHERE {conditions} AND e.{rank} >= ?"
                f" AND e.{rank} < ? ORDER BY e.{rank}",
                (*params, start, stop),
            )
        else:
            rows = self._fetch(
                f"SELECT 0, {select} WHERE {conditions}"
                f" ORDER BY {_ORDER_BY[order]}, e.clear_rank LIMIT ? OFFSET ?",
                (*params, stop - start, start),
            )
            rows = [(start + number, *row[1:]) for number, row in enumerate(rows)]
        return self._error_rows(session_id, rows)

    def _error_rows(self, session_id: str, rows: Sequence[Sequence[Any]]) -> list[ErrorRow]:
        """The rows `errors` read as ErrorRows, the nodes of their paths named."""
        made: list[
            tuple[int, Verdict, Relation | None, str, str, tuple[str, ...], list[str], str, str]
        ] = []
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
            made.append(
                (
                    int(row[0]),
                    verdict,
                    relation,
                    parent_name,
                    child_name,
                    way,
                    path,
                    str(row[19] or ""),
                    _MARGINS.get(row[20], ""),
                )
            )
        names = self.store.tree.node_names(
            session_id, (node for *_, path, _status, _margin in made for node in path)
        )
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
                status=status,
                margin=margin,
            )
            for i, (
                index,
                verdict,
                relation,
                parent_name,
                child_name,
                way,
                path,
                status,
                margin,
            ) in enumerate(made)
        ]

    def error_at(
        self,
        session_id: str,
        index: int,
        *,
        oracle: str | None = None,
        order: str = CLEAREST,
        where: ErrorFilter | None = None,
    ) -> ErrorRow | None:
        """The error at `index` of the list (`error_at(session, 0)`: the clearest error)."""
        found = self.errors(
            session_id, offset=index, limit=1, oracle=oracle, order=order, where=where
        )
        return found[0] if found else None

    def step_error(
        self,
        session_id: str,
        index: int | None,
        step: int,
        *,
        oracle: str | None = None,
        order: str = CLEAREST,
        where: ErrorFilter | None = None,
    ) -> ErrorRow | None:
        """The error `step` places after (before, when negative) the one at `index`, wrapping
        around; from None: the first (step > 0) or the last. None when there is no error."""
        total = self.count_errors(session_id, oracle, where=where)
        if not total:
            return None
        target = (0 if step > 0 else total - 1) if index is None else (index + step) % total
        return self.error_at(session_id, target, oracle=oracle, order=order, where=where)

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

    def error_of(self, session_id: str, verdict_id: int) -> ErrorRow | None:
        """A verdict's row in the clearest-first list of all errors (None: not an error)."""
        index = self.error_index(session_id, verdict_id)
        return self.error_at(session_id, index) if index is not None else None
