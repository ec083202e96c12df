"""The explorer's derived tables of one session, written with its report (store.views reads them).

From the stored KG snapshot, relations, atomic answers and error verdicts (never by
evaluating the session), in the transaction that stores the report:

- `result_nodes`: each KG node reachable from a root, with its display name, its first tree
  path (`way`), its pre-order, and its roll-ups: relations ending at it (`own`) and at it or
  below it (`subtree`; "" for a leaf, whose subtree is its own), each as relations, errors
  by oracle and atomic answers per template.
  A node under two parents counts under both (the tree shows it twice).
- `result_edges`: the tree's edges in KG order, each with the relation parent -> child and
  its atomic answer per template.
- `result_errors`: every error verdict with its dense rank in each order (clearest first,
  graph order), overall and within its oracle, so a page or the next error is one lookup.
- `result_gaps`: the relations in each template's gap and in the intersection, numbered.
- `result_views`: which report (its `created` stamp) and which VERSION of this code made
  them; a mismatch means build them again (store.views.ResultViews.ensure).

The clearest-first order (issue 24), the one `n` and the Errors tab start with: metamorphic
atomic errors first, then sequential intra, sequential inter, ontological, and the other test
kinds' oracles (variant, factcheck, logic, annotation); within one oracle, errors whose
answers are all valid (yes/no) first, then relations whose two labels differ, then the shorter
labels (parent + child, in characters), then the relation's position and the verdict's id.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import graph_from_dict
from kontest_tui.kg.names import NodeNames

from .records import dump_json
from .view_records import INTERSECTION

VERSION = 2  # of the tables' contents: a different one is built again

CLEAREST_ORACLES = (
    "atomic",
    "sequential_intra",
    "sequential_inter",
    "ontological",
    "variant",
    "factcheck",
    "logic",
    "annotation",
)
_ORACLE_GROUP = {oracle: index for index, oracle in enumerate(CLEAREST_ORACLES)}

TABLES = ("result_errors", "result_gaps", "result_edges", "result_nodes", "result_views")


def delete_result_views(conn: sqlite3.Connection, session_id: str) -> None:
    """Drop a session's derived tables (its report changed or went stale)."""
    for table in TABLES:
        conn.execute(f"DELETE FROM {table} WHERE session = ?", (session_id,))


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


@dataclass(slots=True)
class _Relation:
    pk: int
    id: str
    parent: str
    child: str
    position: int
    parent_label: str
    child_label: str


def _read_graph(conn: sqlite3.Connection, session_id: str) -> KnowledgeGraph | None:
    row = conn.execute(
        "SELECT k.json FROM sessions s JOIN kg_snapshots k ON k.id = s.kg_snapshot WHERE s.id = ?",
        (session_id,),
    ).fetchone()
    data = json.loads(row[0]) if row is not None else None
    if not isinstance(data, dict) or not data.get("nodes"):
        return None
    return graph_from_dict(data, origin=f"session {session_id}")


def _read_relations(conn: sqlite3.Connection, session_id: str) -> list[_Relation]:
    return [
        _Relation(*row)
        for row in conn.execute(
            "SELECT pk, id, parent, child, position, parent_label, child_label FROM relations"
            " WHERE session = ? ORDER BY position",
            (session_id,),
        )
    ]


def read_atomic_answers(
    conn: sqlite3.Connection, session_id: str
) -> dict[str, dict[str, str | None]]:
    """relation id -> template -> atomic KONTEST answer (None: asked, not answered), the
    first atomic conversation per (relation, template) counting, as the oracles read them."""
    found: dict[str, dict[str, str | None]] = {}
    for relation_id, template_id, answer, error in conn.execute(
        "SELECT c.relation, json_extract(c.turns, '$[0].template'), r.answer, r.error"
        " FROM conversations c LEFT JOIN responses r ON r.conversation_key = c.pk AND r.turn = 0"
        " WHERE c.session = ? AND c.shape = 'atomic' AND c.test_kind = 'kontest'"
        " ORDER BY c.position",
        (session_id,),
    ):
        if template_id is None:
            continue
        per = found.setdefault(relation_id, {})
        if template_id not in per:
            per[template_id] = answer if error is None else None
    return found


