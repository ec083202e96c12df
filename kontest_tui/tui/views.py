"""How the explorer names what it shows: the oracles by family, and a conversation by its
kind and label (`Q1 atomic`, `factcheck wh`). Figures come from the engine and the store."""

from __future__ import annotations

from kontest_tui.domain.records import Conversation

METAMORPHIC_ORACLES = ("atomic", "sequential_intra", "sequential_inter")
KIND_ORACLES = ("variant", "factcheck", "logic", "annotation")  # the other test kinds' oracles


def is_kontest(conversation: Conversation) -> bool:
    """Whether a conversation is a KONTEST paraphrase test (not another test kind's)."""
    return str(conversation.test_kind) == "kontest"


def conversation_label(conversation: Conversation) -> str:
    """How views name a conversation: `Q1 atomic`, `A sequential` for KONTEST, the kind
    then its own label for the others (`factcheck wh`, `logic negation`, `variant t1 v3`)."""
    if is_kontest(conversation):
        return f"{conversation.label} {conversation.kind}"
    return f"{conversation.test_kind} {conversation.label}"
