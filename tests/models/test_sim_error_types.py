"""On the sample KGs the default simulated profile produces all four KONTEST error types."""

from __future__ import annotations

import pytest

from kontest_tui.domain.answers import parse_answer
from kontest_tui.generate.conversations import build_conversations
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.templates import load_template_set
from kontest_tui.kg.io import load_graph
from kontest_tui.models.base import ChatRequest, Message
from kontest_tui.models.sim import SimulatedModel, parse_question
from kontest_tui.oracles.evaluate import evaluate
from kontest_tui.oracles.report_json import ReportJSON


async def run_sim(sample: str, profile: str) -> ReportJSON:
    kg = load_graph(sample)
    relations = extract_relations(kg)
    conversations = build_conversations(kg, relations, load_template_set(sample))
    model = SimulatedModel(profile, seed=0)
    answers = {}
    for conversation in conversations:
        messages: list[Message] = []
        for turn, query in enumerate(conversation.turns):
            assert parse_question(query.text) is not None, query.text
            messages.append(Message("user", query.text))
            result = await model.chat(
                ChatRequest(tuple(messages), conversation_id=conversation.id, turn=turn)
            )
            messages.append(Message("assistant", result.text))
            answers[(conversation.id, turn)] = parse_answer(result.text)
    return evaluate(relations, conversations, answers).to_json()


@pytest.mark.parametrize("sample", ["places", "music"])
async def test_default_profile_shows_all_error_types(sample: str) -> None:
    report = await run_sim(sample, "default")
    for oracle in ("atomic", "sequential_intra", "sequential_inter", "ontological"):
        assert report["tests"][oracle] > 0
        assert 0 < report["errors"][oracle] < report["tests"][oracle], oracle
    assert 0 < report["invalid"] < report["executions"] * 0.1


async def test_careful_makes_fewer_errors_than_forgetful() -> None:
    careful = await run_sim("places", "careful")
    forgetful = await run_sim("places", "forgetful")
    assert careful["errors"]["total"] < forgetful["errors"]["total"]
    assert careful["gap"]["intersection"]["missing"] < forgetful["gap"]["intersection"]["missing"]
