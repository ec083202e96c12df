"""The stability test of a session asked with fresh conversations (`kontest run
--fresh-conversations`, the KONTEST paper's setting).

There every conversation is asked from scratch, so a sequential conversation's first turn is
the same input as the relation's atomic question under that template (Q1 = A1, Q2 = B1), asked
again. The test holds the two answers to each other: an error when the model answered the
same question two ways. It runs when both answers are YES or NO; it is not a KONTEST oracle
(never in `errors.total`), and without fresh conversations a first turn reuses the atomic
answer, so the test is not made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Verdict
from kontest_tui.oracles.conversation_index import (
    RelationConversations,
    get_valid_answer,
    index_conversations,
    turn_label,
)

STABILITY = "stability"


def find_stability_verdicts(
    conversations: Iterable[Conversation],
    answers: Mapping[AnswerKey, Answer],
    *,
    index: Mapping[str, RelationConversations] | None = None,
) -> list[Verdict]:
    """Per sequential conversation with a valid first answer: its first turn vs the atomic
    answer of the same template (see the module docstring)."""
    if index is None:
        index = index_conversations(conversations)
    verdicts: list[Verdict] = []
    for entry in index.values():
        for conversation in entry.sequential:
            template_id = conversation.turns[0].template_id
            atomic = entry.atomic.get(template_id)
            if atomic is None:
                continue
            alone = get_valid_answer(answers, (atomic.id, 0))
            first = get_valid_answer(answers, (conversation.id, 0))
            if alone is None or first is None:
                continue
            verdicts.append(
                Verdict(
                    STABILITY,
                    entry.relation_id,
                    template_id,
                    alone != first,
                    ((atomic.id, 0), (conversation.id, 0)),
                    (alone, first),
                    f"{turn_label(atomic, 0)} said {alone.value}, "
                    f"{turn_label(conversation, 0)} said {first.value} (the same question)",
                )
            )
    return verdicts
