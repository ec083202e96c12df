"""Explanation cards: one error verdict told in plain sentences, for a person who never saw
the method.

A card names the fact tested by its labels, shows every question in full (each KONTEST
question with the template it was filled from, by the template's text), the model's reply
as it came and what was read from it, and why the oracle calls the answers an error:
atomic (two phrasings alone disagree), sequential within one conversation (the chat is
shown whole), sequential between conversations (the question alone vs after its other
phrasing), ontological (the yes-answers that imply a fact, and the no to it), variant (which
words changed), annotation, FactChecker and logic rules (the expected answer, the rule and
its premises). The paper's codes (Q1, A2, B1, t1) never appear in a card.

`build_card(verdict, evidence)` is a plain function over records; `CardEvidence` holds only
what the verdict refers to (its conversations, their answers, the relations, node names),
read from the store by `report.explain_store` or taken from a session already in memory.
Renderers are in `report.explain_render`.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import cast

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import (
    CHOICE_TYPES,
    AnnotationExtras,
    FactcheckExtras,
    LogicExtras,
)
from kontest_tui.domain.margins import LOW_MARGIN
from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Relation,
    Response,
    TestKind,
    Verdict,
)
from kontest_tui.errors import KontestError
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kinds.registry import kind_info
from kontest_tui.oracles.confirmation import (
    DRAW,
    METAMORPHIC,
    ONTOLOGICAL,
    TEMPLATE,
    status_word,
)
from kontest_tui.oracles.findings import (
    AFTER_OWN_REPLY,
    ATOMIC,
    NOT_COMPARED_ALONE,
    OPPOSITE_ALONE,
    REPEAT,
    SEQUENTIAL,
    fold_conversations,
    middle_doubts,
)
from kontest_tui.oracles.margins import is_weak
from kontest_tui.oracles.ontological import error_path
from kontest_tui.report.prompts import (
    COMPLETIONS,
    Prompting,
    asked_sentence,
    completion_prompt,
    prompting_of,
)
from kontest_tui.report.words import (
    Naming,
    capitalized,
    card_title,
    counted,
    describe_fact,
    doubt_sentence,
    oracle_name,
    oracle_words,
    quoted,
    read_word,
    verdict_sentence,
)
from kontest_tui.store.confirmations import Confirmation, ErrorKey, error_key

RAW_CHARS = 2000  # how much of one reply a card shows
KG = "the knowledge graph"
VALID = (Answer.YES, Answer.NO)
_QID = re.compile(r"Q[1-9][0-9]*")


@dataclass(frozen=True, slots=True)
class CardTurn:
    """One question and the model's reply: the text asked, the template it was filled from
    (its text, None for questions of other kinds), the reply as it came (control characters
    removed) and what was read from it, held to the right answer where it is known."""

    question: str
    phrasing: str | None
    raw: str | None  # None: no reply stored (not asked yet, or the call failed)
    read: str  # what was read, in words: "yes", "no", "neither yes nor no", ...
    compared: bool = False  # one of the answers the oracle compared
    # The reading held to the right answer: "wrong: the knowledge graph says yes" (None:
    # no right answer known, or the reply is neither yes nor no).
    judged: str | None = None
    # The text a completions-mode model continued for this reply (few-shot examples, the
    # conversation so far, the question); None for a chat model, whose chat is shown whole.
    prompt: str | None = None
    # How sure the model was: P(yes | yes or no) of this reply, where the model's server gave
    # token log-probabilities (None: not known, and nothing is shown).
    p_yes: float | None = None


@dataclass(frozen=True, slots=True)
class CardChat:
    """One conversation as the model saw it: a heading in words, the system prompt it began
    with (chat models; None otherwise), its turns in order."""

    heading: str
    turns: tuple[CardTurn, ...]
    system: str | None = None


@dataclass(frozen=True, slots=True)
class ExplanationCard:
    """One error in plain sentences (see the module docstring)."""

    oracle: str
    title: str  # CARD_TITLES[oracle]
    fact: str  # the fact tested, by labels: "Canton of Grevenmacher contains Junglinster"
    headline: str  # one sentence: what the model said
    chats: tuple[CardChat, ...]
    reasons: tuple[str, ...]  # why the oracle calls it an error, sentence by sentence
    expected: str | None = None  # the right answer, where the test kind knows it
    session: str | None = None
    model: str | None = None
    error: bool = True  # False: the card of a test that passed (shown for a probe's context)
    # What the knowledge graph says, with its source: "The knowledge graph “places”, from
    # Wikidata labels (P131 located in), says Qatar contains Ad Dawhah, so the right answer
    # is yes." (None: no knowledge graph behind this test, e.g. an annotated question).
    knowledge: str | None = None
    wrong: str | None = None  # which reply the right answer contradicts, in a sentence
    # Where this error stands among the relation's answers (oracles.findings): one
    # disagreement, a repeat of one, or a flip only after the model's own previous reply.
    finding: str | None = None
    doubts: tuple[str, ...] = ()  # middle nodes with an ambiguous or generic name
    asked: str | None = None  # how the model was asked (chat, completions, a recording)
    # Whether asking the fact again confirmed the error ("confirmed: the contradiction
    # came back in 3 of 4 tries"; None: not asked again, and nothing is shown), and each
    # try in a line (its phrasing or sample, the new answers, whether it held).
    confirmation: str | None = None
    tries: tuple[str, ...] = ()
    # How sure the model was of the answers compared: "Weak: ..." when each is close to a
    # coin toss; that no margin is known, once, when no reply of the card has one.
    margin: str | None = None


@dataclass(slots=True)
class CardEvidence:
    """What cards of one session need: the conversations a verdict refers to (and a logic
    rule's premises), their responses, the relations, the template texts and node names."""

    conversations: Mapping[str, Conversation]
    responses: Mapping[AnswerKey, Response]
    relations: Mapping[str, Relation]
    names: Naming
    template_set: TemplateSet | None = None
    session: str | None = None
    model: str | None = None
    extra: dict[str, object] = field(default_factory=dict)
    kg_name: str | None = None  # the knowledge graph's name (a sample, a file)
    kg_source: str | None = None  # where it comes from (its `source`: Wikidata, a file)
    prompting: Prompting | None = None  # how the model was asked (report.prompts)
    # node id -> AMBIGUOUS or GENERIC for the doubtful nodes among those the cards name
    # (oracles.findings.label_doubts over the whole graph's labels)
    doubts: Mapping[str, str] = field(default_factory=dict)
    # the errors asked again (store.confirmations), by error key
    confirmations: Mapping[ErrorKey, Confirmation] = field(default_factory=dict)


class CardError(KontestError):
    """A card cannot be made (the verdict refers to a conversation the session lacks)."""


def conversations_needed(verdict: Verdict) -> set[str]:
    """The conversation ids a verdict's card shows (its refs; premises come after)."""
    return {conversation_id for conversation_id, _turn in verdict.refs if conversation_id}


def premises_needed(conversations: Iterable[Conversation]) -> set[str]:
    """The premise conversations of the logic-rule conversations among `conversations`."""
    found: set[str] = set()
    for conversation in conversations:
        if isinstance(conversation.extras, LogicExtras):
            found.update(conversation.extras.premises)
    return found


def folded_relations(verdicts: Iterable[Verdict]) -> set[str]:
    """The relations whose KONTEST conversations a card reads to say where a metamorphic
    error stands among the relation's answers (oracles.findings)."""
    return {verdict.relation_id for verdict in verdicts if verdict.oracle in (ATOMIC, *SEQUENTIAL)}


def relations_needed(verdict: Verdict, conversations: Iterable[Conversation]) -> set[str]:
    """The relation ids a card names: the verdict's and those of the conversations shown."""
    return {verdict.relation_id, *(conversation.relation_id for conversation in conversations)}


def evidence_from_records(
    verdicts: Iterable[Verdict],
    conversations: Iterable[Conversation],
    responses: Mapping[AnswerKey, Response],
    relations: Iterable[Relation],
    names: Naming,
    *,
    template_set: TemplateSet | None = None,
    session: str | None = None,
    model: str | None = None,
    kg_name: str | None = None,
    kg_source: str | None = None,
    prompting: Prompting | None = None,
    doubts: Mapping[str, str] | None = None,
) -> CardEvidence:
    """Evidence for the cards of `verdicts` from a session held in memory (only the records
    those cards show are kept, with the KONTEST conversations of the metamorphic errors'
    relations). `doubts`: the graph's doubtful nodes (oracles.findings.label_doubts)."""
    verdicts = list(verdicts)
    by_id = {conversation.id: conversation for conversation in conversations}
    wanted: set[str] = set()
    for verdict in verdicts:
        wanted |= conversations_needed(verdict)
    wanted |= premises_needed(by_id[cid] for cid in wanted if cid in by_id)
    folded = folded_relations(verdicts)
    wanted |= {
        conversation.id
        for conversation in by_id.values()
        if conversation.relation_id in folded and conversation.test_kind is TestKind.KONTEST
    }
    kept = {cid: by_id[cid] for cid in wanted if cid in by_id}
    kept_responses = {key: response for key, response in responses.items() if key[0] in kept}
    return CardEvidence(
        conversations=kept,
        responses=kept_responses,
        relations={relation.id: relation for relation in relations},
        names=names,
        template_set=template_set,
        session=session,
        model=model,
        kg_name=kg_name,
        kg_source=kg_source,
        prompting=prompting if prompting is not None else prompting_of(model),
        doubts=dict(doubts or {}),
    )


# -- words -----------------------------------------------------------------------------------


def _phrasing(evidence: CardEvidence, template_id: str, relation_type: str | None) -> str | None:
    """The template's text ("Does {parent} have a {child}?") a question was filled from."""
    template_set = evidence.template_set
    if template_set is None or relation_type is None:
        return None
    for template in template_set.templates:
        if template.id == template_id:
            text = template.texts.get(relation_type)
            return clean_text(text) if text is not None else None
    return None


def card_conversation(evidence: CardEvidence, conversation_id: str) -> Conversation:
    found = evidence.conversations.get(conversation_id)
    if found is None:
        raise CardError(f"the session has no conversation {conversation_id!r} to explain")
    return found


def card_response(evidence: CardEvidence, key: AnswerKey) -> Response | None:
    response = evidence.responses.get(key)
    return response if response is not None and response.error is None else None


def card_answer(evidence: CardEvidence, key: AnswerKey) -> Answer | None:
    response = card_response(evidence, key)
    return response.answer if response is not None else None


def card_chat(
    evidence: CardEvidence,
    conversation_id: str,
    heading: str,
    compared: Sequence[int] = (),
    read: Mapping[int, str] | None = None,
    judged: Mapping[int, str] | None = None,
) -> CardChat:
    """A conversation as a card shows it: the system prompt it began with, every turn with
    its template's text, the prompt a completions model continued, the reply, its reading
    and that reading held to the right answer (`read`, `judged`: a turn's words given)."""
    conversation = card_conversation(evidence, conversation_id)
    relation = evidence.relations.get(conversation.relation_id)
    relation_type = relation.type if relation is not None else None
    prompting = evidence.prompting
    completions = prompting is not None and prompting.mode == COMPLETIONS
    turns = []
    asked: list[tuple[str, str | None]] = []  # the questions so far and their replies
    for index, query in enumerate(conversation.turns):
        response = card_response(evidence, (conversation.id, index))
        answer = response.answer if response is not None else None
        raw = None if response is None else _shorten(response.raw)
        word = read[index] if read is not None and index in read else read_word(answer)
        given = judged is not None and index in judged
        verdict = (
            judged[index] if judged is not None and given else _judged(conversation, index, answer)
        )
        phrasing = (
            _phrasing(evidence, query.template_id, relation_type)
            if _states_facts(conversation)
            else None
        )
        asked.append((query.text, response.raw if response is not None else None))
        prompt = completion_prompt(asked) if completions else None
        turns.append(
            CardTurn(
                clean_text(query.text),
                phrasing,
                raw,
                word,
                index in compared,
                judged=verdict,
                prompt=prompt or None,
                p_yes=response.p_yes if response is not None else None,
            )
        )
    system = prompting.system_of(conversation) if prompting is not None else None
    return CardChat(heading, tuple(turns), system)


def _states_facts(conversation: Conversation) -> bool:
    """Whether the conversation's kind asks the template set's phrasings of KG facts."""
    info = kind_info(str(conversation.test_kind))
    return info is not None and info.states_facts


def _expected(conversation: Conversation, turn: int) -> tuple[Answer | None, str]:
    """The right answer to one turn and who gives it ("the knowledge graph", "the
    annotation", "the rule"); None where the test kind knows none (a multiple-choice or open
    question is judged by its own card)."""
    extras = conversation.extras
    given = conversation.expected[turn] if turn < len(conversation.expected) else None
    if isinstance(extras, AnnotationExtras):
        return given, "the annotation"
    if _states_facts(conversation):
        return Answer.YES, KG  # every relation asked is a fact the knowledge graph states
    if isinstance(extras, LogicExtras):
        return given, "the rule"
    if isinstance(extras, FactcheckExtras) and extras.question_type in (*CHOICE_TYPES, "wh"):
        return None, KG
    return given, KG


def _judged(conversation: Conversation, turn: int, answer: Answer | None) -> str | None:
    """ "right: the knowledge graph says yes" / "wrong: ..." for a yes or no reply whose right
    answer is known; None otherwise."""
    expected, authority = _expected(conversation, turn)
    if expected not in VALID or answer not in VALID:
        return None
    verb = "gives" if authority == "the rule" else "says"
    right = "right" if answer is expected else "wrong"
    return f"{right}: {authority} {verb} {read_word(expected)}"


def _shorten(raw: str) -> str:
    """The reply as it came, control characters removed (its spaces kept: a completions
    model's " No" starts with one), cut after RAW_CHARS."""
    text = clean_text(raw)
    if len(text) > RAW_CHARS:
        return text[:RAW_CHARS] + f" … ({len(text) - RAW_CHARS} more characters)"
    return text


def _template_name(evidence: CardEvidence, conversation_id: str, turn: int = 0) -> str:
    """`the phrasing “Does {parent} have a {child}?”`, or `another phrasing` without the set."""
    conversation = card_conversation(evidence, conversation_id)
    relation = evidence.relations.get(conversation.relation_id)
    text = _phrasing(
        evidence,
        conversation.turns[turn].template_id,
        relation.type if relation is not None else None,
    )
    return f"the phrasing {quoted(text)}" if text else "another phrasing"


# -- the cards -------------------------------------------------------------------------------


def build_card(verdict: Verdict, evidence: CardEvidence) -> ExplanationCard:
    """The card of one verdict (an error, or a passed test: its card says so)."""
    relation = evidence.relations.get(verdict.relation_id)
    fact = describe_fact(relation, evidence.names, verdict.relation_id)
    builder = card_builder(verdict.oracle)
    headline, chats, reasons, expected = builder(verdict, evidence, fact)
    if not verdict.error:
        reasons = [*reasons, "The oracle found no error here: the answers agree."]
    prompting = evidence.prompting
    confirmation = evidence.confirmations.get(error_key(verdict)) if verdict.error else None
    return ExplanationCard(
        oracle=verdict.oracle,
        title=card_title(verdict.oracle) or capitalized(oracle_name(verdict.oracle)).rstrip("."),
        fact=fact,
        headline=headline,
        chats=tuple(chats),
        reasons=tuple(reasons),
        expected=expected,
        session=evidence.session,
        model=evidence.model,
        error=verdict.error,
        knowledge=_knowledge(verdict, relation, evidence, expected),
        wrong=_wrong(chats) if verdict.error else None,
        finding=_finding(verdict, evidence) if verdict.error else None,
        doubts=_doubts(verdict, evidence),
        asked=asked_sentence(prompting) if prompting is not None else None,
        confirmation=_confirmation(confirmation) if confirmation is not None else None,
        tries=_tries(verdict, confirmation) if confirmation is not None else (),
        margin=_margin(verdict, evidence, chats) if verdict.error else None,
    )


NO_MARGIN = "How sure the model was is not known: its server gave no token log-probabilities."


def _margin(verdict: Verdict, evidence: CardEvidence, chats: Sequence[CardChat]) -> str | None:
    """The weak mark (every answer compared within LOW_MARGIN of a coin toss) or, when no
    reply of the card has a margin, that none is known (said once)."""
    margins = {
        key: response.p_yes
        for key, response in evidence.responses.items()
        if response.p_yes is not None and response.error is None
    }
    if is_weak(verdict, margins):
        shown = " and ".join(f"{margins[key]:.2f}" for key in verdict.refs)
        return (
            f"Weak: every answer compared was close to a coin toss (P(yes) {shown}, each "
            f"within {LOW_MARGIN} of 0.5), so a second sample may well undo it."
        )
    if not any(turn.p_yes is not None for chat in chats for turn in chat.turns):
        return NO_MARGIN
    return None


def _confirmation(confirmation: Confirmation) -> str:
    """`confirmed: the contradiction came back in 3 of 4 tries (...)`."""
    tries = counted(confirmation.trials, "try", "tries")
    if not confirmation.trials:
        return (
            f"{status_word(confirmation.status)}: nothing to ask again (no other phrasing, "
            "and at temperature 0 a new sample repeats the answer)"
        )
    if not confirmation.counted:
        return (
            f"{status_word(confirmation.status)}: none of the {tries} got a yes or a no to "
            "every question"
        )
    left = confirmation.trials - confirmation.counted
    aside = f"; {counted(left, 'try', 'tries')} not counted (an answer neither yes nor no)"
    return (
        f"{status_word(confirmation.status)}: the contradiction came back in "
        f"{confirmation.held} of {counted(confirmation.counted, 'try', 'tries')}"
        + (aside if left else "")
        + "."
    )


_FORM_WORDS = {DRAW: "New sample", TEMPLATE: "Another template"}


def _tries(verdict: Verdict, confirmation: Confirmation) -> tuple[str, ...]:
    """Each try of a confirmation in a line: how it asked, the answers new to it (each with
    its margin), whether the contradiction came back."""
    own = {conversation_id for conversation_id, _turn in verdict.refs}
    lines = []
    rows = list(confirmation.answers)
    for number in sorted({row.trial for row in rows}):
        trial = [row for row in rows if row.trial == number]
        first = trial[0]
        if first.form == DRAW:
            how = f"New sample {first.draw}"
        else:
            how = f"{_FORM_WORDS.get(first.form, 'A rewording')} ({first.phrasing})"
        shown = [row for row in trial if row.draw or row.conversation not in own] or trial
        said = "; ".join(
            f"{quoted(clean_text(row.question))} "
            + (read_word(row.answer) if not row.error else "no answer")
            + (f" (P(yes) {row.p_yes:.2f})" if row.p_yes is not None else "")
            for row in shown
        )
        lines.append(f"{how}: {said}: {_held_words(verdict.oracle, first.holds)}.")
    return tuple(lines)


def _held_words(oracle: str, holds: bool | None) -> str:
    if holds is None:
        return "not counted"
    if oracle in METAMORPHIC:
        return "opposite answers again" if holds else "no contradiction"
    if oracle == ONTOLOGICAL:
        return "the implied fact denied again, its steps affirmed" if holds else "not repeated"
    return "the wrong answer again" if holds else "the right answer this time"


def source_words(name: str | None, source: str | None) -> str:
    """The knowledge graph by its name (or its file's) and where it comes from: `the
    knowledge graph “places”, from Wikidata labels (P131 located in)` (the source's first
    clause)."""
    name = " ".join(clean_text(name or "").split())
    if "/" in name or "\\" in name or name.lower().endswith((".json", ".csv")):
        named = f"{KG} in the file {quoted(PurePath(name).name)}"
    else:
        named = f"{KG} {quoted(name)}" if name else KG
    source = " ".join(clean_text(source or "").split())
    if not source:
        return named
    if source.lower().startswith("wikidata:"):
        return f"{named}, built from Wikidata"
    return f"{named}, from {_first_clause(source)}"


def _first_clause(text: str, limit: int = 100) -> str:
    """The text up to its first comma, semicolon or full stop outside brackets."""
    depth = 0
    for index, char in enumerate(text):
        depth += (char in "([") - (char in ")]")
        if depth == 0 and (
            char in ",;" or (char == "." and text[index + 1 : index + 2] in ("", " "))
        ):
            text = text[:index]
            break
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def wikidata_ids(relation: Relation) -> str:
    """` (Wikidata Q27 → Q190)` when both ends are Wikidata ids, else ``."""
    if _QID.fullmatch(relation.parent) and _QID.fullmatch(relation.child):
        return f" (Wikidata {relation.parent} → {relation.child})"
    return ""


def _knowledge(
    verdict: Verdict, relation: Relation | None, evidence: CardEvidence, expected: str | None
) -> str | None:
    """What the knowledge graph says about the card's fact, with its source, and the right
    answer it gives (None where no knowledge graph is behind the test)."""
    words = oracle_words(verdict.oracle)
    answer_from = words.answer_from if words is not None else ""
    if relation is None or answer_from is None:
        return None
    names = evidence.names
    source = source_words(evidence.kg_name, evidence.kg_source)
    fact = describe_fact(relation, names) + wikidata_ids(relation)
    if relation.between:
        *first, last = [names.name(node) for node in relation.between]
        fact += ", through " + (f"{', '.join(first)} and {last}" if first else last)
    if answer_from:
        if not expected:
            return None
        return f"The right answer, {expected}, {answer_from} {source}, which says {fact}."
    subject = capitalized(source).rstrip(".") + ("," if ", " in source else "")
    return f"{subject} says {fact}, so the right answer is yes."


def _wrong(chats: Sequence[CardChat]) -> str | None:
    """Which of the answers compared the right answer contradicts, in a sentence."""
    found = [
        turn
        for chat in chats
        for turn in chat.turns
        if turn.compared and turn.judged and turn.judged.startswith("wrong: ")
    ]
    if not found:
        return None
    targets = [
        f"to {quoted(turn.question.splitlines()[0] if turn.question else '')} (read as {turn.read})"
        for turn in found
    ]
    if len(targets) == 1:
        return f"So the wrong reply is the one {targets[0]}."
    return f"So the wrong replies are those {' and '.join(targets)}."


def _finding(verdict: Verdict, evidence: CardEvidence) -> str | None:
    """Where a metamorphic error stands among its relation's answers (oracles.findings), in
    a sentence: one disagreement, a repeat of one, or a flip only after the model's own reply."""
    if verdict.oracle not in (ATOMIC, *SEQUENTIAL):
        return None
    conversations = [
        conversation
        for conversation in evidence.conversations.values()
        if conversation.relation_id == verdict.relation_id
    ]
    answers = {
        key: response.answer
        for key, response in evidence.responses.items()
        if response.error is None
    }
    fold = fold_conversations(conversations, answers).get(verdict.relation_id)
    if fold is None:
        return None
    place = fold.place(verdict)
    if place == OPPOSITE_ALONE:
        sentence = "This is one disagreement: asked alone, the two phrasings get opposite answers."
        if fold.errors > 1:
            more = counted(fold.errors - 1, "more error")
            sentence += f" {more} on this relation repeat it (in one conversation)."
        return sentence
    if place == REPEAT:
        return (
            "This repeats a disagreement counted once: asked alone, the two phrasings already "
            "get opposite answers."
        )
    if place == AFTER_OWN_REPLY and fold.agreed is Answer.NO:
        return (
            "Asked alone, the model said no to both phrasings: it denies this fact, which the "
            "knowledge graph states, and said yes only after its own previous reply."
        )
    if place == AFTER_OWN_REPLY:
        return (
            f"Asked alone, both phrasings got {read_word(fold.agreed)}: the model changes its "
            "answer only after its own previous reply."
        )
    if place == NOT_COMPARED_ALONE:
        return (
            "Asked alone, its two phrasings were not both answered yes or no, so this flip "
            "cannot be compared with the answers alone."
        )
    return None


def _doubts(verdict: Verdict, evidence: CardEvidence) -> tuple[str, ...]:
    """Why an implied fact may not follow: its middle nodes with doubtful names."""
    if not evidence.doubts:
        return ()
    return tuple(
        doubt_sentence(evidence.names.name(node), reason)
        for node, reason in middle_doubts(verdict, evidence.doubts)
    )


# What a card builder gives: its headline, chats, reasons and the right answer (if known)
BuiltCard = tuple[str, list[CardChat], list[str], str | None]
# (verdict, the session's evidence, the fact in words) -> the card's parts
CardBuilder = Callable[[Verdict, "CardEvidence", str], BuiltCard]


def compared_pair(verdict: Verdict) -> tuple[AnswerKey, AnswerKey, str, str]:
    if len(verdict.refs) < 2 or len(verdict.answers) < 2:
        raise CardError(f"a {verdict.oracle} verdict compares two answers; this one has fewer")
    left, right = verdict.refs[0], verdict.refs[1]
    return left, right, read_word(verdict.answers[0]), read_word(verdict.answers[1])


def _atomic_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    left, right, first, second = compared_pair(verdict)
    chats = [
        card_chat(evidence, left[0], "Asked alone, in a fresh chat", (left[1],)),
        card_chat(evidence, right[0], "Asked alone, in another fresh chat", (right[1],)),
    ]
    headline = capitalized(verdict_sentence(verdict))
    reasons = [
        f"Both questions ask whether {fact}, in different words: the first with "
        f"{_template_name(evidence, left[0])}, the second with "
        f"{_template_name(evidence, right[0])}.",
        "Each was asked in a fresh chat, so neither saw the other.",
        f"A consistent model gives both the same answer. This one said {first} and "
        f"{second}, so one of the two answers is wrong.",
    ]
    return headline, chats, reasons, None


def _intra_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    left, right, first, second = compared_pair(verdict)
    chats = [
        card_chat(
            evidence,
            left[0],
            "One conversation: the second question came right after the first answer",
            (left[1], right[1]),
        )
    ]
    headline = capitalized(verdict_sentence(verdict))
    reasons = [
        f"Both questions of this conversation ask whether {fact}: first with "
        f"{_template_name(evidence, left[0], left[1])}, then with "
        f"{_template_name(evidence, right[0], right[1])}.",
        "The second question was asked right after the model's first answer, with that "
        "answer in view.",
        f"It answered {first}, then {second}: it contradicted itself within one conversation.",
    ]
    return headline, chats, reasons, None


def _inter_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    left, right, alone, after = compared_pair(verdict)
    chats = [
        card_chat(evidence, left[0], "The question asked alone, in a fresh chat", (left[1],)),
        card_chat(
            evidence,
            right[0],
            "The same question asked second, right after its other phrasing",
            (right[1],),
        ),
    ]
    headline = capitalized(verdict_sentence(verdict))
    reasons = [
        f"The question asks whether {fact}, with {_template_name(evidence, left[0])}.",
        "It was asked twice: once alone, once as the second question of a conversation that "
        "first asked the same thing in other words.",
        f"The words of the question were the same both times; only what came before "
        f"differed. The answer changed from {alone} to {after}.",
    ]
    return headline, chats, reasons, None


def _ontological_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    path = error_path(verdict)
    names = evidence.names
    own = verdict.refs[0] if verdict.refs else None
    if len(path) < 3 or own is None:
        return _other_card(verdict, evidence, fact)
    steps = list(zip(path, path[1:], strict=False))
    chats: list[CardChat] = []
    step_facts: list[str] = []
    for (parent, child), key in zip(steps, verdict.refs[1:], strict=False):
        asked = evidence.conversations.get(key[0])
        step_relation = evidence.relations.get(asked.relation_id) if asked else None
        step = (
            describe_fact(step_relation, names)
            if step_relation is not None
            else f"{names.name(parent)} contains {names.name(child)}"
        )
        step_facts.append(step)
        chats.append(card_chat(evidence, key[0], f"A step it said yes to: {step}", (key[1],)))
    chats.append(card_chat(evidence, own[0], f"The fact these steps imply: {fact}", (own[1],)))
    said = " and ".join(quoted(step) for step in step_facts)
    headline = f"The model said yes to {said}, but no to {quoted(fact)}."
    reasons = [
        "What is contained carries over: if a first entity contains a second and the second "
        "contains a third, the first contains the third.",
        f"Every question here was asked alone, with {_template_name(evidence, own[0])}.",
        f"The model's yes-answers chain {' → '.join(names.name(node) for node in path)}, "
        f"which means {fact}; yet it answered no to that. Its answers cannot all be right.",
    ]
    return headline, chats, reasons, None


def _other_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> BuiltCard:
    """A verdict of an oracle without its own card: its answers and the oracle's words."""
    chats = [
        card_chat(evidence, cid, "A question the test compared", (turn,))
        for cid, turn in verdict.refs
        if cid in evidence.conversations
    ]
    answers = " and ".join(read_word(answer) for answer in verdict.answers) or "no answer"
    headline = f"The answers compared were {answers}."
    reasons = [f"The test concerns whether {fact}."]
    if verdict.detail:
        reasons.append(clean_text(verdict.detail))
    return headline, chats, reasons, None


_BUILDERS: dict[str, CardBuilder] = {
    "atomic": _atomic_card,
    "sequential_intra": _intra_card,
    "sequential_inter": _inter_card,
    "ontological": _ontological_card,
}


def card_builder(oracle: str) -> CardBuilder:
    """How a card of `oracle`'s verdicts is made: KONTEST's oracles' here, a kind's own from
    its words (`card_builder`, imported on first use: report/cards/), else the plain card."""
    found = _BUILDERS.get(oracle)
    if found is not None:
        return found
    words = oracle_words(oracle)
    if words is None or not words.card_builder:
        return _other_card
    return _load_builder(words.card_builder)


@functools.cache
def _load_builder(source: str) -> CardBuilder:
    module, _, name = source.partition(":")
    return cast("CardBuilder", getattr(importlib.import_module(module), name))
