"""In-test ChatModels for the executor tests: scripted answers, scripted failures, call logs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from kontest_tui.domain.records import Conversation, Query, Relation
from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatRequest, ChatResult, TokenCallback
from kontest_tui.store.records import NewSession

DATA = Path(__file__).resolve().parent.parent / "data"
KINAWLEY_KG = DATA / "kinawley_kg.json"
KINAWLEY_REPLAY = DATA / "kinawley_replay.jsonl"  # the paper's texts: ask it with PAPER
PAPER = ("--templates", "paper")  # the template set the recordings were made with


class ToyModel:
    """Answers `answer(request)`; `failures[(conversation, turn)]` lists errors raised first."""

    def __init__(
        self,
        answer: Callable[[ChatRequest], str] | None = None,
        *,
        failures: dict[tuple[str, int], list[ModelError]] | None = None,
        delay: float = 0.0,
        spec: str = "toy:model",
    ) -> None:
        self.spec = spec
        self.answer = answer or (lambda request: "Yes")
        self.failures = {key: list(errors) for key, errors in (failures or {}).items()}
        self.delay = delay
        self.calls: list[ChatRequest] = []
        self.log: list[tuple[str, str, int]] = []  # ("start"|"end", conversation, turn)
        self.prepared = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        self.prepared += 1

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        self.calls.append(request)
        key = (request.conversation_id, request.turn)
        self.log.append(("start", *key))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            pending = self.failures.get(key)
            if pending:
                raise pending.pop(0)
            text = self.answer(request)
            if on_token is not None:
                for piece in text.split(" "):
                    on_token(piece)
            return ChatResult(text=text, tokens=len(text.split()))
        finally:
            self.in_flight -= 1
            self.log.append(("end", *key))

    async def check(self) -> str:
        return "toy ready"

    async def aclose(self) -> None:
        return None


def make_relations(count: int) -> list[Relation]:
    return [
        Relation(f"P{i}>C{i}", f"P{i}", f"C{i}", "contains", (f"P{i}", f"C{i}"))
        for i in range(count)
    ]


def make_conversations(relations: Sequence[Relation]) -> list[Conversation]:
    """The four KONTEST conversations per relation, built from records directly."""
    conversations: list[Conversation] = []
    for relation in relations:
        q1 = Query(relation.id, "t1", f"Does {relation.parent} have a {relation.child}?")
        q2 = Query(relation.id, "t2", f"Is there a {relation.child} in {relation.parent}?")
        conversations += [
            Conversation(f"{relation.id}/t1", relation.id, "atomic", "Q1", (q1,)),
            Conversation(f"{relation.id}/t2", relation.id, "atomic", "Q2", (q2,)),
            Conversation(f"{relation.id}/t1+t2", relation.id, "sequential", "A", (q1, q2)),
            Conversation(f"{relation.id}/t2+t1", relation.id, "sequential", "B", (q2, q1)),
        ]
    return conversations


def store_session(
    store,
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    model: str = "toy:model",
    options: dict[str, object] | None = None,
) -> str:  # noqa: ANN001
    """A stored session over toy records (no KG file needed), its chat options `options`
    (default: temperature 0, seed 0)."""
    return store.sessions.create(
        NewSession(
            kg_name="toy",
            kg_json={"name": "toy", "domain": "places", "nodes": [], "edges": []},
            templates_json={},
            template_ids=["t1", "t2"],
            model=model,
            options=options or {"temperature": 0.0, "seed": 0, "timeout": 5.0},
            labels={},
        ),
        relations=relations,
        conversations=conversations,
    )
