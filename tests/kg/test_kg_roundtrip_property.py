"""Property: any valid graph survives save -> load unchanged, and saving twice gives the same bytes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import dumps_graph, graph_from_dict, load_graph, save_graph

text = st.text(min_size=1, max_size=12).filter(lambda value: value.strip() != "")
domains = st.just("") | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,5}", fullmatch=True)


@st.composite
def graphs(draw: st.DrawFn) -> KnowledgeGraph:
    ids = draw(st.lists(text, min_size=2, max_size=8, unique=True))
    nodes = {
        node_id: Node(
            node_id,
            draw(text),
            tuple(draw(st.lists(st.text(max_size=6), max_size=2))),
            draw(st.text(max_size=6)),
        )
        for node_id in ids
    }
    # edges only from earlier to later ids: acyclic by construction, no self-loops
    pairs = [(ids[i], ids[j]) for i in range(len(ids)) for j in range(i + 1, len(ids))]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=10, unique=True))
    edges = [Edge(parent, child, draw(st.text(max_size=6))) for parent, child in chosen]
    return KnowledgeGraph(
        draw(text), draw(domains), nodes, edges, draw(st.text(max_size=10)), ""
    )


@settings(max_examples=40, deadline=None)
@given(graphs())
def test_round_trip(kg: KnowledgeGraph) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = save_graph(kg, Path(folder) / "kg.json")
        loaded = load_graph(path)
        assert loaded.nodes == kg.nodes
        assert list(loaded.nodes) == list(kg.nodes)
        assert loaded.edges == kg.edges
        assert (loaded.name, loaded.domain, loaded.source) == (kg.name, kg.domain, kg.source)
        assert dumps_graph(loaded) == path.read_text(encoding="utf-8")
        assert graph_from_dict(json.loads(dumps_graph(kg))).edges == kg.edges
