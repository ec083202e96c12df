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

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Verdict
from kontest_tui.oracles.conversation_index import (
    RelationConversations,
    coerce_answer,
    index_conversations,
    turn_label,
)

METAMORPHIC_ORACLES: tuple[str, ...] = ("atomic", "sequential_intra", "sequential_inter")


def find_metamorphic_verdicts(
    conversations: Iterable[Conversation],
    answers: Mapping[AnswerKey, Answer],
    *,
    index: Mapping[str, RelationConversations] | None = None,
    planned: dict[str, int] | None = None,
) -> list[Verdict]:
    """Every metamorphic test that can run on the answers given so far, in relation order.

    `index` (from `index_conversations`) may be passed to avoid rebuilding it; `planned`, when
    given, is incremented per oracle for every test the conversations allow (answered or not).
    """
    if index is None:
        index = index_conversations(conversations)
    verdicts: list[Verdict] = []
    for entry in index.values():
        verdicts.extend(find_relation_verdicts(entry, answers, planned))
    return verdicts


def find_relation_verdicts(
    entry: RelationConversations,
    answers: Mapping[AnswerKey, Answer],
    planned: dict[str, int] | None = None,
) -> list[Verdict]:
    """The metamorphic verdicts of one relation: per template pair atomic, intra, inter."""
    verdicts: list[Verdict] = []
    append = verdicts.append
    get = answers.get
    relation_id = entry.relation_id
    plan = plan_relation_tests(entry)
    if planned is not None:
        for test in plan:
            planned[test[0]] = planned.get(test[0], 0) + 1
    for oracle, template_id, left, left_turn, right, right_turn in plan:
        left_key = (left.id, left_turn)
        left_answer = get(left_key)
        if left_answer is not _YES and left_answer is not _NO:
            if left_answer is None:
                continue
            left_answer = coerce_answer(left_answer)
            if left_answer is not _YES and left_answer is not _NO:
                continue
        right_key = (right.id, right_turn)
        right_answer = get(right_key)
        if right_answer is not _YES and right_answer is not _NO:
            if right_answer is None:
                continue
            right_answer = coerce_answer(right_answer)
            if right_answer is not _YES and right_answer is not _NO:
                continue
        append(
            Verdict(
                oracle,
                relation_id,
                template_id,
                left_answer is not right_answer,
                (left_key, right_key),
                (left_answer, right_answer),
                f"{turn_label(left, left_turn)} said {_WORDS[left_answer]}, "
                f"{turn_label(right, right_turn)} said {_WORDS[right_answer]}",
            )
        )
    return verdicts


# (oracle, template id, left conversation, left turn, right conversation, right turn)
PlannedTest = tuple[str, str, Conversation, int, Conversation, int]


def plan_relation_tests(entry: RelationConversations) -> list[PlannedTest]:
    """Which answers the five tests per template pair compare, before looking at answers."""
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
    atomic = entry.atomic
    planned: list[PlannedTest] = []
    for (first, second), sequences in pairs.items():
        if len(sequences) > 1:
            # The sequence that starts with the pair's first template is "A", the other "B".
            sequences = sorted(sequences, key=lambda conv: rank[conv.turns[0].template_id])
        q_first, q_second = atomic.get(first), atomic.get(second)
        if q_first is not None and q_second is not None:
            planned.append(("atomic", f"{first}+{second}", q_first, 0, q_second, 0))
        for conversation in sequences:
            turns = conversation.turns
            template_id = f"{turns[0].template_id}+{turns[1].template_id}"
            planned.append(("sequential_intra", template_id, conversation, 0, conversation, 1))
        for conversation in sequences:
            asked_second = conversation.turns[1].template_id
            alone = atomic.get(asked_second)
            if alone is not None:
                planned.append(("sequential_inter", asked_second, alone, 0, conversation, 1))
    return planned


_YES, _NO = Answer.YES, Answer.NO
_WORDS = {Answer.YES: "yes", Answer.NO: "no"}
