"""The card of a covering-array variant's flip (kinds/variant.py): the original question
(or the answer most variants got) beside the variant, and the words it swapped."""

from __future__ import annotations

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Conversation, Verdict
from kontest_tui.oracles.variant import FLIPS_MARK, changed_words, variant_row
from kontest_tui.report.explain import (
    BuiltCard,
    CardEvidence,
    card_chat,
    card_conversation,
    compared_pair,
)
from kontest_tui.report.words import quoted


def changed_word_pairs(conversation: Conversation, evidence: CardEvidence) -> list[str]:
    """`have → include`, `Canton of Capellen → Capellen` for a variant's changed words."""
    relation = evidence.relations.get(conversation.relation_id)
    words = []
    for name, value in changed_words(conversation).items():
        if name in ("parent", "child") and relation is not None:
            node = relation.parent if name == "parent" else relation.child
            was = evidence.names.label(node)
        else:
            was = name.split(":", 1)[-1]
        words.append(f"{clean_text(was)} → {clean_text(value)}")
    return words


def card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    left, right, first, second = compared_pair(verdict)
    variant = card_conversation(evidence, right[0])
    words = changed_word_pairs(variant, evidence)
    reference = card_conversation(evidence, left[0])
    original = variant_row(reference) == 0
    chats = [
        card_chat(
            evidence,
            left[0],
            "The original question" if original else "The answer most variants got",
            (left[1],),
        ),
        card_chat(evidence, right[0], "A variant with some words replaced", (right[1],)),
    ]
    changes = ", ".join(quoted(word) for word in words) if words else "no word changed"
    headline = (
        f"The {'original question' if original else 'usual answer'} was {first}; the variant "
        f"with {changes} got {second}."
    )
    reasons = [
        f"Both questions ask whether {fact}. The variant swaps words for synonyms or "
        f"other names of the same place: {changes}.",
        "Words that carry the meaning (the template's fixed words) are never replaced, so "
        "both questions mean the same.",
        f"The answers differ ({first} and {second}): the wording, not the fact, changed "
        "what the model said.",
    ]
    if FLIPS_MARK in verdict.detail:
        causes = clean_text(verdict.detail.split(FLIPS_MARK, 1)[1]).replace(" -> ", " → ")
        reasons.append(
            "Among this question's variants, the answer flipped every time one of these "
            f"changes was used (flips of uses): {causes}."
        )
    return headline, chats, reasons, None
