"""Graph-level checks shared by every way a KG comes in (JSON file, CSV import, Wikidata).

Each check raises one `GraphError` whose message names the file (`origin`) and the record
(an edge number in a JSON file, a line number in a CSV file), e.g.
`kg.json: edge 12 (Q1 -> Q99): child Q99 is not a node`.
"""

from __future__ import annotations

from collections.abc import Sequence

from kontest_tui.errors import GraphError

from .graph import Edge, KnowledgeGraph


def describe_edge(where: str, edge: Edge) -> str:
    """`edge 12 (Q1 -> Q99)`: how a message names one edge record."""
    return f"{where} ({edge.parent} -> {edge.child})"


def check_edges(
    origin: str, node_ids: Sequence[str] | set[str], edges: Sequence[Edge], where: Sequence[str]
) -> None:
    """Reject empty graphs, edges to unknown nodes, self-loops, duplicate edges and cycles.

    `where[i]` names edge i's record for messages ("edge 3", "line 7").
    """
    known = set(node_ids)
    if not known:
        raise GraphError(f"{origin}: the graph has no nodes")
    if not edges:
        raise GraphError(f"{origin}: the graph has no edges (at least one parent -> child needed)")
    first_seen: dict[tuple[str, str], int] = {}
    for index, edge in enumerate(edges):
        record = describe_edge(where[index], edge)
        if edge.parent not in known:
            raise GraphError(f"{origin}: {record}: parent {edge.parent} is not a node")
        if edge.child not in known:
            raise GraphError(f"{origin}: {record}: child {edge.child} is not a node")
        if edge.parent == edge.child:
            raise GraphError(f"{origin}: {record}: self-loop (a node cannot contain itself)")
        key = (edge.parent, edge.child)
        if key in first_seen:
            raise GraphError(f"{origin}: {record}: duplicate of {where[first_seen[key]]}")
        first_seen[key] = index
    check_acyclic(origin, edges, where, first_seen)


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
    where = [f"edge {index + 1}" for index in range(len(kg.edges))]
    check_edges(origin or kg.name, list(kg.nodes), kg.edges, where)
