"""Planning the tries that confirm an error (run.confirm asks them): which conversation
each try reads each of its answers from, in which form and at which draw.

A try is the error's own test asked anew: a new sample of every question it compares
(`draw` N), or the wrongly answered question replaced, wherever the test asks it, by another
template's question for the relation or by a covering-array rewording of it (oracles.
confirmation says when a try holds). A question a try needs that the session asked the same
way (the same texts at draw 0) is read from the session's answers (`stored_prefix`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Query,
    Relation,
    Response,
    TestKind,
    Verdict,
)
from kontest_tui.generate.conversations import question_text
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds.registry import KindOptions
from kontest_tui.oracles.confirmation import DRAW, METAMORPHIC, ONTOLOGICAL, REWORDED, TEMPLATE


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a trial reads one answer: a conversation (as asked), its turn, the draw."""

    conversation: Conversation
    turn: int
    draw: int


@dataclass(frozen=True, slots=True)
class Trial:
    """One try of an error: its form (oracles.confirmation's DRAW, TEMPLATE, REWORDED), the
    phrasing or sample it asks, the draw, and where it reads each answer."""

    form: str
    phrasing: str  # "draw 2", "t3", "t1 v1"
    draw: int
    slots: tuple[Slot, ...]  # in the order of the error's compared answers


@dataclass(slots=True)
class ErrorPlan:
    """The tries of one error verdict."""

    verdict: Verdict
    trials: list[Trial]
    right: Answer  # the right answer of the question a one-answer trial reads


@dataclass(slots=True)
class SessionAnswers:
    """What planning needs of a stored session."""

    kg: KnowledgeGraph
    template_set: TemplateSet | None
    kind_options: KindOptions
    conversations: dict[str, Conversation]
    responses: dict[AnswerKey, Response]
    relations: dict[str, Relation]
    seed: int
    # (the texts of a conversation's first turns) -> a stored conversation asking them
    prefixes: dict[tuple[str, ...], str] = field(default_factory=dict)


def answered(session: SessionAnswers, conversation_id: str, turn: int) -> Response | None:
    """The session's answer to one turn (None: none, or the call failed)."""
    response = session.responses.get((conversation_id, turn))
    return response if response is not None and response.error is None else None


def stored_prefix(session: SessionAnswers, conversation: Conversation, turn: int) -> str | None:
    """A stored conversation whose turns up to `turn` ask what `conversation`'s do and are
    all answered (the same chat at draw 0), or None."""
    texts = tuple(query.text for query in conversation.turns[: turn + 1])
    found = session.prefixes.get(texts)
    if found is None:
        return None
    if all(answered(session, found, index) is not None for index in range(turn + 1)):
        return found
    return None


def index_prefixes(session: SessionAnswers) -> None:
    for conversation in session.conversations.values():
        texts: tuple[str, ...] = ()
        for query in conversation.turns:
            texts = (*texts, query.text)
            session.prefixes.setdefault(texts, conversation.id)


# -- planning ------------------------------------------------------------------------------


def right_answer(conversation: Conversation, turn: int) -> Answer:
    """The right answer to one turn: its kind's known one, else yes (a fact of the KG; a
    multiple-choice or open question reads yes when it names the right entity)."""
    given = conversation.expected[turn] if turn < len(conversation.expected) else None
    return given if given is not None else Answer.YES


def _substituted(conversation: Conversation, wrong: str, query: Query, label: str) -> Conversation:
    """`conversation` with every turn asking `wrong` asking `query` instead, its id made of
    its turns' templates as the run names them ("REL/t3", "REL/t1+t3", "REL/t1~v1")."""
    turns = tuple(query if turn.text == wrong else turn for turn in conversation.turns)
    labels = [label if turn.text == wrong else turn.template_id for turn in conversation.turns]
    return Conversation(
        id=f"{conversation.relation_id}/{'+'.join(labels)}",
        relation_id=conversation.relation_id,
        kind=conversation.kind,
        label=conversation.label,
        turns=turns,
        test_kind=TestKind.KONTEST,
        expected=conversation.expected,
        system_prompt=conversation.system_prompt,
    )


