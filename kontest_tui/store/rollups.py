"""The explorer's derived tables of one session, written with its report (store.views reads them).

From the stored KG snapshot, relations, atomic answers and error verdicts (never by
evaluating the session), in the transaction that stores the report. The counting, ranking
and numbering are SQL aggregates and window functions over the stored rows; Python holds
only the KG's nodes (their tree order and subtree sums), so a million-relation session is
not read into memory:

- `result_nodes`: each KG node reachable from a root, with its display name, its first tree
  path (`way`), its pre-order, what the results' find compares (`search`: its label, aliases
  and id, one normalised line each: store.search), and its roll-ups: relations ending at it
  (`own`) and at it or below it (`subtree`; "" for a leaf, whose subtree is its own), each
  as relations, errors by oracle and atomic answers per template.
  A node under two parents counts under both (the tree shows it twice).
- `result_edges`: the tree's edges in KG order, each with the relation parent -> child and
  its atomic answer per template.
- `result_errors`: every error verdict with its dense rank in each order (clearest first,
  graph order), overall and within its oracle, so a page or the next error is one lookup;
  with what the Errors tab filters and sorts on (the relation's two nodes, the template,
  whether every compared answer is a yes or a no, the rank by the relation's name, whether
  asking it again confirmed it, `status` from store.confirmations, and whether it is weak,
  `weak` 1: every answer it compares has a margin within domain.margins.LOW_MARGIN of 0.5;
  -1: none has a margin; 0 otherwise).
- `result_gaps`: the relations in each template's gap and in the intersection, numbered.
- `result_views`: which report (its `created` stamp) and which VERSION of this code made
  them; a mismatch means build them again (store.views.ResultViews.ensure).

The clearest-first order (docs/oracles-and-metrics.md), the one `n` and the Errors tab start
with: errors asked again by their status (confirmed first, then mixed, undecided, not asked
again, not reproduced: oracles.confirmation.STATUSES), then metamorphic atomic errors first,
then sequential intra, sequential inter, ontological, and the other test kinds' oracles
(variant, factcheck, logic, annotation), then any other oracle by name; within one oracle,
errors whose answers are all valid (yes/no) first, then relations whose two labels differ
(compared without case, ASCII letters), then the shorter names (parent + child as shown, in
characters), then the relation's position and the verdict's id.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence

from kontest_tui.domain.margins import LOW_MARGIN
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import graph_from_dict
from kontest_tui.kg.names import NodeNames, normalise_name
from kontest_tui.kinds.registry import builtin_oracles
from kontest_tui.oracles.confirmation import STATUSES

from .records import dump_json
from .view_records import INTERSECTION

VERSION = 6  # of the tables' contents: a different one is built again

# The clearest-first order of errors by oracle: KONTEST's, then the other kinds' in registry
# order (a plugin kind's after every one of these).
CLEAREST_ORACLES = builtin_oracles()

TABLES = ("result_errors", "result_gaps", "result_edges", "result_nodes", "result_views")
_NOWHERE = 1 << 40  # the position of a relation that is not stored, the pre-order of a node
# that is not in the tree: after every other


def delete_result_views(conn: sqlite3.Connection, session_id: str) -> None:
    """Drop a session's derived tables (its report changed or went stale)."""
    for table in TABLES:
        conn.execute(f"DELETE FROM {table} WHERE session = ?", (session_id,))


def shadow_in_temp(conn: sqlite3.Connection) -> None:
    """Make connection-private TEMP copies of the derived tables (empty, their foreign keys
    left out) that every later read and write on `conn` sees instead of the file's: the
    views of a read-only database are built there, never in the file."""
    if conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = 'result_views'").fetchone():
        return
    for (sql,) in conn.execute(
        "SELECT sql FROM main.sqlite_master WHERE sql IS NOT NULL AND tbl_name IN"
        f" ({', '.join('?' for _ in TABLES)}) ORDER BY type DESC",  # tables, then indexes
        TABLES,
    ).fetchall():
        sql = _REFERENCES.sub("", sql)
        sql = re.sub(r"^CREATE TABLE ", "CREATE TEMP TABLE ", sql)
        sql = re.sub(r"^CREATE (UNIQUE )?INDEX ", r"CREATE \1INDEX temp.", sql)
        conn.execute(sql)


