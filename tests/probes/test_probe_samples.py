"""Property checks over the bundled sample KGs: no distractor is ever true in the KG."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kontest_tui.domain.extras import FactcheckExtras
from kontest_tui.domain.records import Answer
from kontest_tui.generate.relations import extract_relations
from kontest_tui.kg.io import load_graph
from kontest_tui.probes.factcheck import Lineage, build_factcheck_conversations
from kontest_tui.probes.logic import build_logic_conversations
from kontest_tui.probes.templates import load_probe_templates
from tests.support.records import extras_of

SAMPLES = {name: load_graph(name) for name in ("places", "music")}
RELATIONS = {name: extract_relations(kg) for name, kg in SAMPLES.items()}
LINEAGES = {name: Lineage.of(kg) for name, kg in SAMPLES.items()}
TEMPLATES = {name: load_probe_templates(name) for name in SAMPLES}


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(SAMPLES)), seed=st.integers(min_value=0, max_value=10**6))
def test_distractors_are_never_true_in_the_sample(name: str, seed: int) -> None:
    kg, lineage = SAMPLES[name], LINEAGES[name]
    convs = build_factcheck_conversations(kg, RELATIONS[name], TEMPLATES[name], seed=seed)
    relations = {r.id: r for r in RELATIONS[name]}
    expected = Counter(
        c.expected[0]
        for c in convs
        if extras_of(c, FactcheckExtras).question_type in ("yes_no", "two_hop")
    )
    assert expected[Answer.YES] == expected[Answer.NO] > 0
    for conv in convs:
        relation = relations[conv.relation_id]
        extras = extras_of(conv, FactcheckExtras)
        if extras.distractor is not None and extras.question_type == "yes_no":
            assert not lineage.label_is_true_child(kg, relation.parent, extras.distractor)
        if extras.distractor is not None and extras.question_type == "two_hop":
            assert not lineage.label_is_true_parent(kg, relation.child, extras.distractor)
        for option in extras.options:
            if option.letter != extras.answer:
                assert not lineage.label_is_true_parent(kg, relation.child, option.id)


@pytest.mark.parametrize("name", ["places", "music"])
def test_every_sample_relation_type_gets_probes(name: str) -> None:
    kg = SAMPLES[name]
    factcheck = build_factcheck_conversations(kg, RELATIONS[name], TEMPLATES[name])
    logic = build_logic_conversations(kg, RELATIONS[name], TEMPLATES[name])
    kinds = Counter(extras_of(c, FactcheckExtras).question_type for c in factcheck)
    assert set(kinds) == {"yes_no", "multiple_choice", "wh", "two_hop", "two_hop_choice"}
    assert {extras_of(c, FactcheckExtras).relation_type for c in factcheck} == {
        r.type for r in RELATIONS[name]
    }
    assert len({c.id for c in factcheck + logic}) == len(factcheck) + len(logic)
    assert all(c.expected[0] in (Answer.YES, Answer.NO) for c in logic)
