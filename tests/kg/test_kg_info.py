"""describe_graph and its text form on hand-made graphs with hand-counted paths and relations."""

from __future__ import annotations

from kontest_tui.generate.summary import describe_graph, format_summary
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node


def chain_graph() -> KnowledgeGraph:
    """Ireland -> Ulster -> County Cavan -> Kinawley: one 4-node path."""
    labels = {"a": "Ireland", "b": "Ulster", "c": "County Cavan", "d": "Kinawley"}
    nodes = {key: Node(key, label, (), "place") for key, label in labels.items()}
    edges = [Edge("a", "b", "contains"), Edge("b", "c", "contains"), Edge("c", "d", "contains")]
    return KnowledgeGraph("chain", "places", nodes, edges)


def fork_graph() -> KnowledgeGraph:
    """r -> x -> y and r -> x -> w share r -> x; s -> t is a second root."""
    nodes = {key: Node(key, key.upper()) for key in "rxywst"}
    edges = [Edge("r", "x"), Edge("x", "y"), Edge("x", "w"), Edge("s", "t")]
    return KnowledgeGraph("fork", "", nodes, edges)


def test_four_node_path_gives_six_relations() -> None:
    summary = describe_graph(chain_graph())
    assert (summary.nodes, summary.edges) == (4, 3)
    assert summary.roots == ["Ireland"]
    assert summary.max_depth == 3
    assert summary.paths == 1
    assert summary.relations == 6  # (a,b) (a,c) (a,d) (b,c) (b,d) (c,d)
    assert summary.relations_by_type == {"contains": 6}
    assert summary.node_types == {"place": 4}


def test_depth_bound_cuts_the_path() -> None:
    summary = describe_graph(chain_graph(), depth=2)
    assert summary.depth == 2
    assert summary.max_depth == 3  # of the graph, not of the bound
    assert summary.paths == 1  # Ireland -> Ulster -> County Cavan
    assert summary.relations == 3
    assert describe_graph(chain_graph(), depth=1).relations == 1


def test_shared_prefix_is_deduplicated_unless_per_path() -> None:
    # paths r-x-y, r-x-w, s-t: per path 3 + 3 + 1 = 7 pairs; (r,x) repeats, so 6 distinct
    assert describe_graph(fork_graph()).paths == 3
    assert describe_graph(fork_graph()).relations == 6
    per_path = describe_graph(fork_graph(), per_path=True)
    assert per_path.relations == 7
    assert per_path.per_path is True
    assert describe_graph(fork_graph()).roots == ["R", "S"]
    assert describe_graph(fork_graph()).node_types == {"(none)": 6}


def test_text_summary_lines() -> None:
    text = format_summary(describe_graph(chain_graph(), depth=2))
    lines = text.splitlines()
    assert lines[0] == "KG         chain (domain places)"
    assert "Nodes      4" in lines
    assert "Edges      3" in lines
    assert "Roots      1: Ireland" in lines
    assert "Max depth  3" in lines
    assert "Paths      1 (depth <= 2)" in lines
    assert "Relations  3 (deduplicated by node ids)" in lines
    assert "  contains  3" in lines


def test_to_dict_is_plain_data() -> None:
    data = describe_graph(chain_graph()).to_dict()
    assert data["relations"] == 6
    assert data["roots"] == ["Ireland"]
    assert data["depth"] is None
    assert data["relations_by_type"] == {"contains": 6}
