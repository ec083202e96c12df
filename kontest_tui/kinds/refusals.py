"""Refusals among a kind's yes/no answers, which the variant and annotation sections count."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kontest_tui.domain.answers import is_refusal
from kontest_tui.domain.records import Answer, AnswerKey, Conversation


def count_refusals(
    conversations: Iterable[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
) -> int:
    """Answered yes/no turns that are not yes or no and decline to answer ("I don't know"):
    invalid answers, reported on their own as refusals."""
    count = 0
    for conversation in conversations:
        for position in range(len(conversation.turns)):
            key = (conversation.id, position)
            answer = answers.get(key)
            if answer is None or answer in (Answer.YES, Answer.NO, "yes", "no"):
                continue
            count += answer == Answer.REFUSAL or is_refusal(raw.get(key))
    return count
