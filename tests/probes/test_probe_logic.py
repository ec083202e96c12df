"""HalluVault logic rules on the Kinawley path (seed 002, Sec. 4.2 and 5.3), worked by hand:
which rules apply, the derived facts asked, their premises, and the answer oracle."""

from __future__ import annotations

from collections import Counter

import pytest

from kontest_tui.domain.records import Answer, TestKind
from kontest_tui.errors import TemplateError
from kontest_tui.probes.evaluate import classify_logic_error, evaluate_probes, stated_reason
from kontest_tui.probes.logic import build_logic_conversations
from kontest_tui.probes.templates import load_probe_templates


def test_rules_on_one_four_node_path(places_kg, kinawley_relations):
    convs = build_logic_conversations(places_kg, kinawley_relations, load_probe_templates("places"))
    # 3 edges: premise + negation + inverse (containment is not symmetric: Def. 4.2 not asked).
    # 3 chains (ie>cv, ul>kw: 2 links; ie>kw: 3 links): premises + transitive + 2 composite.
    assert Counter(c.label for c in convs) == {
        "premise": 3 + 2 + 2 + 3,
        "negation": 3,
        "inverse": 3,
        "transitive": 3,
        "composite": 6,
    }
    assert all(c.test_kind == TestKind.LOGIC for c in convs)
    by_id = {c.id: c for c in convs}
    text = {cid: c.turns[0].text for cid, c in by_id.items()}
    # Def. 4.4: loc_in(Kinawley, Cavan), loc_in(Cavan, Ulster) -> loc_in(Kinawley, Ulster),
    # asked alone (not the premises in one question).
    assert text["ul>kw/lr:transitive"] == "Is it true that Kinawley is located in Ulster?"
    assert by_id["ul>kw/lr:transitive"].expected == (Answer.YES,)
    assert text["ie>kw/lr:transitive"] == "Is it true that Kinawley is located in Ireland?"
    # The premises are asked too, one question per KG link, and named by the derived question.
    assert by_id["ul>kw/lr:transitive"].meta["premises"] == [
        "ul>kw/lr:premise:0",
        "ul>kw/lr:premise:1",
    ]
    assert text["ul>kw/lr:premise:0"] == "Is it true that County Cavan is located in Ulster?"
    assert text["ul>kw/lr:premise:1"] == "Is it true that Kinawley is located in County Cavan?"
    assert len(by_id["ie>kw/lr:transitive"].meta["premises"]) == 3
    # Def. 4.1: not-located(Ulster, Ireland) is false; Def. 4.3: include(Ulster's parent, Ulster).
    assert text["ie>ul/lr:negation"] == "Is it true that Ulster is not located in Ireland?"
    assert by_id["ie>ul/lr:negation"].expected == (Answer.NO,)
    assert text["ul>cv/lr:inverse"] == "Does Ulster include County Cavan?"
    assert by_id["ul>cv/lr:inverse"].expected == (Answer.YES,)
    assert by_id["ul>cv/lr:inverse"].meta["premises"] == ["ul>cv/lr:premise:0"]
    # Def. 4.5: transitive, then inverse (yes), then negation (no), applied to the chain's facts.
    assert text["ie>kw/lr:composite:inverse"] == "Does Ireland include Kinawley?"
    assert by_id["ie>kw/lr:composite:inverse"].expected == (Answer.YES,)
    assert text["ie>kw/lr:composite:inverse+negation"] == (
        "Is it true that Ireland does not include Kinawley?"
    )
    assert by_id["ie>kw/lr:composite:inverse+negation"].expected == (Answer.NO,)
    assert "ie>ul/lr:symmetric" not in by_id


def test_symmetric_rule_derives_the_swapped_fact_for_a_symmetric_relation(
    places_kg, kinawley_relations, tmp_path
):
    """Def. 4.2: R(s,o) gives R(o,s), expected yes, for a relation declared symmetric."""
    path = tmp_path / "borders.toml"
    path.write_text(
        'domain = "places"\n[prompts]\nlogic = "x"\n[logic.contains]\n'
        'fact = "Does {child} share a border with {parent}?"\nsymmetric = true\n',
        encoding="utf-8",
    )
    convs = build_logic_conversations(places_kg, kinawley_relations[:1], load_probe_templates(path))
    by_id = {c.id: c for c in convs}
    assert by_id["ie>ul/lr:symmetric"].turns[0].text == "Does Ireland share a border with Ulster?"
    assert by_id["ie>ul/lr:symmetric"].expected == (Answer.YES,)
    assert set(by_id) == {"ie>ul/lr:premise:0", "ie>ul/lr:symmetric"}  # no negated/inverse text


