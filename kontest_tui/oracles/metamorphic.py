"""The metamorphic oracle (KONTEST Table 1): paraphrased questions must get the same answer.

Per relation and template pair (ta, tb), with Q1=[q_ta], Q2=[q_tb], A=[q_ta, q_tb] and
B=[q_tb, q_ta], there are five tests:

- atomic: Q1 vs Q2;
- sequential_intra: A1 vs A2 and B1 vs B2 (the two paraphrases inside one chat);
- sequential_inter: a question alone vs as the second turn after its paraphrase,
  Q2 vs A2 and Q1 vs B2.

A test runs only when both of its answers are YES or NO; a missing answer (run still in
progress) or an invalid one means the test is not counted. Error = the answers differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations

from kontest_tui.generate.records import Answer, AnswerKey, Conversation, Verdict
from kontest_tui.oracles.conversation_index import (
    RelationConversations,
    get_valid_answer,
    index_conversations,
    turn_label,
)

METAMORPHIC_ORACLES: tuple[str, ...] = ("atomic", "sequential_intra", "sequential_inter")


def find_metamorphic_verdicts(
    conversations: Iterable[Conversation],
    answers: Mapping[AnswerKey, Answer],
    *,
    index: Mapping[str, RelationConversations] | None = None,
) -> list[Verdict]:
    """Every metamorphic test that can run on the answers given so far, in relation order.

    `index` (from `index_conversations`) may be passed to avoid rebuilding it.
    """
    if index is None:
        index = index_conversations(conversations)
    verdicts: list[Verdict] = []
    for entry in index.values():
        verdicts.extend(find_relation_verdicts(entry, answers))
    return verdicts


def find_relation_verdicts(
    entry: RelationConversations, answers: Mapping[AnswerKey, Answer]
) -> list[Verdict]:
    """The metamorphic verdicts of one relation: per template pair atomic, intra, inter."""
    verdicts: list[Verdict] = []
    rank = {template_id: position for position, template_id in enumerate(entry.templates)}
    pairs: dict[tuple[str, str], list[Conversation]] = {}
    for conversation in entry.sequential:
        first, second = conversation.turns[0].template_id, conversation.turns[1].template_id
        if first == second:
            continue
        pair = (first, second) if rank[first] < rank[second] else (second, first)
        pairs.setdefault(pair, []).append(conversation)
    if not pairs:
        # No sequential conversations: compare every two atomic questions only.
        for pair in combinations(entry.templates, 2):
            pairs[pair] = []
    for (first, second), sequences in pairs.items():
        # The sequence that starts with the pair's first template is "A", the other "B".
        sequences = sorted(sequences, key=lambda conv: rank[conv.turns[0].template_id])
        q_first, q_second = entry.atomic.get(first), entry.atomic.get(second)
        if q_first is not None and q_second is not None:
            _append(
                verdicts,
                "atomic",
                entry.relation_id,
                f"{first}+{second}",
                (q_first, 0),
                (q_second, 0),
                answers,
            )
        for conversation in sequences:
            template_id = f"{conversation.turns[0].template_id}+{conversation.turns[1].template_id}"
            _append(
                verdicts,
                "sequential_intra",
                entry.relation_id,
                template_id,
                (conversation, 0),
                (conversation, 1),
                answers,
            )
        for conversation in sequences:
            asked_second = conversation.turns[1].template_id
            alone = entry.atomic.get(asked_second)
            if alone is not None:
                _append(
                    verdicts,
                    "sequential_inter",
                    entry.relation_id,
                    asked_second,
                    (alone, 0),
                    (conversation, 1),
                    answers,
                )
    return verdicts


def _append(
    verdicts: list[Verdict],
    oracle: str,
    relation_id: str,
    template_id: str,
    left: tuple[Conversation, int],
    right: tuple[Conversation, int],
    answers: Mapping[AnswerKey, Answer],
) -> None:
    left_key = (left[0].id, left[1])
    right_key = (right[0].id, right[1])
    left_answer = get_valid_answer(answers, left_key)
    if left_answer is None:
        return
    right_answer = get_valid_answer(answers, right_key)
    if right_answer is None:
        return
    detail = (
        f"{turn_label(*left)} said {_WORDS[left_answer]}, "
        f"{turn_label(*right)} said {_WORDS[right_answer]}"
    )
    verdicts.append(
        Verdict(
            oracle,
            relation_id,
            template_id,
            left_answer is not right_answer,
            (left_key, right_key),
            (left_answer, right_answer),
            detail,
        )
    )


_WORDS = {Answer.YES: "yes", Answer.NO: "no"}
