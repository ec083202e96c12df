"""Group a session's KONTEST conversations by relation, the shape every oracle reads.

Conversations are identified only by their fields (test_kind, kind, relation_id,
turns[i].template_id, label), never by parsing ids. Building the index is one pass over
the conversations, so the live view can rebuild it on every refresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, TestKind

# The answers an oracle compares; INVALID and REFUSAL never take part in a test.
VALID_ANSWERS: tuple[Answer, ...] = (Answer.YES, Answer.NO)


@dataclass(slots=True)
class RelationConversations:
    """The KONTEST conversations of one relation.

    `atomic` maps a template id to its single-question conversation (Q1, Q2, ...);
    `sequential` holds the multi-turn conversations (A, B) in input order; `templates`
    lists the template ids in order of first appearance.
    """

    relation_id: str
    atomic: dict[str, Conversation] = field(default_factory=dict)
    sequential: list[Conversation] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)

    def add_template(self, template_id: str) -> None:
        if template_id not in self.templates:
            self.templates.append(template_id)


def index_conversations(conversations: Iterable[Conversation]) -> dict[str, RelationConversations]:
    """Index KONTEST conversations by relation id (insertion order = conversation order).

    Conversations of other test kinds (variants, logic rules, ...) are skipped; a second
    atomic conversation for the same relation and template is ignored (the first counts).
    """
    index: dict[str, RelationConversations] = {}
    for conversation in conversations:
        if conversation.test_kind != TestKind.KONTEST or not conversation.turns:
            continue
        entry = index.get(conversation.relation_id)
        if entry is None:
            entry = index[conversation.relation_id] = RelationConversations(
                conversation.relation_id
            )
        if conversation.kind == "atomic":
            template_id = conversation.turns[0].template_id
            entry.add_template(template_id)
            entry.atomic.setdefault(template_id, conversation)
        elif conversation.kind == "sequential" and len(conversation.turns) >= 2:
            for turn in conversation.turns:
                entry.add_template(turn.template_id)
            entry.sequential.append(conversation)
    return index


def ordered_templates(index: Mapping[str, RelationConversations]) -> list[str]:
    """All template ids of a session in order of first appearance."""
    seen: dict[str, None] = {}
    for entry in index.values():
        for template_id in entry.templates:
            seen.setdefault(template_id, None)
    return list(seen)


def get_answer(answers: Mapping[AnswerKey, Answer | str], key: AnswerKey) -> Answer | None:
    """The parsed answer stored under `key` as an `Answer`, or None while it is missing."""
    answer = answers.get(key)
    if answer is None or type(answer) is Answer:
        return answer
    return coerce_answer(answer)


def get_valid_answer(answers: Mapping[AnswerKey, Answer | str], key: AnswerKey) -> Answer | None:
    """The answer under `key` when it is YES or NO, else None (missing or not comparable)."""
    answer = answers.get(key)
    if answer is _YES or answer is _NO:  # the common case, no conversion needed
        return answer
    if answer is None:
        return None
    answer = coerce_answer(answer)
    return answer if answer is _YES or answer is _NO else None


def coerce_answer(value: object) -> Answer:
    """An `Answer` from a stored value ("yes", "no", ...); anything unknown is INVALID."""
    try:
        return Answer(str(value).strip().lower())
    except ValueError:
        return Answer.INVALID


_YES, _NO = Answer.YES, Answer.NO


def turn_label(conversation: Conversation, turn: int) -> str:
    """One answer in a verdict's detail, by template and place, never the paper's codes
    (Q1, A2): "t1 alone", "t1 first of t1+t2", "t2 after t1". Readers see report.words."""
    turns = conversation.turns
    template_id = turns[turn].template_id if turn < len(turns) else "?"
    if conversation.kind == "atomic" or len(turns) < 2:
        return f"{template_id} alone"
    if turn == 0:
        return f"{template_id} first of {'+'.join(query.template_id for query in turns)}"
    return f"{template_id} after {'+'.join(query.template_id for query in turns[:turn])}"
