"""Scope: subtrees of chosen entities down to a depth counted from each (kg.scope)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.generate.relations import extract_relations
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import load_graph
from kontest_tui.kg.scope import ScopeError, apply_scope, resolve_entity, scope_graph


def make_kg() -> KnowledgeGraph:
    """A > B > C > D, A > E; X > Y; two nodes labelled "Twin" (under B and under X)."""
    labels = {"a": "A", "b": "B", "c": "C", "d": "D", "e": "E", "x": "X", "y": "Y"}
    nodes = {node_id: Node(node_id, label) for node_id, label in labels.items()}
    nodes["t1"] = Node("t1", "Twin")
    nodes["t2"] = Node("t2", "Twin")
    pairs = [("a", "b"), ("b", "c"), ("c", "d"), ("a", "e"), ("x", "y"), ("b", "t1"), ("x", "t2")]
    return KnowledgeGraph("toy", "places", nodes, [Edge(p, c) for p, c in pairs])


def test_one_entity_by_label_keeps_its_subtree_to_the_depth() -> None:
    scoped = scope_graph(make_kg(), ["B"], depth=1)
    assert set(scoped.nodes) == {"b", "c", "t1"}
    assert scoped.roots() == ["b"]
    assert {(e.parent, e.child) for e in scoped.edges} == {("b", "c"), ("b", "t1")}
    # Relations: B>C and B>Twin only (C>D is two edges below B).
    assert {(r.parent, r.child) for r in extract_relations(scoped)} == {("b", "c"), ("b", "t1")}


def test_depth_counts_from_each_entity_and_none_keeps_the_whole_subtree() -> None:
    kg = make_kg()
    assert set(scope_graph(kg, ["b", "x"], depth=2).nodes) == {"b", "c", "d", "t1", "x", "y", "t2"}
    assert set(scope_graph(kg, ["a"]).nodes) == {"a", "b", "c", "d", "e", "t1"}
    assert scope_graph(kg, [], depth=1) is kg


def test_the_scope_rule_uses_the_depth_up_only_when_it_scopes() -> None:
    """apply_scope, the one rule the CLI, the session API and the page follow: entities
    take the depth (paths then unbounded on the cut graph); without them the depth stays
    for the paths of the whole KG."""
    kg = make_kg()
    scoped, left = apply_scope(kg, ["B"], 1)
    assert set(scoped.nodes) == {"b", "c", "t1"} and left is None
    whole, left = apply_scope(kg, [], 2)
    assert whole is kg and left == 2


def test_an_entity_inside_another_stays_under_it() -> None:
    scoped = scope_graph(make_kg(), ["A", "C"], depth=1)
    # A keeps B and E; B->C leaves A at depth 2, so C is a root of its own with D below.
    assert set(scoped.nodes) == {"a", "b", "e", "c", "d"}
    assert scoped.roots() == ["a", "c"]


def test_unknown_entity_names_the_closest_matches() -> None:
    with pytest.raises(ScopeError) as raised:
        resolve_entity(load_graph("places"), "Irelnd")
    message = str(raised.value)
    assert "'Irelnd' is not in places" in message
    assert "closest: Ireland (ireland)" in message


def test_a_shared_label_asks_for_the_id_and_case_is_forgiven() -> None:
    kg = make_kg()
    with pytest.raises(ScopeError, match=r"names 2 nodes.*t1, in B.*t2, in X"):
        resolve_entity(kg, "Twin")
    assert resolve_entity(kg, "t2") == "t2"
    assert resolve_entity(kg, "  y ") == "y"


def test_ireland_depth_one_on_places() -> None:
    kg = load_graph("places")
    scoped = scope_graph(kg, ["Ireland"], depth=1)
    assert [kg.label(node) for node in scoped.nodes] == [
        "Ireland",
        "Ulster",
        "Connacht",
        "Leinster",
    ]
    assert len(extract_relations(scoped)) == 3


def test_cli_generate_prints_only_conversations_inside_the_scope(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli(["generate", "--kg", "places", "--entity", "Ireland", "--depth", "1"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 3 * 4  # Ireland > Ulster, Connacht, Leinster; 4 conversations each
    relations = {line["relation"] for line in lines}
    assert relations == {
        "ireland>ireland.ulster",
        "ireland>ireland.connacht",
        "ireland>ireland.leinster",
    }


def test_cli_kg_info_and_run_take_several_entities(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["kg", "info", "places", "--entity", "Ireland", "--entity", "qatar", "--json"]
    assert run_cli([*argv, "--depth", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["roots"] == ["Qatar", "Ireland"]
    assert data["max_depth"] == 2
    db = str(tmp_path / "s.db")
    run = ["run", "--kg", "places", "--entity", "Ireland", "--depth", "1", "--db", db, "-q"]
    assert run_cli([*run, "--model", "sim"]) == 0
    assert "Relations 3 " in capsys.readouterr().out


def test_cli_unknown_entity_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("generate", "kg info", "run"):
        argv = [*command.split(), *(["--kg"] if command != "kg info" else []), "places"]
        assert run_cli([*argv, "--entity", "Irelnd"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert err[0].startswith("kontest: error: entity 'Irelnd' is not in places; closest:")
