"""The simulated model recognises KG relations in non-template wording (variants, aliases)."""

from __future__ import annotations

import dataclasses

from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.models.base import ChatRequest, Message
from kontest_tui.models.sim import SimulatedModel, decide_answer, load_profile
from kontest_tui.models.sim.entities import EntityFinder


def toy_kg() -> KnowledgeGraph:
    nodes = {
        "Q27": Node("Q27", "Ireland", ("Éire",), "country"),
        "Q1": Node("Q1", "Ulster", (), "province"),
        "Q2": Node("Q2", "County Donegal", ("Donegal",), "county"),
        "Q3": Node("Q3", "Kinawley", (), "village"),
    }
    edges = [Edge("Q27", "Q1"), Edge("Q1", "Q2"), Edge("Q1", "Q3")]
    return KnowledgeGraph("toy", "places", nodes, edges)


def test_find_relation_by_labels_and_aliases() -> None:
    finder = EntityFinder(toy_kg())
    assert finder.find_relation("Does Ireland possess a Kinawley?") == ("Ireland", "Kinawley")
    assert finder.find_relation("Is there a Kinawley within  ulster?") == ("Ulster", "Kinawley")
    assert finder.find_relation("Is County Donegal part of Éire?") == ("Ireland", "County Donegal")
    # two siblings: no containment between them
    assert finder.find_relation("Is Kinawley near County Donegal?") is None
    assert finder.find_relation("Is Ulsterman a word?") is None  # whole words only


def test_variants_share_knowledge_of_the_fact() -> None:
    finder = EntityFinder(toy_kg())
    profile = dataclasses.replace(
        load_profile("default"), unsure_rate=0.0, variant_error=0.0, knowledge=0.5, yes_bias=0.0
    )
    wordings = [
        "Does Ireland possess a Kinawley?",
        "Does Éire hold a Kinawley?",
        "Is Kinawley found in Ireland?",
    ]
    yes_count = 0
    for seed in range(40):
        answers = {
            decide_answer(profile, seed, [w], finder) in profile.yes_styles for w in wordings
        }
        assert len(answers) == 1  # one fact, one belief, whatever the wording
        yes_count += answers.pop()
    assert 8 < yes_count < 32  # knowledge 0.5: the belief itself does vary with the seed
    # without the KG the wordings are unrelated questions and disagree for some seed
    assert any(
        len({decide_answer(profile, seed, [w]) in profile.yes_styles for w in wordings}) > 1
        for seed in range(40)
    )


async def test_open_model_passes_the_kg() -> None:
    from kontest_tui.models.specs import open_model

    model = open_model("sim", kg=toy_kg())
    assert isinstance(model, SimulatedModel) and model.entities is not None
    result = await model.chat(ChatRequest((Message("user", "Does Éire hold a Kinawley?"),)))
    assert result.text


async def test_sim_serve_kg_option_matches_in_process() -> None:
    from model_test_servers import start_sim_server

    from kontest_tui.kg.io import load_graph
    from kontest_tui.models.ollama import OllamaModel

    questions = [
        "Does Ireland possess a Kinawley?",
        "Does Qatar hold a Doha?",
        "Is Lusail within Qatar?",
    ]
    kg = load_graph("places")
    local = SimulatedModel("default", kg=kg)
    process, url = start_sim_server("--kg", "places")
    try:
        client = OllamaModel("m", url)
        try:
            for question in questions:
                request = ChatRequest((Message("user", question),))
                assert (await client.chat(request)).text == (await local.chat(request)).text
        finally:
            await client.aclose()
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert local.entities is not None
    assert local.entities.find_relation(questions[0]) == ("Ireland", "Kinawley")
