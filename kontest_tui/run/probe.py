"""Probe mode: ask the model one question about one relation now, outside the session's plan.

A probe is a question typed by hand, or a template's text filled for the relation's pair,
asked alone in a fresh chat through the session's model spec and chat options (the model
call is models/'s), streamed token by token. Probes of a stored session are stored with it
(store.probes) and change no metric: no oracle reads them. A rephrasing worth keeping is
promoted: `template_from_question` makes it a template text for the template editor (asked
then as a template of the session), `synonym_from_question` finds the one word it changed
for the synonym list.

`kontest probe` and the explorer's probe panel call these same functions.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.answers import clean_text, cut_answer, parse_answer
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation, Response
from kontest_tui.errors import InvalidInputError, KontestError
from kontest_tui.generate.conversations import question_text
from kontest_tui.generate.relations import relation_type
from kontest_tui.generate.templates import (
    TemplateSet,
    clean_label,
    template_set_for_domain,
    template_words,
)
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.scope import resolve_entity
from kontest_tui.models.base import ChatModel, ChatOptions, ChatRequest, Message
from kontest_tui.results.evaluate import session_graph
from kontest_tui.results.relation_names import resolve_relation
from kontest_tui.run.session import open_session_model, options_from_dict
from kontest_tui.store.database import Store
from kontest_tui.store.probes import StoredProbe
from kontest_tui.store.records import template_set_from_dict
from kontest_tui.validate_input import check_text

MAX_QUESTION_CHARS = 2000

# (phrasing index, token) as the model streams each answer
ProbeTokens = Callable[[int, str], None]


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One way of asking about the relation: a template's text filled for the pair, or a
    question typed by hand (`template` None)."""

    question: str
    template: str | None = None


@dataclass(frozen=True, slots=True)
class ProbeAnswer:
    """What the model said to one phrasing: the reply, what was read from it, or the failure."""

    phrasing: Phrasing
    raw: str
    answer: Answer
    error: str | None = None
    latency_ms: float = 0.0


@dataclass(slots=True)
class ProbeContext:
    """What probing a stored session's relation needs, and the answers the session stored
    for that relation (shown beside the probes)."""

    session: str
    kg: KnowledgeGraph
    relation: Relation
    model: str
    options: ChatOptions
    seed: int
    template_set: TemplateSet | None
    conversations: list[Conversation] = field(default_factory=list)
    responses: dict[AnswerKey, Response] = field(default_factory=dict)

    def phrasings(self, questions: Sequence[str] = ()) -> list[Phrasing]:
        """Each template's text for the pair, then `questions` (typed by hand)."""
        return probe_phrasings(self.kg, self.relation, self.template_set, questions)


def find_relation(
    kg: KnowledgeGraph, relation_id: str, template_set: TemplateSet | None = None
) -> Relation:
    """The relation `PARENT>CHILD` of a KG (each side an id or a label): the child must lie
    below the parent. Its path is the shortest one down the KG."""
    parent_name, sep, child_name = relation_id.partition(">")
    if not sep or not parent_name.strip() or not child_name.strip():
        raise InvalidInputError(f"a relation is PARENT>CHILD (ids or labels), not {relation_id!r}")
    parent = resolve_entity(kg, parent_name)
    child = resolve_entity(kg, child_name)
    path = _path_down(kg, parent, child)
    if path is None:
        raise InvalidInputError(
            f"{kg.label(child)} ({child}) is not below {kg.label(parent)} ({parent}) in {kg.name}"
        )
    kind = relation_type(kg, parent, child, template_set)
    return Relation(f"{parent}>{child}", parent, child, kind, path)


def _path_down(kg: KnowledgeGraph, parent: str, child: str) -> tuple[str, ...] | None:
    """The shortest path parent -> ... -> child along the KG's edges (None: not below)."""
    if parent == child:
        return None
    came_from: dict[str, str] = {}
    frontier = [parent]
    while frontier:
        following = []
        for node in frontier:
            for below in kg.children(node):
                if below in came_from or below == parent:
                    continue
                came_from[below] = node
                if below == child:
                    path = [child]
                    while path[-1] != parent:
                        path.append(came_from[path[-1]])
                    return tuple(reversed(path))
                following.append(below)
        frontier = following
    return None


def relation_phrasings(
    kg: KnowledgeGraph, relation: Relation, template_set: TemplateSet | None
) -> list[Phrasing]:
    """Every template's text (with one for the relation's type) filled for the pair, as a
    run of the set asks it (realised when the set is: generate.realise)."""
    if template_set is None:
        return []
    found: list[Phrasing] = []
    for template in template_set.templates:
        text = template.texts.get(relation.type)
        if text is not None:
            question = question_text(kg, relation, template_set, template.id)
            found.append(Phrasing(question, text))
    return found


def probe_phrasings(
    kg: KnowledgeGraph,
    relation: Relation,
    template_set: TemplateSet | None,
    questions: Sequence[str] = (),
) -> list[Phrasing]:
    """The templates' phrasings, then each question typed by hand (checked; repeats of an
    earlier phrasing are asked once)."""
    phrasings = relation_phrasings(kg, relation, template_set)
    seen = {phrasing.question for phrasing in phrasings}
    for question in questions:
        text = check_question(question)
        if text not in seen:
            seen.add(text)
            phrasings.append(Phrasing(text))
    return phrasings


def check_question(question: str) -> str:
    """A question typed by hand, on one line: not empty, at most MAX_QUESTION_CHARS."""
    text = " ".join(clean_text(question).split())
    if not text:
        raise InvalidInputError("an empty question: type what to ask")
    if len(text) > MAX_QUESTION_CHARS:
        raise InvalidInputError(f"a question of at most {MAX_QUESTION_CHARS} characters, please")
    check_text(text, "question")
    return text


