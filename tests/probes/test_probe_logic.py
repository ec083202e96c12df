"""HalluVault logic rules on the Kinawley path: which rules apply, texts and expected answers."""

from __future__ import annotations

from collections import Counter

from kontest_tui.domain.records import Answer, TestKind
from kontest_tui.probes.logic import build_logic_conversations
from kontest_tui.probes.templates import load_probe_templates


def test_rules_on_one_four_node_path(places_kg, kinawley_relations):
    relations = kinawley_relations
    convs = build_logic_conversations(places_kg, relations, load_probe_templates("places"))
    # 3 edges x (negation, symmetric, inverse) = 9; chains with one node between: ie>cv, ul>kw
    # -> 2 transitive; composite on every relation with nodes between: ie>cv, ul>kw, ie>kw -> 3.
    assert Counter(c.label for c in convs) == {
        "negation": 3, "symmetric": 3, "inverse": 3, "transitive": 2, "composite": 3,
    }
    assert all(c.test_kind == TestKind.LOGIC for c in convs)
    by_id = {c.id: c for c in convs}
    assert by_id["ul>cv/lr:inverse"].turns[0].text == "Is County Cavan part of Ulster?"
    assert by_id["ul>cv/lr:inverse"].expected == (Answer.YES,)
    assert by_id["ie>ul/lr:negation"].turns[0].text == "Is it true that Ulster is not located in Ireland?"
    assert by_id["ie>ul/lr:negation"].expected == (Answer.NO,)
    assert by_id["ie>ul/lr:symmetric"].turns[0].text == "Is Ireland located in Ulster?"
    assert by_id["ie>ul/lr:symmetric"].expected == (Answer.NO,)
    assert by_id["ul>kw/lr:transitive"].turns[0].text == (
        "Is Kinawley located in County Cavan, which is located in Ulster?"
    )
    assert by_id["ie>kw/lr:composite"].expected == (Answer.NO,)
    assert "ie>kw/lr:transitive" not in by_id  # two nodes in between: no single {middle}


def test_rule_selection(places_kg, kinawley_relations):
    relations = kinawley_relations
    convs = build_logic_conversations(
        places_kg, relations, load_probe_templates("places"), rules=("inverse",)
    )
    assert [c.id for c in convs] == ["ie>ul/lr:inverse", "ul>cv/lr:inverse", "cv>kw/lr:inverse"]
