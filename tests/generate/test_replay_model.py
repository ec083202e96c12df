"""The replay model: most specific key first, repeated keys in generation order whatever the
order of asking, missing answers as a non-retryable ModelError, malformed files named by line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kontest_tui.domain.records import Conversation, Query
from kontest_tui.errors import InvalidInputError, ModelError, ModelSpecError
from kontest_tui.generate.conversations import build_conversations
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.templates import load_template_set
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.models.base import ChatModel, ChatRequest, Message
from kontest_tui.models.replay import ReplayModel, write_recording

Q1 = "Does Ireland have a Kinawley?"
Q2 = "Is there a Kinawley in Ireland?"


def write_jsonl(tmp_path: Path, records: list[dict[str, object]], name: str = "rec.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(record) for record in records) + "\n", encoding="utf-8")
    return path


def request_for(conversation: Conversation, turn: int, answers: dict[tuple[str, int], str]):
    messages: list[Message] = []
    for index, query in enumerate(conversation.turns[: turn + 1]):
        messages.append(Message("user", query.text))
        if index < turn:
            messages.append(Message("assistant", answers.get((conversation.id, index), "")))
    return ChatRequest(
        messages=tuple(messages), conversation_id=conversation.id, turn=turn, kind=conversation.kind
    )


async def ask_all(model: ReplayModel, conversations: list[Conversation], seed: int):
    """Ask every turn in a shuffled order (turn order kept within a conversation)."""
    slots = [(c, turn) for c in conversations for turn in range(len(c.turns))]
    random.Random(seed).shuffle(slots)
    slots.sort(key=lambda slot: slot[1])  # earlier turns first, conversations shuffled
    answers: dict[tuple[str, int], str] = {}
    for conversation, turn in slots:
        result = await model.chat(request_for(conversation, turn, answers))
        answers[conversation.id, turn] = result.text
    return answers


def atomic(conversation_id: str, text: str) -> Conversation:
    query = Query("r", "t1", text)
    return Conversation(conversation_id, "r", "atomic", "Q1", (query,))


async def test_kinawley_replay_with_context_dependent_answers(
    tmp_path: Path, kinawley_kg: KnowledgeGraph
) -> None:
    conversations = build_conversations(
        kinawley_kg, extract_relations(kinawley_kg), load_template_set("places")
    )
    records = [
        {"query": "Does Ireland have a Ulster?", "answer": "Yes."},
        {"query": "Is there a Ulster in Ireland?", "answer": "Yes"},
        {"query": "Does Ulster have a Kinawley?", "answer": "Yes"},
        {"query": "Is there a Kinawley in Ulster?", "answer": "Yes"},
        {"messages": [Q1], "kind": "atomic", "answer": "No."},
        {"messages": [Q1], "kind": "sequential", "answer": "Yes"},
        {"messages": [Q2], "answer": "Yes, it is."},
        {"messages": [Q1, Q2], "answer": "No"},
        {"messages": [Q2, Q1], "kind": "sequential", "answer": "I am not sure."},
    ]
    model = ReplayModel(write_jsonl(tmp_path, records))
    assert isinstance(model, ChatModel)
    model.prepare(conversations)
    answers = await ask_all(model, conversations, seed=3)
    assert len(answers) == 18
    far = "Ireland>Ireland/Ulster/Kinawley"
    assert answers[f"{far}/t1", 0] == "No."
    assert answers[f"{far}/t2", 0] == "Yes, it is."
    assert answers[f"{far}/t1+t2", 0] == "Yes"
    assert answers[f"{far}/t1+t2", 1] == "No"
    assert answers[f"{far}/t2+t1", 0] == "Yes, it is."
    assert answers[f"{far}/t2+t1", 1] == "I am not sure."
    # Sequential second turns with no messages key fall back to the last message alone.
    near = "Ireland>Ireland/Ulster"
    assert answers[f"{near}/t1+t2", 1] == "Yes"
    assert answers[f"{near}/t2+t1", 1] == "Yes."


@pytest.mark.parametrize("seed", [0, 1, 2, 7])
async def test_repeated_keys_follow_generation_order(tmp_path: Path, seed: int) -> None:
    records = [
        {"query": "  Is there   a Garnich in Luxembourg?", "answer": "Yes"},
        {"query": "Is there a Garnich in Luxembourg?", "answer": "No"},
        {"query": "Is there a Garnich in Luxembourg?", "answer": "Not sure"},
    ]
    model = ReplayModel(write_jsonl(tmp_path, records))
    text = "Is there a Garnich in\nLuxembourg?"
    conversations = [atomic(f"p{n}:r/t1", text) for n in range(4)]
    model.prepare(conversations)
    answers = await ask_all(model, conversations, seed)
    assert [answers[f"p{n}:r/t1", 0] for n in range(4)] == ["Yes", "No", "Not sure", "Not sure"]


async def test_most_specific_key_wins(tmp_path: Path) -> None:
    records = [
        {"query": "Q?", "answer": "last-only"},
        {"messages": ["P?", "Q?"], "answer": "messages"},
        {"messages": ["P?", "Q?"], "kind": "sequential", "answer": "kind+messages"},
    ]
    model = ReplayModel(write_jsonl(tmp_path, records))

    async def ask(messages: list[str], kind: str) -> str:
        chat: list[Message] = []
        for text in messages:
            chat += [Message("user", text), Message("assistant", "x")]
        request = ChatRequest(messages=tuple(chat[:-1]), kind=kind)
        return (await model.chat(request)).text

    assert await ask(["P?", "Q?"], "sequential") == "kind+messages"
    assert await ask(["P?", "Q?"], "atomic") == "messages"
    assert await ask(["R?", "Q?"], "sequential") == "last-only"
    assert await ask(["Q?"], "atomic") == "last-only"


async def test_missing_answer_is_a_non_retryable_model_error(tmp_path: Path) -> None:
    model = ReplayModel(write_jsonl(tmp_path, [{"query": "Known?", "answer": "Yes"}]))
    conversation = atomic("x>y/t1", "Unknown?")
    model.prepare([conversation])
    with pytest.raises(ModelError) as caught:
        await model.chat(request_for(conversation, 0, {}))
    assert caught.value.retryable is False
    assert "no recorded answer" in str(caught.value) and "Unknown?" in str(caught.value)


async def test_tokens_are_streamed_and_check_summarises(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path, [{"query": "Known?", "answer": "Yes it is"}])
    model = ReplayModel(path)
    pieces: list[str] = []
    result = await model.chat(ChatRequest(messages=(Message("user", "Known?"),)), pieces.append)
    assert result.text == "Yes it is" and result.tokens == 3 and "".join(pieces) == "Yes it is"
    assert "1 recorded answers" in await model.check()
    path.write_text("{broken\n", encoding="utf-8")
    with pytest.raises(ModelError, match="rec.jsonl:1"):
        await model.check()
    await model.aclose()


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (['{"query": "a", "answer": "Yes"}', "", "{not json"], "rec.jsonl:3: not JSON"),
        (['["a", "b"]'], "rec.jsonl:1: expected a JSON object"),
        (['{"query": "a"}'], 'rec.jsonl:1: "answer" must be a string'),
        (['{"messages": [], "answer": "Yes"}'], 'rec.jsonl:1: "messages" must be'),
        (['{"messages": [1], "answer": "Yes"}'], 'rec.jsonl:1: "messages" items'),
        (['{"messages": ["a"], "kind": "both", "answer": "No"}'], 'rec.jsonl:1: "kind" must be'),
        (['{"question": "a", "answer": "No"}'], 'rec.jsonl:1: expected "messages" or "query"'),
    ],
)
def test_malformed_lines_name_file_and_line(
    tmp_path: Path, lines: list[str], expected: str
) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        ReplayModel(path)
    assert expected in str(caught.value)


def test_missing_file_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="replay file not found"):
        ReplayModel(tmp_path / "none.jsonl")


@pytest.mark.parametrize("seed", [0, 5])
async def test_recorded_run_replays_exactly_even_per_path(
    tmp_path: Path, build_kg, seed: int
) -> None:
    kg = build_kg([["Ireland", "Ulster", "Kinawley"], ["Ireland", "Ulster", "Belcoo"]])
    relations = extract_relations(kg, per_path=True)
    assert len(relations) == 6  # Ireland>Ulster twice
    conversations = build_conversations(kg, relations, load_template_set("places"))
    replies = ["Yes", "No", "Yes.", "no", "I'm not sure", "**Yes**", "Nope"]
    answers = {
        (c.id, turn): replies[(index + turn) % len(replies)]
        for index, c in enumerate(conversations)
        for turn in range(len(c.turns))
    }
    path = tmp_path / "recorded.jsonl"
    assert write_recording(path, conversations, answers) == 36
    model = ReplayModel(path)
    model.prepare(conversations)
    assert await ask_all(model, conversations, seed) == answers
