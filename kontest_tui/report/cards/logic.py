"""The card of a logic-rule question answered wrong (kinds/logic.py): the rule, the KG
facts it starts from as the model answered them, and whether the error is one of knowledge
or of reasoning."""

from __future__ import annotations

from collections.abc import Sequence

from kontest_tui.domain.extras import LogicExtras, PremiseExtras
from kontest_tui.domain.records import Answer, Verdict
from kontest_tui.report.explain import (
    BuiltCard,
    CardEvidence,
    card_answer,
    card_chat,
    card_conversation,
)
from kontest_tui.report.words import fact_words, quoted, read_word

_RULES = {
    "negation": "Negation: the knowledge graph states the fact, so the statement that it is "
    "not so is false.",
    "symmetric": "Symmetry: the relation holds both ways, so the fact stated the other way "
    "round is true too.",
    "inverse": "Inverse: the fact stated from the other side (the container includes the "
    "place) is true too.",
    "transitive": "Transitivity: the facts below chain into the fact asked, so it is true.",
    "composite": "Composite: the facts below chain into one fact, which is then stated from "
    "the other side{negated}.",
}


def card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    key = verdict.refs[0]
    conversation = card_conversation(evidence, key[0])
    extras = conversation.extras
    logic = extras if isinstance(extras, LogicExtras) else None
    rule = logic.rule if logic is not None else "rule"
    steps = logic.steps if logic is not None else rule
    expected = read_word(conversation.expected[0] if conversation.expected else None)
    got = read_word(verdict.answers[0]) if verdict.answers else "no answer"
    premises = logic.premises if logic is not None else ()
    chats = [
        card_chat(evidence, premise, "A fact from the knowledge graph the rule starts from")
        for premise in premises
        if premise in evidence.conversations
    ]
    chats.append(card_chat(evidence, key[0], "The question the rule derives", (key[1],)))
    headline = f"The rule gives the answer {expected}; the model said {got}."
    rule_text = _RULES.get(rule, f"The rule {rule}.").format(
        negated=", then negated" if "negation" in steps else ""
    )
    stated = _premise_facts(evidence, premises) or [quoted(fact)]
    reasons = [
        rule_text,
        f"The knowledge graph states {' and '.join(stated)}; the rule derives the question "
        f"below from {'it' if len(stated) == 1 else 'them'}, so its right answer is {expected}.",
    ]
    said = [card_answer(evidence, (premise, 0)) for premise in premises]
    if any(answer is Answer.NO for answer in said):
        reasons.append(
            "The model denied a fact the rule starts from: it does not know the fact "
            "(an error of knowledge)."
        )
    elif said and all(answer is Answer.YES for answer in said):
        reasons.append(
            "The model affirmed every fact the rule starts from and still got the derived "
            "fact wrong (an error of reasoning)."
        )
    return headline, chats, reasons, expected


def _premise_facts(evidence: CardEvidence, premises: Sequence[str]) -> list[str]:
    """The KG facts a logic rule starts from, quoted, by name ("“Ireland contains Ulster”")."""
    facts = []
    for premise in premises:
        conversation = evidence.conversations.get(premise)
        extras = conversation.extras if conversation is not None else None
        if isinstance(extras, PremiseExtras):
            parent, child = extras.fact
            facts.append(
                quoted(fact_words(evidence.names.name(parent), evidence.names.name(child)))
            )
    return facts
