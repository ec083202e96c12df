"""Shown names of nodes that share a label: told apart by the parent, and by what the node
is when the parent has the same label (never "Garnich (in Garnich)"); the relation finder
reads every form back to the plain label."""

from __future__ import annotations

from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.names import NodeNames, plain_label


def test_a_shared_label_under_a_parent_of_that_label_says_what_the_node_is() -> None:
    nodes = {
        "lu": Node("lu", "Luxembourg"),
        "cap": Node("cap", "Canton of Capellen"),
        "commune": Node("commune", "Garnich", type="district"),
        "village": Node("village", "Garnich", type="locality"),
        "album": Node("album", "Butterfly"),
        "song": Node("song", "Butterfly"),  # no type
    }
    edges = [
        Edge("lu", "cap"),
        Edge("cap", "commune"),
        Edge("commune", "village"),
        Edge("lu", "album"),
        Edge("album", "song"),
    ]
    names = NodeNames(KnowledgeGraph("t", "places", nodes, edges))
    assert names.name("commune") == "Garnich (in Canton of Capellen)"
    assert names.name("village") == "Garnich (locality in Garnich)"
    assert names.name("album") == "Butterfly (in Luxembourg)"
    assert names.name("song") == "Butterfly (part of Butterfly)"
    assert names.name("cap") == "Canton of Capellen"  # a label of its own: as it is
    for node in nodes:
        assert plain_label(names.name(node)) == names.label(node)
    assert plain_label("Tartu (in Tartumaa) [EE-793]") == "Tartu"
    assert plain_label("Hüslers (AI-1755)") == "Hüslers (AI-1755)"  # a label's own brackets
