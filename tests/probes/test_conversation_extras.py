"""domain.extras: each test kind's extras as stored (the conversations' `meta` JSON): the keys in
the order earlier versions wrote them, read back to the same record, old rows still readable."""

from __future__ import annotations

import json
from typing import Any

from kontest_tui.domain.extras import (
    AnnotationExtras,
    ChoiceOption,
    FactcheckExtras,
    KnowledgePoint,
    LogicExtras,
    PremiseExtras,
    VariantExtras,
    expected_text,
    extras_from_json,
)
from kontest_tui.domain.records import TestKind
from kontest_tui.probes.evaluate import answer_oracle
from kontest_tui.probes.factcheck import build_factcheck_conversations
from kontest_tui.probes.logic import build_logic_conversations
from kontest_tui.probes.templates import load_probe_templates


def test_each_kind_writes_the_keys_it_always_wrote() -> None:
    # The JSON of the untyped meta dicts these replaced, written out by hand.
    variant = VariantExtras(
        2,
        parameters=("parent", "w3:have"),
        row=(1, 0),
        changed={"parent": "Éire"},
        original="Does Ireland have a Ulster?",
    )
    assert json.dumps(variant.to_json(), ensure_ascii=False) == (
        '{"variant": 2, "parameters": ["parent", "w3:have"], "row": [1, 0], '
        '"changed": {"parent": "Éire"}, "original": "Does Ireland have a Ulster?", '
        '"strength": 2, "postfix": false, "answer_format": "yes_no"}'
    )
    annotated = AnnotationExtras(
        **variant.variant_fields(), question="q?", annotation=True, passage="p", line=3
    )
    assert list(annotated.to_json())[-4:] == ["question", "annotation", "passage", "line"]
    choice = FactcheckExtras(
        question_type="two_hop_choice",
        hops=2,
        middle="cv",
        answer="B",
        expected_text="B",
        relation_type="contains",
        options=(ChoiceOption("A", "no", "Norway"), ChoiceOption("B", "ie", "Ireland")),
    )
    assert list(choice.to_json()) == [
        "question_type",
        "hops",
        "middle",
        "answer",
        "expected_text",
        "options",
        "relation_type",
    ]
    wh = FactcheckExtras(question_type="wh", expected_text="Ulster", accepted=("Ulster",))
    assert wh.to_json() == {
        "question_type": "wh",
        "hops": 1,
        "expected_text": "Ulster",
        "accepted": ["Ulster"],
        "others": [],
        "relation_type": "",
    }
    assert PremiseExtras(("ie", "ul")).to_json() == {
        "rule": "premise",
        "expected_text": "yes",
        "fact": ["ie", "ul"],
    }


def test_built_extras_read_back_to_the_same_record(places_kg, kinawley_relations) -> None:
    templates = load_probe_templates("places")
    conversations = [
        *build_factcheck_conversations(places_kg, kinawley_relations, templates),
        *build_logic_conversations(places_kg, kinawley_relations, templates),
    ]
    kinds = {type(c.extras) for c in conversations}
    assert kinds == {FactcheckExtras, PremiseExtras, LogicExtras}
    for conversation in conversations:
        assert conversation.extras is not None
        assert not isinstance(conversation.extras, VariantExtras)
        stored = json.loads(json.dumps(conversation.extras.to_json()))
        assert extras_from_json(conversation.test_kind, stored) == conversation.extras
        assert expected_text(conversation.extras) == conversation.extras.expected_text


def test_a_row_stored_before_knowledge_points_reads_without_them() -> None:
    old: dict[str, Any] = {
        "rule": "transitive",
        "steps": "transitive",
        "expected_text": "yes",
        "form": "pos",
    }
    extras = extras_from_json(TestKind.LOGIC, {**old, "premises": ["r/lr:premise:0"]})
    assert extras == LogicExtras(**old, premises=("r/lr:premise:0",))
    assert isinstance(extras, LogicExtras) and answer_oracle(extras, "No, because.") is None
    with_points = LogicExtras(**old, knowledge=(KnowledgePoint("Kinawley", "contains", "Ulster"),))
    assert answer_oracle(with_points, "No: Kinawley is in Munster.") is not None
    assert extras_from_json(TestKind.KONTEST, None) is None
    assert extras_from_json(TestKind.VARIANT, {"variant": 0}) == VariantExtras(0)
