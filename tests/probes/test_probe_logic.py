"""HalluVault logic rules on the Kinawley path (seed 002, Sec. 4.2 and 5.3), worked by hand:
which rules apply, the derived facts asked, their premises, and the answer oracle."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kontest_tui.domain.extras import KnowledgePoint, LogicExtras
from kontest_tui.domain.records import Answer, TestKind
from kontest_tui.errors import TemplateError
from kontest_tui.probes.evaluate import classify_logic_error, evaluate_probes, stated_reason
from kontest_tui.probes.logic import build_logic_conversations
from kontest_tui.probes.templates import load_probe_templates
from tests.support.records import extras_of


def test_rules_on_one_four_node_path(places_kg, kinawley_relations):
    convs = build_logic_conversations(places_kg, kinawley_relations, load_probe_templates("places"))
    # 3 edges: negation + inverse (containment is not symmetric: Def. 4.2 not asked).
    # 3 chains (ie>cv, ul>kw: 2 links; ie>kw: 3 links): transitive + 2 composite.
    # Premises: the 3 distinct KG links, each asked once (with the first relation using it).
    assert Counter(c.label for c in convs) == {
        "premise": 3,
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
    # The premises are asked too, one question per KG link, once per session, and named by
    # every derived question resting on them.
    assert extras_of(by_id["ul>kw/lr:transitive"], LogicExtras).premises == (
        "ie>cv/lr:premise:1",
        "ie>kw/lr:premise:2",
    )
    assert text["ie>ul/lr:premise:0"] == "Is it true that Ulster is located in Ireland?"
    assert text["ie>cv/lr:premise:1"] == "Is it true that County Cavan is located in Ulster?"
    assert text["ie>kw/lr:premise:2"] == "Is it true that Kinawley is located in County Cavan?"
    assert extras_of(by_id["ie>kw/lr:transitive"], LogicExtras).premises == (
        "ie>ul/lr:premise:0",
        "ie>cv/lr:premise:1",
        "ie>kw/lr:premise:2",
    )
    # The knowledge points the answer oracle compares a wrong answer's reasoning with.
    assert extras_of(by_id["ul>kw/lr:transitive"], LogicExtras).knowledge == (
        KnowledgePoint("County Cavan", "contains", "Ulster"),
        KnowledgePoint("Kinawley", "contains", "County Cavan"),
    )
    assert extras_of(by_id["ie>ul/lr:negation"], LogicExtras).aliases == {"Ireland": ("Éire",)}
    assert "located in" in extras_of(by_id["ie>ul/lr:negation"], LogicExtras).words["contains"]
    # Def. 4.1: not-located(Ulster, Ireland) is false; Def. 4.3: include(Ulster's parent, Ulster).
    assert text["ie>ul/lr:negation"] == "Is it true that Ulster is not located in Ireland?"
    assert by_id["ie>ul/lr:negation"].expected == (Answer.NO,)
    assert text["ul>cv/lr:inverse"] == "Does Ulster include County Cavan?"
    assert by_id["ul>cv/lr:inverse"].expected == (Answer.YES,)
    assert extras_of(by_id["ul>cv/lr:inverse"], LogicExtras).premises == ("ie>cv/lr:premise:1",)
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
    """Hand-worked answers (premises: Ulster in Ireland yes, Cavan in Ulster yes, Kinawley in
    Cavan no). The answer oracle compares each wrong answer's reasoning with its knowledge
    points (nodes and edges, Jaccard, threshold 0.8); the premises are the second signal.
    - ul>kw transitive "No" + Kinawley in County Fermanagh, Fermanagh in Ulster: nodes
      {Kinawley, Fermanagh, Ulster} vs {Kinawley, County Cavan, Ulster} = 2/4 < 0.8, edges all
      "located in" = 1.0 -> error-knowledge (premise: Kinawley in Cavan denied: knowledge);
    - ie>cv transitive "No" + the right links: nodes 3/3, edges 1.0 -> error-inference
      (premises both affirmed: inference);
    - ie>kw transitive "No" with no reasoning -> unstated (premise: knowledge);
    - ie>ul negation "Yes" + Ulster not part of Ireland, located in the United Kingdom: nodes
      2/3, edges {located in, not located in} vs {located in} = 1/2 -> both (premise: inference);
    - ul>cv inverse "I don't know" -> a refusal: a normal response, no test;
    - cv>kw inverse "Yes" -> correct.
    Hallucination rate 4 errors of 6 responses; of valid answers 4 of 5."""
    convs = build_logic_conversations(places_kg, kinawley_relations, load_probe_templates("places"))
    raw = {
        ("ie>ul/lr:premise:0", 0): "Yes.",
        ("ie>cv/lr:premise:1", 0): "Yes, it is.",
        ("ie>kw/lr:premise:2", 0): "No. Kinawley is in County Fermanagh.",
        ("ul>kw/lr:transitive", 0): (
            "No. Kinawley is located in County Fermanagh. County Fermanagh is located in Ulster."
        ),
        ("ie>cv/lr:transitive", 0): (
            "No.\n1. County Cavan is located in Ulster.\n2. Ulster is located in Ireland."
        ),
        ("ie>kw/lr:transitive", 0): "No",
        ("ie>ul/lr:negation", 0): (
            "Yes. Ulster is not part of Ireland; Ulster is located in the United Kingdom."
        ),
        ("ul>cv/lr:inverse", 0): "I don't know, I have no information.",
        ("cv>kw/lr:inverse", 0): "Yes, Kinawley is a parish in Cavan.",
    }
    result = evaluate_probes(convs, raw)
    report: dict[str, Any] = result.to_json()
    logic = report["logic"]

    def causes(cell: dict) -> tuple[int, ...]:
        return tuple(
            cell[f"error_{cause}"] for cause in ("knowledge", "inference", "both", "unstated")
        )

    def premise_causes(cell: dict) -> tuple[int, ...]:
        return tuple(
            cell[f"premise_{cause}"] for cause in ("knowledge", "inference", "unclassified")
        )

    transitive = logic["per_rule"]["transitive"]
    assert (transitive["asked"], transitive["valid"], transitive["errors"]) == (3, 3, 3)
    assert causes(transitive) == (1, 1, 0, 1)
    assert premise_causes(transitive) == (2, 1, 0)
    negation = logic["per_rule"]["negation"]
    assert negation["errors"] == 1 and causes(negation) == (0, 0, 1, 0)
    assert premise_causes(negation) == (0, 1, 0)
    inverse = logic["per_rule"]["inverse"]
    assert (inverse["asked"], inverse["valid"], inverse["correct"], inverse["refusals"]) == (
        2,
        1,
        1,
        1,
    )
    assert (logic["asked"], logic["valid"], logic["errors"]) == (6, 5, 4)
    assert causes(logic) == (1, 1, 1, 1)
    # The paper's rate: errors of all responses (the refusal is a normal response).
    assert logic["hallucination_rate"] == round(4 / 6, 6)
    assert logic["error_rate"] == round(4 / 5, 6)
    # Premises are facts the rules rest on: counted apart, not as rule tests.
    assert logic["premises"] == {
        "asked": 3,
        "valid": 3,
        "correct": 2,
        "errors": 1,
        "refusals": 0,
        "invalid": 0,
        "accuracy": 66.67,
    }
    assert "premise" not in logic["per_rule"]
    by_ref = {v.refs[0][0]: v for v in result.verdicts}
    assert by_ref["ul>kw/lr:transitive"].detail == (
        "expected yes; answer oracle: error-knowledge (nodes 0.50 < 0.8, edges 1.00); premise "
        "probe: error-knowledge; reason: Kinawley is located in County Fermanagh. County "
        "Fermanagh is located in Ulster."
    )
    assert "answer oracle: error-inference (nodes 1.00, edges 1.00)" in (
        by_ref["ie>cv/lr:transitive"].detail
    )
    assert "answer oracle: no reasoning stated" in by_ref["ie>kw/lr:transitive"].detail
    assert "answer oracle: error-both (nodes 0.67 < 0.8, edges 0.50 < 0.8)" in (
        by_ref["ie>ul/lr:negation"].detail
    )
    assert "ul>cv/lr:inverse" not in by_ref
    # The hallucination rate's clusters: per relation, errors of responses.
    assert result.hallucinations["ie>cv"] == [1, 1] and result.hallucinations["cv>kw"] == [0, 1]


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