async def ask_phrasing(
    model: ChatModel,
    phrasing: Phrasing,
    options: ChatOptions,
    on_token: Callable[[str], None] | None = None,
) -> ProbeAnswer:
    """Ask one phrasing alone, in a fresh chat; a failed call is an answer with its error."""
    request = ChatRequest(
        messages=(Message("user", phrasing.question),),
        options=options,
        conversation_id=f"probe:{phrasing.question}",
        kind="atomic",
    )
    started = time.perf_counter()
    try:
        result = await asyncio.wait_for(model.chat(request, on_token), options.timeout)
    except TimeoutError:
        return ProbeAnswer(phrasing, "", Answer.INVALID, f"no answer after {options.timeout:g} s")
    except KontestError as error:
        return ProbeAnswer(phrasing, "", Answer.INVALID, str(error))
    raw, _cut = cut_answer(result.text)
    elapsed = result.latency_ms or (time.perf_counter() - started) * 1000
    return ProbeAnswer(phrasing, raw, parse_answer(raw), None, elapsed)


async def ask_phrasings(
    model: ChatModel,
    phrasings: Sequence[Phrasing],
    options: ChatOptions,
    on_token: ProbeTokens | None = None,
) -> list[ProbeAnswer]:
    """Ask every phrasing at once (each alone); answers in the phrasings' order."""

    def tokens_of(index: int) -> Callable[[str], None] | None:
        if on_token is None:
            return None
        return lambda token: on_token(index, token)

    return list(
        await asyncio.gather(
            *(
                ask_phrasing(model, phrasing, options, tokens_of(index))
                for index, phrasing in enumerate(phrasings)
            )
        )
    )


async def probe_relation(
    spec: str,
    kg: KnowledgeGraph,
    phrasings: Sequence[Phrasing],
    *,
    options: ChatOptions | None = None,
    seed: int = 0,
    on_token: ProbeTokens | None = None,
) -> list[ProbeAnswer]:
    """Open the model `spec` names, check it, ask every phrasing, close it."""
    chosen = options or ChatOptions(system_prompt=_default_prompt(kg))
    model = open_session_model(spec, kg, chosen, seed)
    try:
        await model.check()
        return await ask_phrasings(model, phrasings, chosen, on_token)
    finally:
        await model.aclose()


def _default_prompt(kg: KnowledgeGraph) -> str | None:
    try:
        return template_set_for_domain(kg.domain).system_prompt
    except KontestError:
        return None


def probe_context(store: Store, session_id: str, relation_id: str) -> ProbeContext:
    """Everything probing one relation of a stored session needs: its KG, the relation, the
    session's model, options, seed and templates, and its stored answers for the relation
    (named by its id or its ends' labels: results.relation_names)."""
    row = store.sessions.get(session_id)
    relation_id = resolve_relation(store, session_id, relation_id).id
    relations = store.relations.by_id(session_id, [relation_id])
    relation = relations.get(relation_id)
    if relation is None:
        raise InvalidInputError(f"session {session_id} has no relation {relation_id!r}")
    try:
        template_set: TemplateSet | None = template_set_from_dict(
            row["templates_json"], f"session {session_id}"
        )
    except KontestError:
        template_set = None
    conversations = store.relations.conversations_of(session_id, relation_id)
    return ProbeContext(
        session=session_id,
        kg=session_graph(store, session_id),
        relation=relation,
        model=str(row["model"]),
        options=options_from_dict(row["options_json"]),
        seed=int(row.get("seed") or 0),
        template_set=template_set,
        conversations=conversations,
        responses=store.responses.of_conversations(session_id, (c.id for c in conversations)),
    )


def store_probe_answers(
    store: Store, context: ProbeContext, answers: Sequence[ProbeAnswer]
) -> list[StoredProbe]:
    """Store the answers of a stored session's probe (each committed at once)."""
    return [
        store.probes.save(
            context.session,
            context.relation.id,
            model=context.model,
            question=answer.phrasing.question,
            template=answer.phrasing.template,
            raw=answer.raw,
            answer=answer.answer,
            error=answer.error,
            latency_ms=answer.latency_ms,
        )
        for answer in answers
    ]


# -- promotion -------------------------------------------------------------------------------


def template_from_question(question: str, parent_label: str, child_label: str) -> str | None:
    """A question about the pair as a template text: the labels become `{parent}` and
    `{child}` (braces in the rest doubled). None when it does not name both."""
    text = " ".join(question.split())
    parent, child = clean_label(parent_label), clean_label(child_label)
    if not parent or not child:
        return None
    # The longer label first, so one label inside the other is not replaced twice.
    marks = sorted(((parent, "\0P\0"), (child, "\0C\0")), key=lambda item: -len(item[0]))
    for label, mark in marks:
        pattern = re.compile(re.escape(label), re.IGNORECASE)
        if len(pattern.findall(text)) != 1:
            return None
        text = pattern.sub(mark, text)
    text = text.replace("{", "{{").replace("}", "}}")
    return text.replace("\0P\0", "{parent}").replace("\0C\0", "{child}")


def synonym_from_question(template: str, filled: str, question: str) -> tuple[str, str] | None:
    """(word, its replacement) when `question` is `filled` (the template text `template`
    filled for the pair) with exactly one of the template's own words changed: the synonym
    list's pin. None otherwise (no change, several, or a label changed)."""
    before = [_bare(word) for word in filled.split()]
    after = [_bare(word) for word in question.split()]
    if len(before) != len(after):
        return None
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    if len(changed) != 1:
        return None
    word, value = changed[0]
    if not word or not value or word.casefold() == value.casefold():
        return None
    if word not in template_words(template):
        return None
    return word, value


def _bare(word: str) -> str:
    return word.strip(".,;:!?\"'()“”‘’")
