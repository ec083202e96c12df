"""The simulated model answers FactChecker and logic-rule probes from its knowledge of each fact."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from kontest_tui.domain.answers import parse_answer
from kontest_tui.domain.extras import ChoiceOption, FactcheckExtras
from kontest_tui.domain.records import Answer, Conversation, TestKind
from kontest_tui.errors import ModelSpecError
from kontest_tui.generate.conversations import build_suite
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import load_graph
from kontest_tui.models.base import ChatOptions, ChatRequest, Message
from kontest_tui.models.openai import OpenAIModel
from kontest_tui.models.sim import (
    SimProfile,
    SimulatedModel,
    decide_answer,
    load_profile,
    parse_question,
    profile_from_dict,
)
from kontest_tui.models.sim.entities import EntityFinder
from kontest_tui.models.sim.probes import parse_probe
from kontest_tui.probes.evaluate import ProbeEvaluation, evaluate_probes
from kontest_tui.probes.factcheck import build_factcheck_conversations
from kontest_tui.probes.logic import build_logic_conversations
from kontest_tui.probes.matching import match_wh, parse_choice, parse_logic_answer
from kontest_tui.probes.templates import FACT_FORMS, load_probe_templates
from tests.models.model_test_servers import start_sim_server
from tests.support.records import extras_of

COUNTRIES = ("Ardonia", "Belmar", "Corvana", "Dastria")


def toy_kg() -> KnowledgeGraph:
    """Four countries, each with one region holding one district."""
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    for country in COUNTRIES:
        key = country.lower()
        nodes[key] = Node(key, country, (), "country")
        nodes[f"{key}.r"] = Node(f"{key}.r", f"{country} Highlands", (), "region")
        nodes[f"{key}.r.d"] = Node(f"{key}.r.d", f"{country[:3]}ville", (), "district")
        edges += [Edge(key, f"{key}.r"), Edge(f"{key}.r", f"{key}.r.d")]
    return KnowledgeGraph("toy", "places", nodes, edges)


def probes(
    kg: KnowledgeGraph, domain: str = "places", limit: int | None = None
) -> list[Conversation]:
    relations = build_suite(kg).relations[:limit]
    templates = load_probe_templates(domain)
    return [
        *build_factcheck_conversations(kg, relations, templates),
        *build_logic_conversations(kg, relations, templates),
    ]


def profile(**changes: Any) -> SimProfile:
    """The default profile without noise (no unsure answers, wording or template errors)."""
    quiet = {"unsure_rate": 0.0, "variant_error": 0.0, "refusal_rate": 0.0, "template_error": {}}
    return dataclasses.replace(load_profile("default"), **{**quiet, **changes})


def answers(
    model: SimProfile, conversations: Sequence[Conversation], kg: KnowledgeGraph, seed: int = 0
) -> dict[tuple[str, int], str]:
    finder = EntityFinder(kg)
    return {(c.id, 0): decide_answer(model, seed, [c.turns[0].text], finder) for c in conversations}


def by_label(conversations: Sequence[Conversation], label: str) -> list[Conversation]:
    return [c for c in conversations if c.label == label]


@pytest.mark.parametrize("sample", ["places", "music"])
def test_every_generated_probe_is_recognised_and_no_kontest_template_matches(sample: str) -> None:
    for conversation in probes(load_graph(sample), sample):
        text = conversation.turns[0].text
        probe = parse_probe(text)
        assert probe is not None, text
        assert parse_question(text) is None, text
        kind = conversation.label.split(":")[0]
        if kind in ("multiple_choice", "wh"):
            assert probe.reading.form == "ask_parent"
            assert bool(probe.options) == (kind == "multiple_choice")
        elif conversation.test_kind == TestKind.LOGIC:
            # logic questions state a fact in one of the relation type's forms
            assert probe.reading.name in FACT_FORMS, text


def test_a_model_knowing_everything_answers_every_probe_right() -> None:
    kg = toy_kg()
    conversations = probes(kg)
    kinds = {c.label for c in conversations}
    assert {
        "yes_no",
        "yes_no:distractor",
        "multiple_choice",
        "wh",
        "two_hop",
        "two_hop:distractor",
        "premise",
        "negation",
        "inverse",
        "transitive",
        "composite",
    } <= kinds
    omniscient = profile(knowledge=1.0, yes_bias=0.0)
    result = evaluate_probes(conversations, answers(omniscient, conversations, kg))
    premises = by_label(conversations, "premise")
    assert len(result.verdicts) == len(conversations) - len(premises)  # premises are no tests
    assert not [v for v in result.verdicts if v.error]
    assert report_premises(result)["correct"] == len(premises)
    report: dict[str, Any] = result.to_json()
    for section in ("factcheck", "logic"):
        assert report[section]["correct"] == report[section]["asked"]


def report_premises(result: ProbeEvaluation) -> dict[str, int]:
    report: dict[str, Any] = result.to_json()
    premises: dict[str, int] = report["logic"]["premises"]
    return premises


def test_a_model_knowing_nothing_says_no_and_errs_on_what_needs_knowledge() -> None:
    kg = toy_kg()
    conversations = probes(kg)
    said = answers(profile(knowledge=0.0, yes_bias=0.0), conversations, kg)
    for conversation in conversations:
        raw = said[(conversation.id, 0)]
        label = conversation.label
        if label == "two_hop_choice":
            assert (
                parse_choice(raw, extras_of(conversation, FactcheckExtras).options) is not None
            )  # a guess
        elif label.startswith(("yes_no", "two_hop")):
            assert parse_answer(raw) == Answer.NO, (label, raw)  # right only for false facts
        elif conversation.test_kind == TestKind.LOGIC:  # every fact denied, negations affirmed
            wrong = Answer.YES if conversation.expected == (Answer.NO,) else Answer.NO
            assert parse_logic_answer(raw) == wrong, (label, raw)
        elif label == "multiple_choice":
            assert (
                parse_choice(raw, extras_of(conversation, FactcheckExtras).options) is not None
            )  # a guess
        elif label == "wh":
            accepted = extras_of(conversation, FactcheckExtras).accepted
            assert raw.strip() and not match_wh(raw, accepted).matched  # a wrong place
            assert raw.strip(" .*") in {n.label for n in kg.nodes.values()}


def test_unknown_facts_are_declined_where_the_prompt_allows_it() -> None:
    kg = toy_kg()
    conversations = probes(kg)
    said = answers(profile(knowledge=0.0, yes_bias=0.0, refusal_rate=1.0), conversations, kg)
    for conversation in conversations:
        raw = said[(conversation.id, 0)]
        if conversation.test_kind == TestKind.LOGIC and conversation.label != "symmetric":
            assert parse_logic_answer(raw) == Answer.REFUSAL, raw
        elif (
            conversation.label.startswith(("yes_no", "two_hop"))
            and not extras_of(conversation, FactcheckExtras).options
        ):
            assert parse_answer(raw) in (Answer.YES, Answer.NO)  # its prompt asks for yes or no


def test_false_facts_get_yes_only_from_the_yes_bias() -> None:
    kg = toy_kg()
    conversations = by_label(probes(kg), "yes_no:distractor")
    assert conversations
    for bias, expected in ((0.0, Answer.NO), (1.0, Answer.YES)):
        said = answers(profile(knowledge=1.0, yes_bias=bias), conversations, kg)
        assert {parse_answer(raw) for raw in said.values()} == {expected}


def test_probes_share_the_knowledge_of_the_kontest_questions() -> None:
    """Per fact: the KONTEST answer, the yes-no probe, the inverted negation and the
    multiple-choice pick agree (no yes-bias and no noise, so only knowledge decides)."""
    kg = load_graph("places")
    finder = EntityFinder(kg)
    model = profile(knowledge=0.5, yes_bias=0.0)
    conversations = probes(kg, limit=80)
    seen = {True: 0, False: 0}
    for yes_no in by_label(conversations, "yes_no"):
        relation = yes_no.relation_id
        parent, child = (kg.label(part) for part in relation.split(">"))
        kontest = parse_answer(decide_answer(model, 3, [f"Does {parent} have a {child}?"], finder))
        known = kontest == Answer.YES
        seen[known] += 1
        others = {c.label: c for c in conversations if c.relation_id == relation}
        assert parse_answer(decide_answer(model, 3, [yes_no.turns[0].text], finder)) == kontest
        negation = decide_answer(model, 3, [others["negation"].turns[0].text], finder)
        assert parse_logic_answer(negation) == (Answer.NO if known else Answer.YES)
        if "multiple_choice" in others and known:
            choice = others["multiple_choice"]
            raw = decide_answer(model, 3, [choice.turns[0].text], finder)
            assert (
                parse_choice(raw, extras_of(choice, FactcheckExtras).options)
                == extras_of(choice, FactcheckExtras).answer
            )
    assert seen[True] > 5 and seen[False] > 5


def test_default_profile_errs_on_probes_about_as_often_as_it_lacks_knowledge() -> None:
    kg = load_graph("places")
    conversations = probes(kg, limit=200)
    result = evaluate_probes(conversations, answers(load_profile("default"), conversations, kg))
    report = result.to_json()
    for section in ("factcheck", "logic"):
        tally = report[section]
        share = tally["errors"] / tally["asked"]  # type: ignore[index]
        assert 0.08 < share < 0.4, (section, tally)
    assert report["logic"]["refusals"] > 0  # type: ignore[index]


def test_probe_answers_are_deterministic_per_seed() -> None:
    kg = toy_kg()
    conversations = probes(kg)
    model = load_profile("forgetful")
    first = answers(model, conversations, kg, seed=1)
    assert answers(model, conversations, kg, seed=1) == first
    assert answers(model, conversations, toy_kg(), seed=1) == first  # a fresh KG and finder
    assert answers(model, conversations, kg, seed=2) != first


def test_multiple_choice_and_wh_styles_are_read_by_the_probe_matchers() -> None:
    model = load_profile("default")
    options = [ChoiceOption(letter, f"Q{letter}", f"Place {letter}") for letter in "ABCD"]
    for style in model.choice_styles:
        raw = style.replace("{letter}", "C").replace("{label}", "Place C")
        assert parse_choice(raw, options) == "C", style
    for style in model.wh_styles:
        assert match_wh(style.replace("{label}", "County Cavan"), ["County Cavan"]).matched, style
    for style in model.refuse_styles:
        assert parse_logic_answer(style) == Answer.REFUSAL, style


def test_probe_style_lists_must_not_be_empty() -> None:
    with pytest.raises(ModelSpecError, match="choice"):
        profile_from_dict({"name": "x", "styles": {"choice": []}})


def test_without_a_kg_probes_still_get_the_right_shape_of_answer() -> None:
    kg = toy_kg()
    conversations = probes(kg)
    model = profile()
    for conversation in by_label(conversations, "multiple_choice"):
        raw = decide_answer(model, 0, [conversation.turns[0].text])
        assert parse_choice(raw, extras_of(conversation, FactcheckExtras).options) is not None
    for conversation in by_label(conversations, "negation"):
        raw = decide_answer(model, 0, [conversation.turns[0].text])
        assert parse_logic_answer(raw) in (Answer.YES, Answer.NO)


async def test_probe_answers_over_http_equal_in_process() -> None:
    kg = load_graph("places")
    conversations = probes(kg, limit=6)
    local = SimulatedModel("default", seed=0, kg=kg)
    process, url = start_sim_server("--kg", "places")
    client = OpenAIModel("default", f"{url}/v1", stream=True)
    try:
        for conversation in conversations:
            request = ChatRequest(
                (Message("user", conversation.turns[0].text),),
                ChatOptions(system_prompt=conversation.system_prompt),
            )
            expected = (await local.chat(request)).text
            assert (await client.chat(request)).text == expected, conversation.id
    finally:
        await client.aclose()
        process.terminate()
        process.wait(timeout=10)