_REFERENCES = re.compile(r"\s+REFERENCES\s+\w+\s*\([^)]*\)(\s+ON\s+DELETE\s+CASCADE)?", re.I)


# Roll-up counts being summed, flat: ("r",) relations, ("e", oracle) errors, ("a", template,
# answer) atomic answers (a dict of small tuples adds up faster than nested Counters).
Counts = dict[tuple[str, ...], int]
_RELATION = ("r",)


def _add(total: Counts, other: Counts) -> None:
    for key, count in other.items():
        total[key] = total.get(key, 0) + count


def _counts_json(counts: Counts) -> str:
    errors: dict[str, int] = {}
    answers: dict[str, dict[str, int]] = {}
    for key, count in counts.items():
        if key[0] == "e":
            errors[key[1]] = count
        elif key[0] == "a":
            answers.setdefault(key[1], {})[key[2]] = count
    return dump_json({"relations": counts.get(_RELATION, 0), "errors": errors, "answers": answers})


def _read_graph(conn: sqlite3.Connection, session_id: str) -> KnowledgeGraph | None:
    row = conn.execute(
        "SELECT k.json FROM sessions s JOIN kg_snapshots k ON k.id = s.kg_snapshot WHERE s.id = ?",
        (session_id,),
    ).fetchone()
    data = json.loads(row[0]) if row is not None else None
    if not isinstance(data, dict) or not data.get("nodes"):
        return None
    return graph_from_dict(data, origin=f"session {session_id}")


# The session's atomic KONTEST answers, one row per (relation row, template): the first
# conversation's (as the oracles read them); `a` is NULL while asked and not answered, and
# for a failed turn or an answer cut before anything readable (in no gap, as in the report).
_ATOMIC = """
CREATE TEMP TABLE _atomic AS
SELECT c.relation_key AS rk, json_extract(c.turns, '$[0].template') AS t,
    MIN(c.position) AS first,
    CASE WHEN r.error IS NULL AND r.answer != 'cut' THEN r.answer END AS a
FROM conversations c LEFT JOIN responses r ON r.conversation_key = c.pk AND r.turn = 0
WHERE c.session = ? AND c.shape = 'atomic' AND c.test_kind = 'kontest'
    AND c.relation_key IS NOT NULL
GROUP BY c.relation_key, t
"""


