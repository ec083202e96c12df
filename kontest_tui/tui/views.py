"""What the live screen (and the curation screens) show of an evaluation held in memory:
its verdicts, its Report JSON, and how conversations are labelled. The results screen reads
the store's views instead (store.views)."""

from __future__ import annotations

from typing import Any

from kontest_tui.domain.records import Conversation, Verdict
from kontest_tui.oracles.evaluate import Evaluation

METAMORPHIC_ORACLES = ("atomic", "sequential_intra", "sequential_inter")
KIND_ORACLES = ("variant", "factcheck", "logic", "annotation")  # the other test kinds' oracles


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
