"""Views of a session for the results and live screens: each relation with its atomic
answers and error verdicts, its conversations turn by turn, and how they are labelled.

Grouping only: verdicts come from the oracles, the gap from oracles.coverage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kontest_tui.domain.records import Answer, Conversation, Relation, Verdict
from kontest_tui.oracles.coverage import list_gap_relations
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.tui.plan import SessionResult

METAMORPHIC_ORACLES = ("atomic", "sequential_intra", "sequential_inter")
KIND_ORACLES = ("variant", "factcheck", "logic", "annotation")  # the other test kinds' oracles


@dataclass
class TurnView:
    """One asked question with the model's raw answer and its parsed value."""

    question: str
    raw: str | None
    answer: Answer | None


@dataclass
class ConversationView:
    """One conversation with a view of each of its turns."""

    conversation: Conversation
    turns: list[TurnView]


@dataclass
class RelationView:
    """A relation with its atomic answer per template and its error verdicts."""

    relation: Relation
    answers: dict[str, Answer | None]
    conversations: list[ConversationView]
    errors: list[Verdict]

    @property
    def metamorphic_errors(self) -> list[Verdict]:
        return [verdict for verdict in self.errors if verdict.oracle in METAMORPHIC_ORACLES]

    @property
    def kind_errors(self) -> list[Verdict]:
        """Errors found by the other test kinds (variants, FactChecker, logic rules)."""
        return [verdict for verdict in self.errors if verdict.oracle in KIND_ORACLES]

    @property
    def ontological_errors(self) -> list[Verdict]:
        return [verdict for verdict in self.errors if verdict.oracle == "ontological"]


def verdicts_of(evaluation: Evaluation | None) -> list[Verdict]:
    """The verdicts of an evaluation (none before there is one)."""
    return list(evaluation.verdicts) if evaluation is not None else []


def report_of(evaluation: Evaluation | None) -> dict[str, Any]:
    """The Report JSON (DESIGN.md) of an evaluation, as a dict ({} before there is one)."""
    return dict(evaluation.to_json()) if evaluation is not None else {}


def is_kontest(conversation: Conversation) -> bool:
    """Whether a conversation is a KONTEST paraphrase test (not another test kind's)."""
    return str(conversation.test_kind) == "kontest"


def conversation_label(conversation: Conversation) -> str:
    """How views name a conversation: `Q1 atomic`, `A sequential` for KONTEST, the kind
    then its own label for the others (`factcheck wh`, `logic negation`, `variant t1 v3`)."""
    if is_kontest(conversation):
        return f"{conversation.label} {conversation.kind}"
    return f"{conversation.test_kind} {conversation.label}"


def build_relation_views(result: SessionResult) -> dict[str, RelationView]:
    """Each relation with its atomic answer per template and its error verdicts, by id.

    Conversations are left empty here: `conversation_views` fills them for the relations a
    detail pane shows (building a view of every turn up front cost ~20 ms for 12,000
    answers on each screen open).
    """
    views = {
        relation.id: RelationView(relation=relation, answers={}, conversations=[], errors=[])
        for relation in result.plan.relations
    }
    if result.evaluation is not None:
        for (relation_id, template_id), answer in result.evaluation.atomic_answers().items():
            view = views.get(relation_id)
            if view is not None:
                view.answers[template_id] = answer
    else:  # no evaluation yet: read the atomic answers from the conversations
        for conversation in result.plan.conversations:
            view = views.get(conversation.relation_id)
            if (
                view is not None
                and conversation.kind == "atomic"
                and conversation.turns
                and is_kontest(conversation)
            ):
                view.answers[conversation.turns[0].template_id] = result.answers.get(
                    (conversation.id, 0)
                )
    for verdict in verdicts_of(result.evaluation):
        if verdict.error and verdict.relation_id in views:
            views[verdict.relation_id].errors.append(verdict)
    return views


def gap_relations(result: SessionResult) -> dict[str, list[str]]:
    """Relation ids in each template's gap and in the intersection (key
    oracles.coverage.INTERSECTION), in plan order; {} before there is an evaluation."""
    evaluation = result.evaluation
    if evaluation is None:
        return {}
    relation_ids = [relation.id for relation in result.plan.relations]
    return list_gap_relations(relation_ids, evaluation.atomic_answers(), evaluation.gap)


def conversation_views(result: SessionResult, relation_id: str) -> list[ConversationView]:
    """Every conversation about one relation, each turn with its raw and parsed answer
    (the session's conversations are grouped by relation once, on the first call)."""
    if result.conversations_by_relation is None:
        grouped: dict[str, list[Conversation]] = {}
        for conversation in result.plan.conversations:
            grouped.setdefault(conversation.relation_id, []).append(conversation)
        result.conversations_by_relation = grouped
    return [
        ConversationView(
            conversation=conversation,
            turns=[
                TurnView(
                    question=query.text,
                    raw=result.raw.get((conversation.id, index)),
                    answer=result.answers.get((conversation.id, index)),
                )
                for index, query in enumerate(conversation.turns)
            ],
        )
        for conversation in result.conversations_by_relation.get(relation_id, [])
    ]


def fill_conversation_views(result: SessionResult, views: Sequence[RelationView]) -> None:
    """Fill the conversations of these views (once each) for a detail pane."""
    for view in views:
        if not view.conversations:
            view.conversations = conversation_views(result, view.relation.id)