def _gap_templates(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """The templates of the report's gap (its order), else those with atomic answers."""
    row = conn.execute(
        "SELECT report FROM session_reports WHERE session = ?", (session_id,)
    ).fetchone()
    if row is not None:
        gap = json.loads(row[0]).get("gap") or {}
        per_template = gap.get("per_template") if isinstance(gap, dict) else None
        if isinstance(per_template, dict) and per_template:
            return [str(template_id) for template_id in per_template]
    return [
        str(found[0])
        for found in conn.execute(
            "SELECT t FROM _atomic WHERE t IS NOT NULL GROUP BY t ORDER BY MIN(first)"
        )
    ]


def _own_counts(conn: sqlite3.Connection, session_id: str) -> dict[str, Counts]:
    """Per node, the relations ending at it, their atomic answers and error verdicts."""
    own: dict[str, Counts] = {}
    queries = (
        (
            "SELECT child, 'r', '', '', COUNT(*) FROM relations WHERE session = ? GROUP BY child",
            (session_id,),
        ),
        (
            "SELECT rel.child, 'a', a.t, a.a, COUNT(*) FROM _atomic a"
            " JOIN relations rel ON rel.pk = a.rk WHERE a.a IS NOT NULL AND a.t IS NOT NULL"
            " GROUP BY rel.child, a.t, a.a",
            (),
        ),
        (
            "SELECT rel.child, 'e', v.oracle, '', COUNT(*) FROM verdicts v"
            " JOIN relations rel ON rel.pk = v.relation_key"
            " WHERE v.session = ? AND v.error = 1 GROUP BY rel.child, v.oracle",
            (session_id,),
        ),
    )
    for sql, params in queries:
        for node, kind, first, second, count in conn.execute(sql, params):
            key = (
                _RELATION
                if kind == "r"
                else (kind, first)
                if kind == "e"
                else (kind, first, second)
            )
            own.setdefault(node, {})[key] = int(count)
    return own


def _walk(kg: KnowledgeGraph) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Every node reachable from a root, once, in tree pre-order, with its first path."""
    seen: set[str] = set()
    for root in kg.roots():
        stack: list[tuple[str, ...]] = [(root,)]
        while stack:
            path = stack.pop()
            node_id = path[-1]
            if node_id in seen:
                continue
            seen.add(node_id)
            yield node_id, path
            stack.extend((*path, child) for child in reversed(kg.children(node_id)))


def _subtrees(kg: KnowledgeGraph, order: list[str], own: Mapping[str, Counts]) -> dict[str, Counts]:
    """Each node's own counts plus its children's subtree counts (post-order, iterative)."""
    total: dict[str, Counts] = {}
    for root in order:
        if root in total:
            continue
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            node_id, done = stack.pop()
            if done:
                children = kg.children(node_id)
                if not children:  # a leaf: its own counts (read, never changed)
                    total[node_id] = own.get(node_id, {})
                    continue
                counts = dict(own.get(node_id, {}))
                for child in children:
                    below = total.get(child)
                    if below:
                        _add(counts, below)
                total[node_id] = counts
                continue
            if node_id in total:
                continue
            total[node_id] = {}  # on the stack: a cycle back to it adds nothing
            stack.append((node_id, True))
            stack.extend((child, False) for child in kg.children(node_id) if child not in total)
    return total


def write_result_views(conn: sqlite3.Connection, session_id: str) -> None:
    """Build the session's derived tables (module docstring) inside the caller's transaction,
    for the report stored now."""
    delete_result_views(conn, session_id)
    conn.execute("DROP TABLE IF EXISTS temp._atomic")
    conn.execute(_ATOMIC, (session_id,))
    conn.execute("CREATE INDEX temp._atomic_rk ON _atomic (rk)")
    try:
        templates = _gap_templates(conn, session_id)
        kg = _read_graph(conn, session_id)
        if kg is not None:
            _write_tree(conn, session_id, kg)
        _write_errors(conn, session_id)
        _write_gaps(conn, session_id, templates)
    finally:
        conn.execute("DROP TABLE IF EXISTS temp._atomic")
    report = conn.execute(
        "SELECT created FROM session_reports WHERE session = ?", (session_id,)
    ).fetchone()
    conn.execute(
        "INSERT INTO result_views (session, version, report_created, templates) VALUES"
        " (?, ?, ?, ?)",
        (session_id, VERSION, report[0] if report else None, dump_json(templates)),
    )


def search_lines(kg: KnowledgeGraph, node_id: str) -> str:
    """What find compares for a node: its label, then its aliases, then its id (last line),
    each normalised (kg.names.normalise_name; the id lower-cased), one per line."""
    node = kg.nodes.get(node_id)
    label = normalise_name(node.label) if node is not None else ""
    aliases = [normalise_name(alias) for alias in node.aliases] if node is not None else []
    return "\n".join([label, *(alias for alias in aliases if alias), node_id.casefold()])


def _write_tree(conn: sqlite3.Connection, session_id: str, kg: KnowledgeGraph) -> None:
    """The tree's nodes with their roll-ups, and its edges with the direct relations."""
    names = NodeNames(kg)
    own = _own_counts(conn, session_id)
    order = {node_id: way for node_id, way in _walk(kg)}
    subtree = _subtrees(kg, list(order), own)
    conn.executemany(
        "INSERT INTO result_nodes (session, node, name, label, preorder, way, children,"
        " own, subtree, search) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                session_id,
                node_id,
                names.names.get(node_id, node_id),
                names.plain.get(node_id, node_id),
                index,
                dump_json(list(way)),
                len(kg.children(node_id)),
                _counts_json(own.get(node_id, {})),
                # a leaf's subtree is itself: "" says so (most nodes are leaves)
                _counts_json(subtree[node_id]) if kg.children(node_id) else "",
                search_lines(kg, node_id),
            )
            for index, (node_id, way) in enumerate(order.items())
        ),
    )
    conn.execute("DROP TABLE IF EXISTS temp._edges")
    conn.execute("CREATE TEMP TABLE _edges (parent TEXT, position INTEGER, child TEXT)")
    conn.executemany(
        "INSERT INTO _edges VALUES (?, ?, ?)",
        (
            (parent, position, child)
            for parent in ["", *order]
            for position, child in enumerate(kg.roots() if parent == "" else kg.children(parent))
        ),
    )
    conn.execute("CREATE INDEX temp._edges_child ON _edges (child, parent)")
    # Each edge with the first relation parent -> child (by position) and its answers.
    conn.execute(
        "INSERT INTO result_edges (session, parent, position, child, relation, answers)"
        " SELECT ?1, e.parent, e.position, e.child, d.id,"
        " COALESCE((SELECT json_group_object(a.t, a.a) FROM _atomic a WHERE a.rk = d.pk), '{}')"
        " FROM _edges e LEFT JOIN (SELECT rel.parent, rel.child, rel.id, rel.pk,"
        " MIN(rel.position) FROM relations rel JOIN _edges x ON x.child = rel.child"
        " AND x.parent = rel.parent WHERE rel.session = ?1 GROUP BY rel.parent, rel.child) d"
        " ON d.parent = e.parent AND d.child = e.child",
        (session_id,),
    )
    conn.execute("DROP TABLE temp._edges")


