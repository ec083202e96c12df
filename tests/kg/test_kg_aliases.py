"""Aliases that name another entity are not used (kg/aliases.py): not in covering-array
variants, not as accepted WH answers; a WH answer naming another KG entity is wrong."""

from __future__ import annotations

from kontest_tui.domain.extras import FactcheckExtras
from kontest_tui.generate.ipm import ipm_for_query
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.templates import load_template_set
from kontest_tui.kg.aliases import usable_aliases
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import load_graph
from kontest_tui.probes.evaluate import evaluate_probes
from kontest_tui.probes.factcheck import build_factcheck_conversations
from kontest_tui.probes.templates import load_probe_templates
from tests.support.records import extras_of


def toy() -> KnowledgeGraph:
    """lu (Luxembourg) > ca (Canton of Luxembourg, alias "Luxembourg") > he (Hesperange,
    alias "Hesp."); ie (Ireland, alias "Hesp." too: unrelated) > ul (Ulster, alias "Ulaidh")
    > kw (Kinawley, alias "ulaidh": its ancestor's alias)."""
    nodes = {
        "lu": Node("lu", "Luxembourg", ("Grand Duchy of Luxembourg",), "country"),
        "ca": Node("ca", "Canton of Luxembourg", ("Luxembourg",), "region"),
        "he": Node("he", "Hesperange", ("Hesp.",), "district"),
        "ie": Node("ie", "Ireland", ("Hesp.",), "country"),
        "ul": Node("ul", "Ulster", ("Ulaidh",), "region"),
        "kw": Node("kw", "Kinawley", ("ulaidh",), "district"),
    }
    edges = [Edge("lu", "ca"), Edge("ca", "he"), Edge("ie", "ul"), Edge("ul", "kw")]
    return KnowledgeGraph("toy", "places", nodes, edges)


def test_an_alias_naming_another_entity_is_not_used() -> None:
    kg = toy()
    assert usable_aliases(kg, "lu") == ("Grand Duchy of Luxembourg",)
    assert usable_aliases(kg, "ca") == ()  # the country's label
    assert usable_aliases(kg, "he") == ("Hesp.",)  # shared only with an unrelated node
    assert usable_aliases(kg, "ie") == ("Hesp.",)
    assert usable_aliases(kg, "ul") == ()  # a descendant's alias too
    assert usable_aliases(kg, "kw") == ()  # an ancestor's alias too
    assert usable_aliases(kg, "missing") == ()


def test_variants_never_use_an_ambiguous_alias() -> None:
    kg = load_graph("places")
    template_set = load_template_set("places")
    relation = next(
        r
        for r in extract_relations(kg)
        if kg.label(r.parent) == "Canton of Luxembourg" and kg.label(r.child) == "Hesperange"
    )
    ipm = ipm_for_query(kg, relation, template_set.get("t2"), "places")
    values = [value for parameter in ipm.parameters for value in parameter.values]
    assert "Canton of Luxembourg" in values and "Luxembourg" not in values


def test_wh_answer_naming_another_entity_is_wrong() -> None:
    kg = load_graph("places")
    relations = [
        r
        for r in extract_relations(kg)
        if kg.label(r.parent) == "Canton of Luxembourg" and kg.label(r.child) == "Hesperange"
    ]
    (question,) = build_factcheck_conversations(
        kg, relations, load_probe_templates("places"), question_types=("wh",)
    )
    assert extras_of(question, FactcheckExtras).accepted == ("Canton of Luxembourg",)
    assert extras_of(question, FactcheckExtras).others == ("Luxembourg",)
    key = (question.id, 0)
    judged = {}
    for answer in ("Luxembourg", "Canton of Luxembourg", "the canton of Luxembourg", "Luxemburg"):
        (verdict,) = evaluate_probes([question], {key: answer}).verdicts
        judged[answer] = (verdict.error, verdict.detail)
    assert judged["Luxembourg"] == (
        True,
        "matcher rules: names another KG entity, 'Luxembourg'",
    )
    assert judged["Canton of Luxembourg"][0] is False
    assert judged["the canton of Luxembourg"][0] is False
    assert judged["Luxemburg"][0] is True  # a slip of the other entity's name