def test_logic_forms_are_checked(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        '[logic.contains]\nfact = "Is {child} in {parent}?"\nexpected = "no"\n', encoding="utf-8"
    )
    with pytest.raises(TemplateError, match="unknown key 'expected'"):
        load_probe_templates(path)


def test_rule_selection(places_kg, kinawley_relations):
    convs = build_logic_conversations(
        places_kg, kinawley_relations, load_probe_templates("places"), rules=("inverse",)
    )
    assert [c.id for c in convs if c.label != "premise"] == [
        "ie>ul/lr:inverse",
        "ul>cv/lr:inverse",
        "cv>kw/lr:inverse",
    ]


def test_answer_oracle_splits_knowledge_and_inference_errors(places_kg, kinawley_relations):
    """Hand-worked answers:
    - ul>kw: premises Yes, Yes; transitive "No, ..." -> error-inference (reason kept);
    - ie>cv: premise Ulster-in-Ireland "No"; transitive "No." -> error-knowledge;
    - ie>kw: one premise "I don't know"; transitive "No" -> unclassified;
    - ie>ul: premise Yes; negation "Yes" (wrong: not-located is false) -> error-inference;
    - ul>cv: inverse "I don't know" -> a refusal, not a test."""
    convs = build_logic_conversations(places_kg, kinawley_relations, load_probe_templates("places"))
    raw = {
        ("ul>kw/lr:premise:0", 0): "Yes.",
        ("ul>kw/lr:premise:1", 0): "Yes, it is.",
        ("ul>kw/lr:transitive", 0): "No, Kinawley is in County Fermanagh.",
        ("ie>cv/lr:premise:0", 0): "No. Ulster is in the United Kingdom.",
        ("ie>cv/lr:premise:1", 0): "Yes",
        ("ie>cv/lr:transitive", 0): "No.",
        ("ie>kw/lr:premise:0", 0): "Yes",
        ("ie>kw/lr:premise:1", 0): "I don't know.",
        ("ie>kw/lr:premise:2", 0): "Yes",
        ("ie>kw/lr:transitive", 0): "No",
        ("ie>ul/lr:premise:0", 0): "Yes",
        ("ie>ul/lr:negation", 0): "Yes - it is not.",
        ("ul>cv/lr:inverse", 0): "I don't know, I have no information.",
        ("cv>kw/lr:inverse", 0): "Yes, Kinawley is a parish in Cavan.",
    }
    result = evaluate_probes(convs, raw)
    logic = result.to_json()["logic"]
    transitive = logic["per_rule"]["transitive"]
    assert (transitive["asked"], transitive["valid"], transitive["errors"]) == (3, 3, 3)
    assert (
        transitive["error_knowledge"],
        transitive["error_inference"],
        transitive["error_unclassified"],
    ) == (1, 1, 1)
    negation = logic["per_rule"]["negation"]
    assert (negation["errors"], negation["error_inference"]) == (1, 1)
    inverse = logic["per_rule"]["inverse"]
    assert (inverse["asked"], inverse["valid"], inverse["correct"], inverse["refusals"]) == (
        2,
        1,
        1,
        1,
    )
    assert (logic["errors"], logic["error_knowledge"], logic["error_inference"]) == (4, 1, 2)
    # Premises are facts the rules rest on: counted apart, not as rule tests.
    assert logic["premises"] == {
        "asked": 8,
        "valid": 7,
        "correct": 6,
        "errors": 1,
        "refusals": 1,
        "invalid": 0,
        "accuracy": 75.0,
    }
    assert "premise" not in logic["per_rule"]
    by_ref = {v.refs[0][0]: v for v in result.verdicts}
    assert by_ref["ul>kw/lr:transitive"].detail == (
        "expected no; error-inference; reason: Kinawley is in County Fermanagh."
    ).replace("expected no", "expected yes")
    assert "error-knowledge" in by_ref["ie>cv/lr:transitive"].detail
    assert "ul>cv/lr:inverse" not in by_ref


def test_classify_and_reason_helpers():
    yes, no, idk = Answer.YES, Answer.NO, Answer.REFUSAL
    assert classify_logic_error(["a", "b"], {"a": yes, "b": no}) == "knowledge"
    assert classify_logic_error(["a", "b"], {"a": yes, "b": yes}) == "inference"
    assert classify_logic_error(["a", "b"], {"a": yes, "b": idk}) == "unclassified"
    assert classify_logic_error([], {}) == "unclassified"
    assert stated_reason("No, it is in Fermanagh.") == "it is in Fermanagh."
    assert stated_reason("**Yes**") == ""
    assert stated_reason("I don't know - no data.") == "no data."
    assert stated_reason("Maybe.") == ""