_ORACLE_GROUP = (
    "CASE v.oracle "
    + " ".join(f"WHEN '{oracle}' THEN {index}" for index, oracle in enumerate(CLEAREST_ORACLES))
    + f" ELSE {len(CLEAREST_ORACLES)} END"
)
_STATUS_GROUP = (
    "CASE COALESCE(cf.status, '') "
    + " ".join(f"WHEN '{status}' THEN {index}" for index, status in enumerate(STATUSES))
    + f" ELSE {len(STATUSES)} END"
)
# 1: weak, every answer the error compares has a margin, each within LOW_MARGIN of 0.5
# (oracles.margins.is_weak); -1: none of them has a margin; 0: otherwise.
_WEAK = (
    "(SELECT CASE WHEN COUNT(*) > 0 AND COUNT(*) = SUM(r.p_yes IS NOT NULL"
    f" AND abs(r.p_yes - 0.5) < {LOW_MARGIN!r}) THEN 1"
    " WHEN SUM(r.p_yes IS NOT NULL) > 0 THEN 0 ELSE -1 END FROM json_each(v.refs) j"
    " LEFT JOIN conversations c ON c.session = v.session"
    " AND c.id = json_extract(j.value, '$[0]')"
    " LEFT JOIN responses r ON r.conversation_key = c.pk"
    " AND r.turn = json_extract(j.value, '$[1]') AND r.error IS NULL)"
)
# The clearest-first order's keys (module docstring) and the graph order's, as SQL columns.
_CLEAREST_KEYS = (
    f"{_STATUS_GROUP} AS c0, {_ORACLE_GROUP} AS c1,"
    " trim(replace(replace(v.answers, '\"yes\"', ''), '\"no\"', ''), '[],') != '' AS c2,"
    " lower(COALESCE(pn.label, rel.parent_label, ''))"
    " = lower(COALESCE(cn.label, rel.child_label, '')) AS c3,"
    " length(COALESCE(pn.name, rel.parent_label, v.relation))"
    " + length(COALESCE(cn.name, rel.child_label, '')) AS c4,"
    f" COALESCE(rel.position, {_NOWHERE}) AS c5"
)
_GRAPH_KEYS = f"COALESCE(cn.preorder, {_NOWHERE}) AS g1"
# The relation's name as the Errors tab shows it (parent, then child), without case.
_NAME_KEY = (
    "lower(COALESCE(pn.name, rel.parent_label, v.relation)) || char(1)"
    " || lower(COALESCE(cn.name, rel.child_label, '')) AS n1"
)


