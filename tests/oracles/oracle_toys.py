"""Hand-built KONTEST records for the oracle tests (no dependency on generate.conversations)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Query, Relation

Y, N, X = Answer.YES, Answer.NO, Answer.INVALID


def build_relations(path: Sequence[str], prefix: str = "") -> list[Relation]:
    """Algorithm 1 on one path: every ancestor -> descendant pair (parent-major order)."""
    return [
        Relation(
            id=f"{prefix}{path[i]}>{path[j]}",
            parent=path[i],
            child=path[j],
            type="contains",
            path=tuple(path[i : j + 1]),
        )
        for i in range(len(path))
        for j in range(i + 1, len(path))
    ]


def query(relation: Relation, template_id: str) -> Query:
    return Query(
        relation.id, template_id, f"[{template_id}] {relation.parent} has {relation.child}?"
    )


def build_conversations(
    relations: Sequence[Relation], templates: Sequence[str] = ("t1", "t2")
) -> list[Conversation]:
    """Per relation: atomic Q1, Q2 and sequential A=[t1,t2], B=[t2,t1] (opaque ids on purpose)."""
    first, second = templates
    conversations = []
    for number, relation in enumerate(relations):
        q1, q2 = query(relation, first), query(relation, second)
        conversations += [
            Conversation(f"c{number}-0", relation.id, "atomic", "Q1", (q1,)),
            Conversation(f"c{number}-1", relation.id, "atomic", "Q2", (q2,)),
            Conversation(f"c{number}-2", relation.id, "sequential", "A", (q1, q2)),
            Conversation(f"c{number}-3", relation.id, "sequential", "B", (q2, q1)),
        ]
    return conversations


def script_answers(
    conversations: Sequence[Conversation],
    script: Mapping[str, Mapping[str, Sequence[Answer | None]]],
) -> dict[AnswerKey, Answer]:
    """{relation id: {label: [answer per turn]}} -> answers keyed (conversation id, turn).

    None in a script means the answer has not arrived yet (left out of the mapping).
    """
    answers: dict[AnswerKey, Answer] = {}
    for conversation in conversations:
        per_label = script.get(conversation.relation_id, {})
        for turn, answer in enumerate(per_label.get(conversation.label, ())):
            if answer is not None:
                answers[(conversation.id, turn)] = answer
    return answers


def conversation_id(conversations: Sequence[Conversation], relation_id: str, label: str) -> str:
    for conversation in conversations:
        if conversation.relation_id == relation_id and conversation.label == label:
            return conversation.id
    raise KeyError((relation_id, label))
