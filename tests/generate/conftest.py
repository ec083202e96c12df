"""Hand-built knowledge graphs for the generate tests: a node is its chain of ancestor labels."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node

BuildKg = Callable[..., KnowledgeGraph]


def build_kg_from_paths(
    paths: Sequence[Sequence[str]],
    domain: str = "places",
    types: Sequence[str] | None = None,
    name: str = "test",
) -> KnowledgeGraph:
    """A KG whose node ids are the label chains ("Ireland/Ulster"), typed by depth if `types`."""
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    seen_edges: set[tuple[str, str]] = set()
    for labels in paths:
        parent_id = ""
        for depth, label in enumerate(labels):
            node_id = f"{parent_id}/{label}" if parent_id else label
            if node_id not in nodes:
                node_type = types[depth] if types else ""
                nodes[node_id] = Node(id=node_id, label=label, type=node_type)
            if parent_id and (parent_id, node_id) not in seen_edges:
                seen_edges.add((parent_id, node_id))
                edges.append(Edge(parent_id, node_id))
            parent_id = node_id
    return KnowledgeGraph(name=name, domain=domain, nodes=nodes, edges=edges)


@pytest.fixture
def build_kg() -> BuildKg:
    return build_kg_from_paths


@pytest.fixture
def kinawley_kg() -> KnowledgeGraph:
    """The KONTEST paper's running example: Ireland -> Ulster -> Kinawley."""
    return build_kg_from_paths([["Ireland", "Ulster", "Kinawley"]])