def _write_errors(conn: sqlite3.Connection, session_id: str) -> None:
    """Every error verdict with its dense rank in each order, overall and per oracle (the
    sort keys computed once per error, then ranked four times)."""
    conn.execute(
        "INSERT INTO result_errors (session, verdict, oracle, relation, node, parent, template,"
        " clear, status, weak, clear_rank, tree_rank, oracle_clear_rank, oracle_tree_rank,"
        " name_rank)"
        " WITH keyed AS MATERIALIZED (SELECT v.id, v.oracle, v.relation,"
        " COALESCE(rel.child, '') AS node, COALESCE(rel.parent, '') AS parent,"
        " COALESCE(v.template, '') AS template, COALESCE(cf.status, '') AS status, "
        + _WEAK
        + " AS weak, "
        + _CLEAREST_KEYS
        + ", "
        + _GRAPH_KEYS
        + ", "
        + _NAME_KEY
        + " FROM verdicts v LEFT JOIN relations rel ON rel.pk = v.relation_key"
        " LEFT JOIN result_nodes pn ON pn.session = ?1 AND pn.node = rel.parent"
        " LEFT JOIN result_nodes cn ON cn.session = ?1 AND cn.node = rel.child"
        " LEFT JOIN confirmations cf ON cf.session = ?1 AND cf.oracle = v.oracle"
        " AND cf.refs = v.refs"
        " WHERE v.session = ?1 AND v.error = 1)"
        " SELECT ?1, id, oracle, relation, node, parent, template, NOT c2, status, weak,"
        " ROW_NUMBER() OVER (ORDER BY c0, c1, oracle, c2, c3, c4, c5, id) - 1,"
        " ROW_NUMBER() OVER (ORDER BY g1, c5, id) - 1,"
        " ROW_NUMBER() OVER (PARTITION BY oracle ORDER BY c0, c1, c2, c3, c4, c5, id) - 1,"
        " ROW_NUMBER() OVER (PARTITION BY oracle ORDER BY g1, c5, id) - 1,"
        " ROW_NUMBER() OVER (ORDER BY n1, c0, c1, oracle, c2, c3, c4, c5, id) - 1"
        " FROM keyed",
        (session_id,),
    )


def rewrite_errors(conn: sqlite3.Connection, session_id: str) -> None:
    """Rank a session's errors again (their confirmations changed), inside the caller's
    transaction; nothing when its derived tables are not built (they are ranked when they
    are)."""
    if conn.execute("SELECT 1 FROM result_views WHERE session = ?", (session_id,)).fetchone():
        conn.execute("DELETE FROM result_errors WHERE session = ?", (session_id,))
        _write_errors(conn, session_id)


def _write_gaps(conn: sqlite3.Connection, session_id: str, templates: Sequence[str]) -> None:
    """Each template's gap (answered, not yes) and the intersection (asked under one of the
    templates at least, every one answered, none yes), in relation order (oracles.coverage)."""
    marks = ", ".join("?" for _ in templates)
    if not templates:
        return
    conn.execute(
        "INSERT INTO result_gaps (session, grp, position, relation)"
        " SELECT ?, a.t, ROW_NUMBER() OVER (PARTITION BY a.t ORDER BY rel.position) - 1, rel.id"
        " FROM _atomic a JOIN relations rel ON rel.pk = a.rk"
        f" WHERE a.t IN ({marks}) AND a.a IS NOT NULL AND a.a != 'yes'",
        (session_id, *templates),
    )
    conn.execute(
        "INSERT INTO result_gaps (session, grp, position, relation)"
        " SELECT ?, ?, ROW_NUMBER() OVER (ORDER BY rel.position) - 1, rel.id"
        " FROM relations rel JOIN (SELECT rk FROM _atomic"
        f" WHERE t IN ({marks}) GROUP BY rk"
        " HAVING SUM(a IS NULL) = 0 AND SUM(a = 'yes') = 0) g ON g.rk = rel.pk",
        (session_id, INTERSECTION, *templates),
    )