def _gap_templates(
    conn: sqlite3.Connection, session_id: str, atomic: Mapping[str, Mapping[str, str | None]]
) -> list[str]:
    """The templates of the report's gap (its order), else those with atomic answers."""
    row = conn.execute(
        "SELECT report FROM session_reports WHERE session = ?", (session_id,)
    ).fetchone()
    if row is not None:
        gap = json.loads(row[0]).get("gap") or {}
        per_template = gap.get("per_template") if isinstance(gap, dict) else None
        if isinstance(per_template, dict) and per_template:
            return [str(template_id) for template_id in per_template]
    return list(dict.fromkeys(t for per in atomic.values() for t in per))


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


def _clear_key(
    oracle: str, answers_json: str, parent_label: str, child_label: str
) -> tuple[int, int, int, int]:
    """The clearest-first key of an error (module docstring), before position and id;
    `answers_json` is the verdict row's answers column (a JSON list of answer words)."""
    group = _ORACLE_GROUP.get(oracle, len(CLEAREST_ORACLES))
    # Valid when nothing but "yes" and "no" is listed.
    valid = 0 if not answers_json.replace('"yes"', "").replace('"no"', "").strip("[],") else 1
    same = 1 if parent_label.casefold() == child_label.casefold() else 0
    return group, valid, same, len(parent_label) + len(child_label)


def write_result_views(conn: sqlite3.Connection, session_id: str) -> None:
    """Build the session's derived tables (module docstring) inside the caller's transaction,
    for the report stored now."""
    delete_result_views(conn, session_id)
    kg = _read_graph(conn, session_id)
    names = NodeNames(kg) if kg is not None else None
    relations = _read_relations(conn, session_id)
    by_id = {relation.id: relation for relation in relations}
    atomic = read_atomic_answers(conn, session_id)
    templates = _gap_templates(conn, session_id, atomic)

    shown = names.names if names is not None else {}

    def name(node_id: str, fallback: str) -> str:
        return shown.get(node_id, fallback)

    own: dict[str, Counts] = {}
    direct: dict[tuple[str, str], _Relation] = {}
    for relation in relations:
        counts = own.get(relation.child)
        if counts is None:
            counts = own[relation.child] = {}
        counts[_RELATION] = counts.get(_RELATION, 0) + 1
        for template_id, answer in atomic.get(relation.id, {}).items():
            if answer is not None:
                key = ("a", template_id, answer)
                counts[key] = counts.get(key, 0) + 1
        direct.setdefault((relation.parent, relation.child), relation)
    errors = conn.execute(
        "SELECT id, oracle, relation, answers FROM verdicts WHERE session = ? AND error = 1",
        (session_id,),
    ).fetchall()
    for _verdict, oracle, relation_id, _answers in errors:
        wrong = by_id.get(relation_id)
        if wrong is not None:
            counts = own.setdefault(wrong.child, {})
            counts["e", oracle] = counts.get(("e", oracle), 0) + 1

    preorder: dict[str, int] = {}
    ways: dict[str, tuple[str, ...]] = {}
    if kg is not None:
        for index, (node_id, way) in enumerate(_walk(kg)):
            preorder[node_id] = index
            ways[node_id] = way
        subtree = _subtrees(kg, list(preorder), own)
        conn.executemany(
            "INSERT INTO result_nodes (session, node, name, label, preorder, way, children,"
            " own, subtree) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    session_id,
                    node_id,
                    name(node_id, node_id),
                    names.plain.get(node_id, node_id) if names is not None else node_id,
                    index,
                    dump_json(list(ways[node_id])),
                    len(kg.children(node_id)),
                    _counts_json(own.get(node_id, {})),
                    # a leaf's subtree is itself: "" says so (most nodes are leaves)
                    _counts_json(subtree[node_id]) if kg.children(node_id) else "",
                )
                for node_id, index in preorder.items()
            ),
        )
        edges: list[tuple[object, ...]] = []
        for parent in ["", *preorder]:
            children = kg.roots() if parent == "" else kg.children(parent)
            for position, child in enumerate(children):
                edge = direct.get((parent, child))
                edges.append(
                    (
                        session_id,
                        parent,
                        position,
                        child,
                        edge.id if edge is not None else None,
                        dump_json(atomic.get(edge.id, {})) if edge is not None else "{}",
                    )
                )
        conn.executemany(
            "INSERT INTO result_edges (session, parent, position, child, relation, answers)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            edges,
        )

    _write_errors(conn, session_id, errors, by_id, preorder, name)
    _write_gaps(conn, session_id, relations, atomic, templates)
    report = conn.execute(
        "SELECT created FROM session_reports WHERE session = ?", (session_id,)
    ).fetchone()
    conn.execute(
        "INSERT INTO result_views (session, version, report_created, templates) VALUES"
        " (?, ?, ?, ?)",
        (session_id, VERSION, report[0] if report else None, dump_json(templates)),
    )


