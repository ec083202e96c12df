"""Graph checks: the cycle finder and check_graph on built graphs (used before saving Wikidata KGs)."""

from __future__ import annotations

import pytest

from kontest_tui.errors import GraphError
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.paths import measure_depth
from kontest_tui.kg.validate import check_graph, find_cycle


def edges_of(*pairs: str) -> list[Edge]:
    return [Edge(pair[0], pair[1]) for pair in pairs]


def test_find_cycle_none_on_diamond() -> None:
    assert find_cycle(edges_of("ab", "ac", "bd", "cd")) is None


def test_find_cycle_reached_through_an_acyclic_prefix() -> None:
    # a -> b -> c -> d -> b: the cycle is b c d, a is not on it
    assert find_cycle(edges_of("ab", "bc", "cd", "db")) == ["b", "c", "d", "b"]


def test_find_cycle_two_nodes() -> None:
    assert find_cycle(edges_of("xy", "yx")) == ["x", "y", "x"]


def test_find_cycle_deep_chain_does_not_overflow() -> None:
    count = 20_000
    edges = [Edge(f"n{i}", f"n{i + 1}") for i in range(count)]
    assert find_cycle(edges) is None
    edges.append(Edge(f"n{count}", "n5"))
    cycle = find_cycle(edges)
    assert cycle is not None
    assert (cycle[0], cycle[-1], len(cycle)) == ("n5", "n5", count - 5 + 2)


def graph(edges: list[Edge], ids: str = "abcd") -> KnowledgeGraph:
    return KnowledgeGraph("g", "", {key: Node(key, key) for key in ids}, edges)


def test_check_graph_accepts_a_dag_and_rejects_a_cycle() -> None:
    check_graph(graph(edges_of("ab", "ac", "bd", "cd")))
    with pytest.raises(
        GraphError, match=r"^g: cycle through node b \(b -> c -> b\); edge 3 \(c -> b\) closes it$"
    ):
        check_graph(graph(edges_of("ab", "bc", "cb")))
    with pytest.raises(GraphError, match=r"^built: edge 2 \(b -> z\): child z is not a node$"):
        check_graph(graph(edges_of("ab", "bz")), "built")


def test_measure_depth_takes_the_longest_branch() -> None:
    # a -> d directly and a -> b -> c -> d: the longest path has 3 edges
    assert measure_depth(graph(edges_of("ad", "ab", "bc", "cd"))) == 3
    assert measure_depth(graph([], "a")) == 0