def _phrasings(
    session: SessionAnswers, relation: Relation, wrong: Query, used: set[str], rewordings: int
) -> list[tuple[str, str, Query]]:
    """(form, label, question) for each other phrasing of the wrong question: the other
    templates' questions, then its first covering-array rewordings."""
    template_set = session.template_set
    if template_set is None:
        return []
    found: list[tuple[str, str, Query]] = []
    for template in template_set.templates:
        if template.id in used or relation.type not in template.texts:
            continue
        text = question_text(session.kg, relation, template_set, template.id)
        if text != wrong.text:
            found.append((TEMPLATE, template.id, Query(relation.id, template.id, text)))
    if rewordings > 0 and wrong.template_id in template_set.ids:
        found += _rewordings(session, relation, wrong, rewordings)
    return found


def _rewordings(
    session: SessionAnswers, relation: Relation, wrong: Query, count: int
) -> list[tuple[str, str, Query]]:
    from kontest_tui.generate.ipm import ipm_for_query
    from kontest_tui.generate.variants import variants_for_ipm

    template_set = session.template_set
    assert template_set is not None
    ipm = ipm_for_query(
        session.kg,
        relation,
        template_set.get(wrong.template_id),
        template_set.domain,
        realise=template_set.realise,
    )
    rows = variants_for_ipm(
        ipm,
        strength=session.kind_options.strength,
        seed=session.seed,
        limit=count + 1,
    )
    found = []
    for row in rows[1:]:
        text = row.turns[0].text
        if text != wrong.text:
            label = f"{wrong.template_id}~v{row.id.rsplit('~v', 1)[-1]}"
            found.append((REWORDED, label, Query(relation.id, wrong.template_id, text)))
    return found


def _draw_trials(slots: Sequence[Slot], draws: int) -> list[Trial]:
    return [
        Trial(
            DRAW,
            f"draw {draw}",
            draw,
            tuple(Slot(slot.conversation, slot.turn, draw) for slot in slots),
        )
        for draw in range(1, draws + 1)
    ]


def plan_error(
    session: SessionAnswers, verdict: Verdict, *, draws: int, rewordings: int
) -> ErrorPlan:
    """The trials of one error (module docstring; oracles.confirmation for the rules)."""
    slots = []
    for conversation_id, turn in verdict.refs:
        conversation = session.conversations.get(conversation_id)
        if conversation is None or turn >= len(conversation.turns):
            return ErrorPlan(verdict, [], Answer.YES)
        slots.append(Slot(conversation, turn, 0))
    if verdict.oracle not in (*METAMORPHIC, ONTOLOGICAL):
        wrong_slot = next(
            (
                slot
                for slot, answer in zip(slots, verdict.answers, strict=False)
                if answer is not right_answer(slot.conversation, slot.turn)
            ),
            slots[-1],
        )
        right = right_answer(wrong_slot.conversation, wrong_slot.turn)
        return ErrorPlan(verdict, _draw_trials([wrong_slot], draws), right)
    trials = _draw_trials(slots, draws)
    wrong_slots = [
        slot for slot, answer in zip(slots, verdict.answers, strict=False) if answer is Answer.NO
    ]
    relation = session.relations.get(verdict.relation_id)
    if verdict.oracle == ONTOLOGICAL:
        wrong_slots = slots[:1]
    if not wrong_slots or relation is None:
        return ErrorPlan(verdict, trials, Answer.YES)
    wrong = wrong_slots[0].conversation.turns[wrong_slots[0].turn]
    # the compared conversations' templates (the oracle's own first: its templates are
    # all this relation's questions in an ontological test's own conversation)
    mine = slots[:1] if verdict.oracle == ONTOLOGICAL else slots
    used = {query.template_id for slot in mine for query in slot.conversation.turns}
    for form, label, query in _phrasings(session, relation, wrong, used, rewordings):
        trial_slots = tuple(
            Slot(_substituted(slot.conversation, wrong.text, query, label), slot.turn, 0)
            if slot in mine and any(turn.text == wrong.text for turn in slot.conversation.turns)
            else slot
            for slot in slots
        )
        trials.append(Trial(form, label.replace("~v", " v"), 0, trial_slots))
    return ErrorPlan(verdict, trials, Answer.YES)
