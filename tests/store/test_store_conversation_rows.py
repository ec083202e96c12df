"""store.records.conversation_values: the row a conversation is stored as, the same text as
conversation_to_row (the JSON columns made from quoted strings, not by an encoder call)."""

from __future__ import annotations

from kontest_tui.domain.extras import LogicExtras
from kontest_tui.domain.records import Answer, Conversation, Query, TestKind
from kontest_tui.store.records import (
    CONVERSATION_COLUMNS,
    conversation_to_row,
    conversation_values,
    row_to_conversation,
)

ODD = 'Ünïcode "quoted" back\\slash\ttab\nnewline \x01 \u2028 \ud83c\udf0d 東京'


def test_values_are_the_row_of_conversation_to_row() -> None:
    conversations = [
        Conversation("r/t1", "r", "atomic", "Q1", (Query("r", "t1", "Is A in B?"),)),
        Conversation(
            f"{ODD}/a+b",
            ODD,
            "sequential",
            "A",
            (Query(ODD, "t1", ODD), Query(ODD, "t2", f"{ODD}?")),
            TestKind.LOGIC,
            (Answer.YES, None, Answer.NO),
            "system: 🌍",
            LogicExtras(rule=ODD, steps=ODD, expected_text="no", form=ODD, premises=(ODD,)),
        ),
        Conversation("x", "r", "atomic", "F", (), TestKind.FACTCHECK, (None,)),
    ]
    for position, conversation in enumerate(conversations):
        expected = {**conversation_to_row("s", position, conversation), "relation_key": 7}
        values = conversation_values("s", position, conversation, 7)
        assert dict(zip(CONVERSATION_COLUMNS, values, strict=True)) == expected
        assert row_to_conversation(expected) == conversation
        assert row_to_conversation(expected).extras == conversation.extras
