"""Graph-level checks shared by every way a KG comes in (JSON file, CSV import, Wikidata).

Each check raises one `GraphError` whose message names the file (`origin`) and the record
(an edge number in a JSON file, a line number in a CSV file), e.g.
`kg.json: edge 12 (Q1 -> Q99): child Q99 is not a node`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence, Set
from typing import overload

from kontest_tui.errors import GraphError

from .graph import Edge, KnowledgeGraph


class RecordNames(Sequence[str]):
    """`edge 1`, `edge 2`, ...: the names of `count` records, each made only when a message
    needs it (a large KG would otherwise build one string per edge for nothing)."""

    def __init__(self, kind: str, count: int) -> None:
        self.kind = kind
        self.size = count

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.size))]
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError(index)
        return f"{self.kind} {index + 1}"


def describe_edge(where: str, edge: Edge) -> str:
    """`edge 12 (Q1 -> Q99)`: how a message names one edge record."""
    return f"{where} ({edge.parent} -> {edge.child})"


def check_edges(
    origin: str, node_ids: Collection[str], edges: Sequence[Edge], where: Sequence[str]
) -> None:
    """Reject empty graphs, edges to unknown nodes, self-loops, duplicate edges and cycles.

    `where[i]` names edge i's record for messages ("edge 3", "line 7").
    """
    known = node_ids if isinstance(node_ids, Set) else set(node_ids)
    if not known:
        raise GraphError(f"{origin}: the graph has no nodes")
    if not edges:
        raise GraphError(f"{origin}: the graph has no edges (at least one parent -> child needed)")
    first_seen: dict[tuple[str, str], int] = {}
    for index, edge in enumerate(edges):
        parent, child = edge.parent, edge.child
        key = (parent, child)
        if parent not in known or child not in known or parent == child or key in first_seen:
            _reject_edge(origin, known, edge, where[index], first_seen, where)
        first_seen[key] = index
    check_acyclic(origin, edges, where, first_seen)


def _reject_edge(
    origin: str,
    known: Collection[str],
    edge: Edge,
    name: str,
    first_seen: dict[tuple[str, str], int],
    where: Sequence[str],
) -> None:
    """Raise the `GraphError` for an edge `check_edges` found wrong (first failed check)."""
    record = describe_edge(name, edge)
    if edge.parent not in known:
        raise GraphError(f"{origin}: {record}: parent {edge.parent} is not a node")
    if edge.child not in known:
        raise GraphError(f"{origin}: {record}: child {edge.child} is not a node")
    if edge.parent == edge.child:
        raise GraphError(f"{origin}: {record}: self-loop (a node cannot contain itself)")
    raise GraphError(
        f"{origin}: {record}: duplicate of {where[first_seen[(edge.parent, edge.child)]]}"
    )


def find_cycle(edges: Sequence[Edge]) -> list[str] | None:
    """A cycle as its nodes [n0, n1, ..., n0] (first one found, edges in file order), or None.

    Iterative depth-first search, so deep graphs cannot overflow the stack.
    """
    children: dict[str, list[str]] = {}
    for edge in edges:
        children.setdefault(edge.parent, []).append(edge.child)
    done: set[str] = set()
    for start in children:
        if start in done:
            continue
        path = [start]
        on_path = {start}
        iterators = [iter(children.get(start, ()))]
        while iterators:
            child = next(iterators[-1], None)
            if child is None:
                iterators.pop()
                node = path.pop()
                on_path.discard(node)
                done.add(node)
            elif child in on_path:
                return [*path[path.index(child) :], child]
            elif child not in done:
                path.append(child)
                on_path.add(child)
                iterators.append(iter(children.get(child, ())))
    return None


def check_acyclic(
    origin: str,
    edges: Sequence[Edge],
    where: Sequence[str],
    index_of: dict[tuple[str, str], int] | None = None,
) -> None:
    """Reject a cycle (paths must never revisit a node), naming a node on it and its closing edge."""
    cycle = find_cycle(edges)
    if cycle is None:
        return
    if index_of is None:
        index_of = {}
        for index, edge in enumerate(edges):
            index_of.setdefault((edge.parent, edge.child), index)
    closing_index = index_of[(cycle[-2], cycle[-1])]
    record = describe_edge(where[closing_index], edges[closing_index])
    chain = " -> ".join(cycle)
    raise GraphError(f"{origin}: cycle through node {cycle[0]} ({chain}); {record} closes it")


def check_graph(kg: KnowledgeGraph, origin: str | None = None) -> None:
    """Run the graph-level checks on a built `KnowledgeGraph` (e.g. before saving one)."""
    check_edges(origin or kg.name, kg.nodes.keys(), kg.edges, RecordNames("edge", len(kg.edges)))
