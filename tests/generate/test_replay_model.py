"""The replay model: most specific key first, repeated keys in generation order whatever the
order of asking, each line answering one turn, a turn not in the recording a non-retryable
ModelError (never another line's answer), malformed files named by line."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
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


def write_jsonl(tmp_path: Path, records: Sequence[object], name: str = "rec.jsonl") -> Path:
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
        try:
            result = await model.chat(request_for(conversation, turn, answers))
        except ModelError as error:
            assert error.retryable is False and "not in the recording" in str(error)
            continue
        answers[conversation.id, turn] = result.text
    return answers


def atomic(conversation_id: str, text: str) -> Conversation:
    query = Query("r", "t1", text)
    return Conversation(conversation_id, "r", "atomic", "Q1", (query,))


async def test_kinawley_replay_with_context_dependent_answers(
    tmp_path: Path, kinawley_kg: KnowledgeGraph
) -> None:
    conversations = build_conversations(
        kinawley_kg, extract_relations(kinawley_kg), load_template_set("paper", "places")
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
    far = "Ireland>Ireland/Ulster/Kinawley"
    assert answers[f"{far}/t1", 0] == "No."
    assert answers[f"{far}/t2", 0] == "Yes, it is."
    assert answers[f"{far}/t1+t2", 0] == "Yes"
    assert answers[f"{far}/t1+t2", 1] == "No"
    # Q2 alone is recorded once, with no kind: the atomic question takes it, so the
    # sequential conversation asking it first is not in the recording (nor its second turn).
    assert (f"{far}/t2+t1", 0) not in answers
    assert answers[f"{far}/t2+t1", 1] == "I am not sure."
    # A second turn is never answered by a line holding its question alone.
    near = "Ireland>Ireland/Ulster"
    assert answers[f"{near}/t1", 0] == "Yes."
    assert (f"{near}/t1+t2", 0) not in answers and (f"{near}/t1+t2", 1) not in answers
    assert (f"{near}/t2+t1", 1) not in answers


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
    assert [answers.get((f"p{n}:r/t1", 0)) for n in range(4)] == ["Yes", "No", "Not sure", None]


async def test_most_specific_key_wins_and_each_line_answers_once(tmp_path: Path) -> None:
    records = [
        {"query": "Q?", "answer": "alone"},
        {"messages": ["P?", "Q?"], "answer": "messages"},
        {"messages": ["P?", "Q?"], "kind": "sequential", "answer": "kind+messages"},
        {"messages": ["Q?"], "kind": "sequential", "answer": "sequential first turn"},
    ]
    model = ReplayModel(write_jsonl(tmp_path, records))

    async def ask(messages: list[str], kind: str) -> str | None:
        chat: list[Message] = []
        for text in messages:
            chat += [Message("user", text), Message("assistant", "x")]
        request = ChatRequest(messages=tuple(chat[:-1]), kind=kind)
        try:
            return (await model.chat(request)).text
        except ModelError as error:
            assert "not in the recording" in str(error) and error.retryable is False
            return None

    assert await ask(["P?", "Q?"], "sequential") == "kind+messages"
    assert await ask(["P?", "Q?"], "sequential") == "messages"  # the kind's line is used
    assert await ask(["P?", "Q?"], "atomic") is None  # both lines used
    assert await ask(["R?", "Q?"], "sequential") is None  # never the last question alone
    assert await ask(["Q?"], "atomic") == "alone"  # not the sequential line
    assert await ask(["Q?"], "sequential") == "sequential first turn"
    assert await ask(["Q?"], "atomic") is None


async def test_missing_answer_is_a_non_retryable_model_error(tmp_path: Path) -> None:
    model = ReplayModel(write_jsonl(tmp_path, [{"query": "Known?", "answer": "Yes"}]))
    conversation = atomic("x>y/t1", "Unknown?")
    model.prepare([conversation])
    with pytest.raises(ModelError) as caught:
        await model.chat(request_for(conversation, 0, {}))
    assert caught.value.retryable is False
    assert "not in the recording" in str(caught.value) and "Unknown?" in str(caught.value)


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
