"""Property: any valid graph survives save -> load unchanged, and saving twice gives the same bytes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import dumps_graph, graph_from_dict, load_graph, save_graph

# Every text of a KG file is read printable (escape codes and control characters removed,
# kg.graph.printable; ids, types, names, sources and relations on one line too): the round
# trip holds for the printable ones.
shown = st.characters(
    exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"), include_characters=" "
)
text = st.text(shown, min_size=1, max_size=12).filter(lambda value: value.strip() != "")
labels = st.text(shown, min_size=1, max_size=12).filter(lambda value: value.strip() != "")
aliases = st.text(shown, max_size=6)
domains = st.just("") | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,5}", fullmatch=True)


@st.composite
def graphs(draw: st.DrawFn) -> KnowledgeGraph:
    ids = draw(st.lists(text, min_size=2, max_size=8, unique=True))
    nodes = {
        node_id: Node(
            node_id,
            draw(labels),
            tuple(draw(st.lists(aliases, max_size=2))),
            draw(st.text(shown, max_size=6)),
        )
        for node_id in ids
    }
    # edges only from earlier to later ids: acyclic by construction, no self-loops
    pairs = [(ids[i], ids[j]) for i in range(len(ids)) for j in range(i + 1, len(ids))]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=10, unique=True))
    edges = [Edge(parent, child, draw(st.text(shown, max_size=6))) for parent, child in chosen]
    source = draw(st.text(shown, max_size=10))
    return KnowledgeGraph(draw(text), draw(domains), nodes, edges, source, "")


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


@given(st.text(max_size=12))
def test_a_label_is_read_printable(label: str) -> None:
    from kontest_tui.kg.graph import printable

    cleaned = printable(label)
    controls = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\n", "\t"}
    assert not controls & set(cleaned)  # no escape sequence or control character is left
    assert printable(cleaned) == cleaned


@given(st.text(max_size=12))
def test_an_id_or_name_is_read_printable_on_one_line(value: str) -> None:
    from kontest_tui.kg.graph import printable_line

    cleaned = printable_line(value)
    controls = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]}
    assert not controls & set(cleaned)  # no escape, control character, newline or tab
    assert printable_line(cleaned) == cleaned
