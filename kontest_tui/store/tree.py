"""The results tree of a stored session: a node's children with their roll-ups, read when the
node is opened, from the derived `result_nodes` and `result_edges` tables (store.rollups
writes them; store.views keeps them built).

`store.tree` (`ResultTree`): `children` (in KG order, with the direct relation's answers and
the node's own and subtree roll-ups), `way` (the node ids from a root down to a node) and
`node_names` (display names, which the error list, gap lists and details share).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from .records import stored_answer
from .repository import Repository
from .view_records import Rollup, TreeNode

_NAMES_PER_QUERY = 500  # node ids bound in one query (SQLite allows 32,766 parameters)


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


class ResultTree(Repository):
    """The results tree of stored sessions, a node's children at a time."""

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
                answers={str(t): stored_answer(a) for t, a in json.loads(row[2]).items()},
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
        for start in range(0, len(wanted), _NAMES_PER_QUERY):
            part = wanted[start : start + _NAMES_PER_QUERY]
            found.update(
                self._fetch(
                    f"SELECT node, name FROM result_nodes WHERE session = ? AND node IN"
                    f" ({', '.join('?' for _ in part)})",
                    (session_id, *part),
                )
            )
        return found
