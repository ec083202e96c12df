"""Graph-level checks shared by every way a KG comes in (JSON file, CSV import, Wikidata).

Each check raises one `GraphError` whose message names the file (`origin`) and the record
(an edge number in a JSON file, a line number in a CSV file), e.g.
`kg.json: edge 12 (Q1 -> Q99): child Q99 is not a node`.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

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


def check_acyclic(
    origin: str,
    edges: Sequence[Edge],
    where: Sequence[str],
    index_of: dict[tuple[str, str], int] | None = None,
) -> None:
    """Reject a cycle (paths must never revisit a node), naming a node on it and its closing edge."""
    graph = nx.DiGraph()
    graph.add_edges_from((edge.parent, edge.child) for edge in edges)
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return
    if index_of is None:
        index_of = {}
        for index, edge in enumerate(edges):
            index_of.setdefault((edge.parent, edge.child), index)
    start = cycle[0][0]
    chain = " -> ".join([start, *(child for _, child in cycle)])
    closing = cycle[-1]
    closing_index = index_of[(closing[0], closing[1])]
    record = describe_edge(where[closing_index], edges[closing_index])
    raise GraphError(f"{origin}: cycle through node {start} ({chain}); {record} closes it")


def check_graph(kg: KnowledgeGraph, origin: str | None = None) -> None:
    """Run the graph-level checks on a built `KnowledgeGraph` (e.g. before saving one)."""
    where = [f"edge {index + 1}" for index in range(len(kg.edges))]
    check_edges(origin or kg.name, list(kg.nodes), kg.edges, where)
