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

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import (
    CHOICE_TYPES,
    AnnotationExtras,
    FactcheckExtras,
    LogicExtras,
    PremiseExtras,
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
from kontest_tui.oracles.variant import FLIPS_MARK, changed_words, variant_row
from kontest_tui.probes.matching import match_wh, parse_choice
from kontest_tui.report.prompts import (
    COMPLETIONS,
    Prompting,
    asked_sentence,
    completion_prompt,
    prompting_of,
)
from kontest_tui.report.words import (
    QUESTION_TYPES,
    Naming,
    capitalized,
    card_title,
    counted,
    describe_fact,
    doubt_sentence,
    fact_words,
    oracle_name,
    quoted,
    read_word,
    verdict_sentence,
)
from kontest_tui.store.confirmations import Confirmation, ErrorKey, error_key

RAW_CHARS = 2000  # how much of one reply a card shows
KG = "the knowledge graph"
VALID = (Answer.YES, Answer.NO)
_QID = re.compile(r"Q[1-9][0-9]*")

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


def _conversation(evidence: CardEvidence, conversation_id: str) -> Conversation:
    found = evidence.conversations.get(conversation_id)
    if found is None:
        raise CardError(f"the session has no conversation {conversation_id!r} to explain")
    return found


def _response(evidence: CardEvidence, key: AnswerKey) -> Response | None:
    response = evidence.responses.get(key)
    return response if response is not None and response.error is None else None


def _answer_of(evidence: CardEvidence, key: AnswerKey) -> Answer | None:
    response = _response(evidence, key)
    return response.answer if response is not None else None


def _chat(
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
    conversation = _conversation(evidence, conversation_id)
    relation = evidence.relations.get(conversation.relation_id)
    relation_type = relation.type if relation is not None else None
    prompting = evidence.prompting
    completions = prompting is not None and prompting.mode == COMPLETIONS
    turns = []
    asked: list[tuple[str, str | None]] = []  # the questions so far and their replies
    for index, query in enumerate(conversation.turns):
        response = _response(evidence, (conversation.id, index))
        answer = response.answer if response is not None else None
        raw = None if response is None else _shorten(response.raw)
        word = read[index] if read is not None and index in read else read_word(answer)
        given = judged is not None and index in judged
        verdict = (
            judged[index] if judged is not None and given else _judged(conversation, index, answer)
        )
        phrasing = (
            _phrasing(evidence, query.template_id, relation_type)
            if str(conversation.test_kind) in ("kontest", "variant")
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


def _expected(conversation: Conversation, turn: int) -> tuple[Answer | None, str]:
    """The right answer to one turn and who gives it ("the knowledge graph", "the
    annotation", "the rule"); None where the test kind knows none (a multiple-choice or open
    question is judged by its own card)."""
    extras = conversation.extras
    given = conversation.expected[turn] if turn < len(conversation.expected) else None
    if isinstance(extras, AnnotationExtras):
        return given, "the annotation"
    kind = conversation.test_kind
    if kind in (TestKind.KONTEST, TestKind.VARIANT):
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
    conversation = _conversation(evidence, conversation_id)
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
    builder = _BUILDERS.get(verdict.oracle, _other_card)
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
    if relation is None or verdict.oracle == "annotation":
        return None
    names = evidence.names
    source = source_words(evidence.kg_name, evidence.kg_source)
    fact = describe_fact(relation, names) + wikidata_ids(relation)
    if relation.between:
        *first, last = [names.name(node) for node in relation.between]
        fact += ", through " + (f"{', '.join(first)} and {last}" if first else last)
    if verdict.oracle in ("factcheck", "logic"):
        if not expected:
            return None
        how = "follows by the rule from" if verdict.oracle == "logic" else "comes from"
        return f"The right answer, {expected}, {how} {source}, which says {fact}."
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


_Built = tuple[str, list[CardChat], list[str], str | None]


def _pair(verdict: Verdict) -> tuple[AnswerKey, AnswerKey, str, str]:
    if len(verdict.refs) < 2 or len(verdict.answers) < 2:
        raise CardError(f"a {verdict.oracle} verdict compares two answers; this one has fewer")
    left, right = verdict.refs[0], verdict.refs[1]
    return left, right, read_word(verdict.answers[0]), read_word(verdict.answers[1])


def _atomic_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
    left, right, first, second = _pair(verdict)
    chats = [
        _chat(evidence, left[0], "Asked alone, in a fresh chat", (left[1],)),
        _chat(evidence, right[0], "Asked alone, in another fresh chat", (right[1],)),
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


def _intra_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
    left, right, first, second = _pair(verdict)
    chats = [
        _chat(
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


def _inter_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
    left, right, alone, after = _pair(verdict)
    chats = [
        _chat(evidence, left[0], "The question asked alone, in a fresh chat", (left[1],)),
        _chat(
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


def _ontological_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
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
        chats.append(_chat(evidence, key[0], f"A step it said yes to: {step}", (key[1],)))
    chats.append(_chat(evidence, own[0], f"The fact these steps imply: {fact}", (own[1],)))
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


def _changed_words(conversation: Conversation, evidence: CardEvidence) -> list[str]:
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


def _variant_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
    left, right, first, second = _pair(verdict)
    variant = _conversation(evidence, right[0])
    words = _changed_words(variant, evidence)
    reference = _conversation(evidence, left[0])
    original = variant_row(reference) == 0
    chats = [
        _chat(
            evidence,
            left[0],
            "The original question" if original else "The answer most variants got",
            (left[1],),
        ),
        _chat(evidence, right[0], "A variant with some words replaced", (right[1],)),
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


def _annotation_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
    key = verdict.refs[0]
    conversation = _conversation(evidence, key[0])
    extras = conversation.extras
    annotated = extras if isinstance(extras, AnnotationExtras) else None
    expected = conversation.expected[0] if conversation.expected else None
    got = read_word(verdict.answers[0]) if verdict.answers else "no answer"
    words = _changed_words(conversation, evidence)
    chats = [_chat(evidence, key[0], "The annotated question as asked", (key[1],))]
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


def _option_text(extras: FactcheckExtras, letter: str | None) -> str:
    if letter is None:
        return "no option"
    option = extras.option(letter)
    return f"{letter}) {clean_text(option.label)}" if option is not None else letter


def _factcheck_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
    key = verdict.refs[0]
    conversation = _conversation(evidence, key[0])
    extras = conversation.extras
    if not isinstance(extras, FactcheckExtras):
        extras = FactcheckExtras(question_type="yes_no")
    qtype = extras.question_type
    response = _response(evidence, key)
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
    chats = [_chat(evidence, key[0], "The question, asked alone", (key[1],), read, judged)]
    return headline, chats, reasons, expected


def _logic_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
    key = verdict.refs[0]
    conversation = _conversation(evidence, key[0])
    extras = conversation.extras
    logic = extras if isinstance(extras, LogicExtras) else None
    rule = logic.rule if logic is not None else "rule"
    steps = logic.steps if logic is not None else rule
    expected = read_word(conversation.expected[0] if conversation.expected else None)
    got = read_word(verdict.answers[0]) if verdict.answers else "no answer"
    premises = logic.premises if logic is not None else ()
    chats = [
        _chat(evidence, premise, "A fact from the knowledge graph the rule starts from")
        for premise in premises
        if premise in evidence.conversations
    ]
    chats.append(_chat(evidence, key[0], "The question the rule derives", (key[1],)))
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
    said = [_answer_of(evidence, (premise, 0)) for premise in premises]
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


def _other_card(verdict: Verdict, evidence: CardEvidence, fact: str) -> _Built:
    """A verdict of an oracle without its own card: its answers and the oracle's words."""
    chats = [
        _chat(evidence, cid, "A question the test compared", (turn,))
        for cid, turn in verdict.refs
        if cid in evidence.conversations
    ]
    answers = " and ".join(read_word(answer) for answer in verdict.answers) or "no answer"
    headline = f"The answers compared were {answers}."
    reasons = [f"The test concerns whether {fact}."]
    if verdict.detail:
        reasons.append(clean_text(verdict.detail))
    return headline, chats, reasons, None


_BUILDERS = {
    "atomic": _atomic_card,
    "sequential_intra": _intra_card,
    "sequential_inter": _inter_card,
    "ontological": _ontological_card,
    "variant": _variant_card,
    "annotation": _annotation_card,
    "factcheck": _factcheck_card,
    "logic": _logic_card,
}