def _write_errors(
    conn: sqlite3.Connection,
    session_id: str,
    errors: list[tuple[int, str, str, str]],
    by_id: Mapping[str, _Relation],
    preorder: Mapping[str, int],
    name: Callable[[str, str], str],
) -> None:
    """Every error verdict with its dense rank in each order, overall and per oracle."""
    unplaced = len(preorder)
    keyed = []
    for verdict_id, oracle, relation_id, answers_json in errors:
        relation = by_id.get(relation_id)
        parent = name(relation.parent, relation.parent_label) if relation else relation_id
        child = name(relation.child, relation.child_label) if relation else ""
        position = relation.position if relation else 1 << 40
        clear = (*_clear_key(oracle, answers_json, parent, child), position, verdict_id)
        tree = (
            preorder.get(relation.child, unplaced) if relation else unplaced,
            position,
            verdict_id,
        )
        keyed.append(
            (verdict_id, oracle, relation_id, relation.child if relation else "", clear, tree)
        )
    ranks: dict[int, list[int]] = {verdict_id: [0, 0, 0, 0] for verdict_id, *_ in keyed}
    for slot, key in ((0, 4), (1, 5)):
        per_oracle: Counter[str] = Counter()
        for rank, entry in enumerate(sorted(keyed, key=lambda entry: entry[key])):
            ranks[entry[0]][slot] = rank
            ranks[entry[0]][slot + 2] = per_oracle[entry[1]]
            per_oracle[entry[1]] += 1
    conn.executemany(
        "INSERT INTO result_errors (session, verdict, oracle, relation, node, clear_rank,"
        " tree_rank, oracle_clear_rank, oracle_tree_rank) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (session_id, verdict_id, oracle, relation_id, node, *ranks[verdict_id])
            for verdict_id, oracle, relation_id, node, _clear, _tree in keyed
        ),
    )


def _write_gaps(
    conn: sqlite3.Connection,
    session_id: str,
    relations: list[_Relation],
    atomic: Mapping[str, Mapping[str, str | None]],
    templates: list[str],
) -> None:
    """Each template's gap (answered, not yes) and the intersection (asked under some
    template, every one answered, none yes), in relation order (oracles.coverage)."""
    positions: Counter[str] = Counter()
    rows: list[tuple[str, str, int, str]] = []
    for relation in relations:
        answers = atomic.get(relation.id, {})
        for template_id in templates:
            answer = answers.get(template_id)
            if answer is not None and answer != "yes":
                rows.append((session_id, template_id, positions[template_id], relation.id))
                positions[template_id] += 1
        asked = [answers[t] for t in templates if t in answers]
        if asked and all(answer is not None and answer != "yes" for answer in asked):
            rows.append((session_id, INTERSECTION, positions[INTERSECTION], relation.id))
            positions[INTERSECTION] += 1
    conn.executemany(
        "INSERT INTO result_gaps (session, grp, position, relation) VALUES (?, ?, ?, ?)", rows
    )
