"""A small hand-made places KG for the probe tests (types: country, region, district, locality)."""

from __future__ import annotations

import pytest

from kontest_tui.domain.records import Relation
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node

PATHS = [
    ["ie", "ul", "cv", "kw"],
    ["ie", "cn", "mo", "cb"],
    ["no", "nl", "sf", "rg"],
    ["lu", "cp", "gc", "gv"],
]
LABELS = {
    "ie": "Ireland",
    "ul": "Ulster",
    "cv": "County Cavan",
    "kw": "Kinawley",
    "cn": "Connacht",
    "mo": "County Mayo",
    "cb": "Castlebar",
    "no": "Norway",
    "nl": "Nordland",
    "sf": "Sørfold",
    "rg": "Rago National Park",
    "lu": "Luxembourg",
    "cp": "Canton of Capellen",
    "gc": "Garnich",
    "gv": "Garnich",
}
TYPES = ("country", "region", "district", "locality")


def make_places_kg() -> KnowledgeGraph:
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    for path in PATHS:
        for level, node_id in enumerate(path):
            aliases = ("Éire",) if node_id == "ie" else ()
            nodes.setdefault(node_id, Node(node_id, LABELS[node_id], aliases, TYPES[level]))
        for parent, child in zip(path, path[1:], strict=False):
            if Edge(parent, child, "contains") not in edges:
                edges.append(Edge(parent, child, "contains"))
    return KnowledgeGraph("toy", "places", nodes, edges)


def relations_of(paths: list[list[str]], relation_type: str = "contains") -> list[Relation]:
    """Every ancestor -> descendant pair on the paths, deduplicated (Algorithm 1, by hand)."""
    seen: dict[str, Relation] = {}
    for path in paths:
        for i in range(len(path)):
            for j in range(i + 1, len(path)):
                rid = f"{path[i]}>{path[j]}"
                seen.setdefault(
                    rid, Relation(rid, path[i], path[j], relation_type, tuple(path[i : j + 1]))
                )
    return list(seen.values())


@pytest.fixture
def places_kg() -> KnowledgeGraph:
    return make_places_kg()


@pytest.fixture
def places_relations() -> list[Relation]:
    return relations_of(PATHS)


@pytest.fixture
def kinawley_relations() -> list[Relation]:
    """The six relations of the path Ireland -> Ulster -> County Cavan -> Kinawley."""
    return relations_of([["ie", "ul", "cv", "kw"]])
