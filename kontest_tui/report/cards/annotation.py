"""The card of an annotated question answered against its annotation (kinds/annotation.py):
the question as asked, its annotation, the words its variant swapped and the passage."""

from __future__ import annotations

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import AnnotationExtras
from kontest_tui.domain.records import Verdict
from kontest_tui.report.cards.variant import changed_word_pairs
from kontest_tui.report.explain import BuiltCard, CardEvidence, card_chat, card_conversation
from kontest_tui.report.words import quoted, read_word


def card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    key = verdict.refs[0]
    conversation = card_conversation(evidence, key[0])
    extras = conversation.extras
    annotated = extras if isinstance(extras, AnnotationExtras) else None
    expected = conversation.expected[0] if conversation.expected else None
    got = read_word(verdict.answers[0]) if verdict.answers else "no answer"
    words = changed_word_pairs(conversation, evidence)
    chats = [card_chat(evidence, key[0], "The annotated question as asked", (key[1],))]
    headline = f"The annotation says {read_word(expected)}; the model said {got}."
    reasons = [
        f"This question comes from an annotated file "
        f"(line {annotated.line if annotated is not None else '?'}), whose "
        f"answer is {read_word(expected)}.",
    ]
    if words:
        reasons.append("It was asked with some words replaced: " + ", ".join(words) + ".")
    passage = clean_text(annotated.passage if annotated is not None else "").strip()
    if passage:
        reasons.append(f"The passage the annotation rests on: {quoted(passage[:600])}.")
    reasons.append(f"An answer other than {read_word(expected)} fails the test.")
    return headline, chats, reasons, read_word(expected)
