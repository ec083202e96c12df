"""The simulated model recognises KG relations in non-template wording (variants, aliases)."""

from __future__ import annotations

import dataclasses
import importlib.util
import random
import re
from pathlib import Path

import pytest

from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import load_graph
from kontest_tui.models.base import ChatRequest, Message
from kontest_tui.models.sim import SimulatedModel, decide_answer, load_profile, parse_question
from kontest_tui.models.sim.entities import EntityFinder, fold_text


def synthetic_graph(relations: int, seed: int) -> KnowledgeGraph:
    """The seeded synthetic places KG of benchmarks/synthetic_kg.py."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "synthetic_kg.py"
    spec = importlib.util.spec_from_file_location("synthetic_kg", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graph: KnowledgeGraph = module.synthetic_graph(relations, seed)
    return graph


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
    # wordings no template has ("Is Kinawley found in Ireland?" would be the natural t2,
    # "Is {child} in {parent}?", with the child "Kinawley found")
    wordings = [
        "Does Ireland possess a Kinawley?",
        "Does Éire hold a Kinawley?",
        "Is Kinawley found within Ireland?",
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
    from kontest_tui.kg.io import load_graph
    from kontest_tui.models.ollama import OllamaModel
    from tests.models.model_test_servers import start_sim_server

    questions = [
        "Does Ireland possess a Kinawley?",
        "Does Qatar hold a Doha?",
        "Is Lusail within Qatar?",
    ]
    kg = load_graph("places")
    local = SimulatedModel("default", kg=kg)
    process, url = start_sim_server("--kg", "places")
    try:
        client = OllamaModel("sim", url)
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


def regex_names(finder: EntityFinder, text: str) -> list[str]:
    """The names one regex over every name finds (the finder's former way), folded."""
    ordered = sorted(finder._ordered_ids, key=len, reverse=True)
    pattern = re.compile(
        r"(?<!\w)(" + "|".join(re.escape(name) for name in ordered) + r")(?!\w)", re.IGNORECASE
    )
    return [fold_text(match.group(1)) for match in pattern.finditer(text)]


def exotic_kg() -> KnowledgeGraph:
    labels = [
        "İzmir",
        "Straße",
        "Σίσυφος",
        "ſtar",
        "Kelvin K",
        "Ω",
        "東京",
        "ab",
        "a",
        "ab c",
        "Ab Cd",
        "x_y",
        "Ireland",
        "Ire",
        "DŽemal",
        "ᲀ city",
    ]
    nodes = {f"Q{i}": Node(f"Q{i}", label, (), "place") for i, label in enumerate(labels)}
    edges = [Edge("Q0", f"Q{i}") for i in range(1, len(labels))]
    return KnowledgeGraph("exotic", "places", nodes, edges)


@pytest.mark.parametrize("source", ["places", "music", "subdivisions", "synthetic", "exotic"])
def test_name_scan_finds_what_the_one_regex_found(source: str) -> None:
    if source == "synthetic":
        kg = synthetic_graph(2000, seed=3)
    elif source == "exotic":
        kg = exotic_kg()
    else:
        kg = load_graph(source)
    finder = EntityFinder(kg)
    labels = [name for node in kg.nodes.values() for name in (node.label, *node.aliases)]
    rng = random.Random(7)
    texts = [
        "izmir İZMİR straße STRASSE σίσυφοσ ΣΊΣΥΦΟΣ star STAR kelvin k ω 東京 ab ab c abc a_b "
        "AB CD x_y x_yz Ireland Irelands Ire ǆemal ǅemal Дemal в city",
    ]
    for _ in range(300):
        words = [rng.choice(labels) for _ in range(3)]
        fillers = ["Does", "have", "a", "in", "-", "(", ")", "'s", "x", "the", " "]
        parts = [f"{rng.choice(fillers)} {word}" for word in words]
        text = "".join(parts) + "?"
        texts.append(rng.choice([text, text.upper(), text.lower(), text.swapcase()]))
    for text in texts:
        assert finder.names_in(text) == regex_names(finder, text), text


def test_fold_text_is_how_ignorecase_compares() -> None:
    pairs = ["İi", "ıI", "ſS", "µΜ", "ςΣ", "σΣ", "ϐβ", "Kk", "ᲀВ", "ǅǆ", "ẞß"]
    for a, b in (tuple(pair) for pair in pairs):  # each pair is two characters
        assert (fold_text(a) == fold_text(b)) == bool(re.fullmatch(re.escape(a), b, re.I)), a + b
    assert len(fold_text("İSTANBUL straße")) == len("İSTANBUL straße")


def test_template_patterns_are_read_once_per_model(isolated_home) -> None:
    from kontest_tui import paths
    from kontest_tui.models.sim.model import TemplatePatterns

    question = "Would Atlantis ever contain Poseidonia?"
    kept, rechecked = TemplatePatterns(), TemplatePatterns(recheck=0.0)
    assert parse_question(question, kept.current()) is None
    assert parse_question(question, rechecked.current()) is None
    folder = paths.config_dir() / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "myths.toml").write_text(
        'domain = "myths"\ndefault_type = "contains"\n'
        '[[templates]]\nid = "t1"\n[templates.texts]\n'
        'contains = "Would {parent} ever contain {child}?"\n'
    )
    assert parse_question(question, kept.current()) is None  # an in-process model: read once
    parsed = parse_question(question, rechecked.current())  # sim serve: re-checked
    assert parsed is not None and parsed.template_id == "t1"
