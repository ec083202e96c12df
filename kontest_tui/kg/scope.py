"""Scope: a KG cut down to the subtrees of chosen entities, each down to a depth below it.

`kontest generate|run|kg info --entity NAME_OR_ID --depth N`, the explorer's entity
choice and the session page call `apply_scope` (the one scope rule), which calls
`scope_graph`. An entity is named by its id or by its exact label (a
case-insensitive match when no label matches exactly); a name that is not in the KG, or a
label that several nodes share, is one `ScopeError` naming the closest matches or the ids.

The depth is counted from each chosen entity: a node is kept when it is at most `depth`
edges below one of them (the shortest way down), and an edge is kept when its parent is less
than `depth` edges below one. The chosen entities become the roots of the scoped graph,
except one chosen inside another's subtree, which stays under it (its own subtree is still
kept to `depth` below it). Paths and relations (Algorithm 1) then run on the scoped graph
with no further depth bound.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from rapidfuzz import fuzz, process

from kontest_tui.errors import GraphError
from kontest_tui.kg.graph import Edge, KnowledgeGraph

CLOSEST_SHOWN = 5


class ScopeError(GraphError):
    """An entity to scope by is not in the KG, or its label names several nodes."""

    title = "Scope"


def parents_of(kg: KnowledgeGraph, node_id: str) -> list[str]:
    """The parents of a node, in edge order."""
    return [edge.parent for edge in kg.edges if edge.child == node_id]


def describe_node(kg: KnowledgeGraph, node_id: str) -> str:
    """`Garnich (Q1, in Capellen)`: the label, the id and the first parent's label."""
    parents = parents_of(kg, node_id)
    where = f", in {kg.label(parents[0])}" if parents else ""
    return f"{kg.label(node_id)} ({node_id}{where})"


def closest_names(kg: KnowledgeGraph, name: str, limit: int = CLOSEST_SHOWN) -> list[str]:
    """The labels (and ids) most like `name`, best first (rapidfuzz WRatio)."""
    choices = {node.id: node.label for node in kg.nodes.values()}
    found = process.extract(name, choices, scorer=fuzz.WRatio, limit=limit)
    return [f"{label} ({node_id})" for label, _score, node_id in found]


def resolve_entity(kg: KnowledgeGraph, name: str) -> str:
    """The id of the node `name` names: an id, an exact label, or a case-insensitive label."""
    text = name.strip()
    if not text:
        raise ScopeError("--entity: empty entity name")
    if text in kg.nodes:
        return text
    for matches in (
        [node.id for node in kg.nodes.values() if node.label == text],
        [node.id for node in kg.nodes.values() if node.label.casefold() == text.casefold()],
    ):
        if len(matches) == 1:
            return matches[0]
        if matches:
            shown = "; ".join(describe_node(kg, node_id) for node_id in matches[:CLOSEST_SHOWN])
            raise ScopeError(
                f"entity {text!r} names {len(matches)} nodes of {kg.name}: {shown}; "
                "give the id instead"
            )
    closest = ", ".join(closest_names(kg, text))
    raise ScopeError(
        f"entity {text!r} is not in {kg.name}" + (f"; closest: {closest}" if closest else "")
    )


def apply_scope(
    kg: KnowledgeGraph, entities: Sequence[str], depth: int | None
) -> tuple[KnowledgeGraph, int | None]:
    """The scope rule: the KG cut to the subtrees of `entities`, each `depth` edges below it,
    and the depth left for paths and relations (None once the scope used it up). No
    entities: the whole KG, its paths `depth` edges long."""
    if not entities:
        return kg, depth
    return scope_graph(kg, entities, depth), None


def scope_graph(
    kg: KnowledgeGraph, entities: Sequence[str], depth: int | None = None
) -> KnowledgeGraph:
    """The subtrees of `entities` (ids or labels), each down to `depth` edges below it.

    No entities: `kg` itself. `depth` None keeps each whole subtree.
    """
    if not entities:
        return kg
    if depth is not None and depth < 1:
        raise ScopeError(f"depth must be at least 1, got {depth}")
    chosen = list(dict.fromkeys(resolve_entity(kg, name) for name in entities))
    below: dict[str, int] = {node_id: 0 for node_id in chosen}  # shortest distance down
    queue = deque(chosen)
    while queue:
        node_id = queue.popleft()
        if depth is not None and below[node_id] >= depth:
            continue
        for child in kg.children(node_id):
            if child not in below:
                below[child] = below[node_id] + 1
                queue.append(child)
    edges = [
        edge
        for edge in kg.edges
        if edge.parent in below
        and edge.child in below
        and (depth is None or below[edge.parent] < depth)
    ]
    nodes = {node_id: node for node_id, node in kg.nodes.items() if node_id in below}
    return KnowledgeGraph(
        name=kg.name,
        domain=kg.domain,
        nodes=nodes,
        edges=[Edge(edge.parent, edge.child, edge.relation) for edge in edges],
        source=kg.source,
        built=kg.built,
    )
