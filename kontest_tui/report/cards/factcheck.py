"""The card of a FactChecker question answered wrong (kinds/factcheck.py): the right
option, name or yes/no beside the reply, and how the question was made."""

from __future__ import annotations

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import CHOICE_TYPES, FactcheckExtras
from kontest_tui.domain.records import Verdict
from kontest_tui.probes.matching import match_wh, parse_choice
from kontest_tui.report.explain import (
    KG,
    BuiltCard,
    CardEvidence,
    card_chat,
    card_conversation,
    card_response,
)
from kontest_tui.report.words import QUESTION_TYPES, fact_words, quoted, read_word


def _option_text(extras: FactcheckExtras, letter: str | None) -> str:
    if letter is None:
        return "no option"
    option = extras.option(letter)
    return f"{letter}) {clean_text(option.label)}" if option is not None else letter


def card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    key = verdict.refs[0]
    conversation = card_conversation(evidence, key[0])
    extras = conversation.extras
    if not isinstance(extras, FactcheckExtras):
        extras = FactcheckExtras(question_type="yes_no")
    qtype = extras.question_type
    response = card_response(evidence, key)
    raw = response.raw if response is not None else ""
    reasons = [f"This is {QUESTION_TYPES.get(qtype, 'a question with a known answer')}."]
    read: dict[int, str] = {}
    judged: dict[int, str] = {}
    if qtype in CHOICE_TYPES:
        chosen = parse_choice(raw, extras.options) if raw else None
        expected = _option_text(extras, str(extras.answer))
        got = _option_text(extras, chosen)
        read[key[1]] = f"option {got}" if chosen else "no option"
        right = chosen is not None and chosen == str(extras.answer)
        judged[key[1]] = f"{'right' if right else 'wrong'}: the right option is {expected}"
        headline = f"The right option is {expected}; the model chose {got}."
    elif qtype == "wh":
        accepted = [clean_text(label) for label in extras.accepted]
        expected = " or ".join(quoted(label) for label in accepted) or "unknown"
        found = match_wh(raw, accepted) if accepted else None
        matched = found is not None and found.matched
        read[key[1]] = "names the right entity" if matched else "another name"
        judged[key[1]] = f"{'right' if matched else 'wrong'}: {KG} says {expected}"
        headline = f"The right answer is {expected}; the model's reply does not name it."
        if found is not None:
            reasons.append(
                f"The reply was compared with the name and its aliases: the closest is "
                f"{quoted(clean_text(found.against))} (similarity {found.score:.0f} of 100), "
                "not close enough to count as the same name."
            )
    else:
        expected = read_word(conversation.expected[0] if conversation.expected else None)
        got = read_word(verdict.answers[0]) if verdict.answers else "no answer"
        headline = f"The right answer is {expected}; the model said {got}."
        distractor = extras.distractor
        if distractor and expected == "no":
            reasons.append(
                f"The question names {evidence.names.name(distractor)} in place of a "
                "real member: the knowledge graph says it is not there, so the answer is no."
            )
        middle = extras.middle
        relation = evidence.relations.get(verdict.relation_id)
        if middle and qtype == "two_hop" and relation is not None:
            names = evidence.names
            parent, child, between = (
                names.name(relation.parent),
                names.name(relation.child),
                names.name(middle),
            )
            reasons.append(
                f"It spans two facts of the knowledge graph that meet at {between}: "
                f"{quoted(fact_words(parent, between))} and {quoted(fact_words(between, child))}."
            )
    reasons.append(f"The knowledge graph gives the answer {expected}; the model's differs.")
    chats = [card_chat(evidence, key[0], "The question, asked alone", (key[1],), read, judged)]
    return headline, chats, reasons, expected
