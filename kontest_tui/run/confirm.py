"""Confirming errors: each error's fact asked again, in other phrasings and as new samples.

`confirm_errors(store, session, ...)` (run.api re-exports it; `kontest confirm`, `kontest run
--confirm` and the explorer's `r` call it) plans each chosen error's *trials* (the forms and
the rule of each are in oracles.confirmation), asks what they need through the session's
model with the executor (the model call is models/'s), judges each trial, and stores every
error's status with its trials' answers (store.confirmations). Nothing goes into the
session's responses: the confirmation's calls are counted apart.

What a trial asks:

- **draws** (`draws`, by default DEFAULT_DRAWS when the session's temperature is above 0,
  none at 0, where a new sample repeats the answer): every conversation the error compares
  asked again, each with its own seed `domain.seeds.draw_seed(seed, conversation id, draw)`,
  the seed being the session's model seed (`--model-seed`), else its `--seed`; a rerun sends
  the same seeds, so it reproduces every draw;
- **other templates**: each template of the session's set not in the error's test, with a
  text for the relation's type, its question in place of the wrongly answered one;
- **rewordings** (`rewordings`, DEFAULT_REWORDINGS): the first rows of the wrong question's
  covering array (generate.variants, the session's seed and strength) in its place.

The other kinds' errors (variant, FactChecker, logic, annotation) are asked again as draws
only. A question a trial needs that the session already asked the same way (the same chat at
draw 0: the error's own other side, an ontological error's steps, a template the session
asked) is read from the session's answers, not asked again; a request two trials or two
errors share is asked once. So confirming all errors costs at most one call per question a
trial asks anew, and usually fewer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Response,
    Verdict,
)
from kontest_tui.domain.seeds import draw_seed
from kontest_tui.errors import InvalidInputError, KontestError, StoreError
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.oracles.confirmation import (
    confirmation_status,
    trial_holds,
)
from kontest_tui.results.evaluate import evaluation_engine, session_graph, session_kinds
from kontest_tui.results.reports import ensure_report
from kontest_tui.run.confirm_plan import (
    ErrorPlan,
    SessionAnswers,
    Slot,
    answered,
    index_prefixes,
    plan_error,
    stored_prefix,
)
from kontest_tui.run.executor import Executor, ExecutorConfig, ExecutorEvents
from kontest_tui.run.session import open_session_model, options_from_dict
from kontest_tui.store.confirmations import Confirmation, ConfirmationAnswer
from kontest_tui.store.database import Store
from kontest_tui.store.records import template_set_from_dict
from kontest_tui.store.rollups import CLEAREST_ORACLES

DEFAULT_DRAWS = 2  # new samples of each error at a temperature above 0
DEFAULT_REWORDINGS = 2  # covering-array rewordings of the wrongly answered question
MAX_DRAWS = 20
MAX_REWORDINGS = 10


@dataclass(slots=True)
class _Ask:
    """One conversation to ask at one draw, with the turns read from the session's answers."""

    conversation: Conversation  # its id the executor's: `id@draw` for a draw above 0
    draw: int
    seed: int
    done: dict[int, Response] = field(default_factory=dict)
    used_by: int | None = None  # the first error (its plan's index) that read it


@dataclass(frozen=True, slots=True)
class ConfirmationOutcome:
    """What confirming asked and found: each error's confirmation, the model calls made (all
    attempts) and the seconds spent asking them, the conversations asked, the draws asked per
    error."""

    session: str
    confirmations: list[Confirmation]
    calls: int
    seconds: float
    asked: int
    draws: int

    def counts(self) -> dict[str, int]:
        """Errors per status."""
        found: dict[str, int] = {}
        for confirmation in self.confirmations:
            found[confirmation.status] = found.get(confirmation.status, 0) + 1
        return found


# -- asking --------------------------------------------------------------------------------


def _asks(
    session: SessionAnswers, plans: Sequence[ErrorPlan], base_seed: int
) -> dict[tuple[str, int], _Ask]:
    """The conversations the plans' trials ask (one per conversation and draw, as long as
    the latest turn a trial reads), each with the turns the session's answers give it at
    draw 0."""
    asks: dict[tuple[str, int], _Ask] = {}
    for index, plan in enumerate(plans):
        for trial in plan.trials:
            for slot in trial.slots:
                if slot.draw == 0 and stored_prefix(session, slot.conversation, slot.turn):
                    continue
                key = (slot.conversation.id, slot.draw)
                ask = asks.get(key)
                if ask is None:
                    asked_id = slot.conversation.id + (f"@{slot.draw}" if slot.draw else "")
                    asks[key] = _Ask(
                        _first_turns(slot.conversation, slot.turn + 1, asked_id),
                        slot.draw,
                        draw_seed(base_seed, slot.conversation.id, slot.draw),
                        used_by=index,
                    )
                elif len(ask.conversation.turns) <= slot.turn:
                    ask.conversation = _first_turns(
                        slot.conversation, slot.turn + 1, ask.conversation.id
                    )
    for ask in asks.values():
        if ask.draw:
            continue
        for turn in range(len(ask.conversation.turns) - 1, -1, -1):
            stored = stored_prefix(session, ask.conversation, turn)
            if stored is not None:
                ask.done = {
                    index: response
                    for index in range(turn + 1)
                    if (response := answered(session, stored, index)) is not None
                }
                break
    return asks


def _first_turns(conversation: Conversation, length: int, asked_id: str) -> Conversation:
    """The conversation's first `length` turns, under the id the executor asks it by."""
    return replace(
        conversation,
        id=asked_id,
        turns=conversation.turns[:length],
        expected=conversation.expected[:length],
    )


@dataclass(slots=True)
class _Answers:
    """Every answer a trial may read: the session's, and what the executor got."""

    session: SessionAnswers
    asks: dict[tuple[str, int], _Ask]
    got: Mapping[AnswerKey, Response]
    read: set[AnswerKey] = field(default_factory=set)  # asked answers already attributed

    def of(self, slot: Slot) -> _Read:
        """The response a slot reads and where it comes from."""
        if slot.draw == 0:
            stored = stored_prefix(self.session, slot.conversation, slot.turn)
            if stored is not None:
                return _Read(answered(self.session, stored, slot.turn), stored)
        ask = self.asks.get((slot.conversation.id, slot.draw))
        if ask is None:
            return _Read(None, slot.conversation.id)
        if slot.turn in ask.done:
            return _Read(ask.done[slot.turn], slot.conversation.id)
        key = (ask.conversation.id, slot.turn)
        response = self.got.get(key)
        first = response is not None and key not in self.read
        self.read.add(key)
        return _Read(response, slot.conversation.id, seed=ask.seed, first=first)


@dataclass(frozen=True, slots=True)
class _Read:
    """A trial's answer: the response (None: none), the conversation it belongs to, the
    seed it was asked with (None: the session's own answer), whether this read is the call
    made for it (the first read of an answer asked now)."""

    response: Response | None
    conversation: str
    seed: int | None = None
    first: bool = False


def _spent(
    asks: Mapping[tuple[str, int], _Ask], got: Mapping[AnswerKey, Response], seconds: float
) -> dict[int, tuple[int, float]]:
    """The model calls (attempts included) per error (its plan's index), each conversation
    asked counting to the first error that needed it, and the asking's wall time `seconds`
    shared out by calls (so the errors' seconds add up to it, whatever the concurrency)."""
    calls: dict[int, int] = {}
    for ask in asks.values():
        if ask.used_by is None:
            continue
        calls[ask.used_by] = calls.get(ask.used_by, 0) + sum(
            response.attempts
            for turn in range(len(ask.conversation.turns))
            if (response := got.get((ask.conversation.id, turn))) is not None
        )
    total = sum(calls.values())
    return {
        index: (count, seconds * count / total if total else 0.0) for index, count in calls.items()
    }


def _judged(
    plan: ErrorPlan,
    answers: _Answers,
    spent: tuple[int, float],
    *,
    model: str,
    temperature: float | None,
    draws: int,
) -> Confirmation:
    """One error's confirmation from its trials' answers; `spent`: the calls made for it
    and their seconds."""
    verdict = plan.verdict
    rows: list[ConfirmationAnswer] = []
    holds: list[bool | None] = []
    for number, trial in enumerate(plan.trials):
        reads = [answers.of(slot) for slot in trial.slots]
        held = trial_holds(
            verdict.oracle,
            [
                read.response.answer
                if read.response is not None and read.response.error is None
                else None
                for read in reads
            ],
            plan.right,
        )
        holds.append(held)
        for position, (slot, read) in enumerate(zip(trial.slots, reads, strict=True)):
            response = read.response
            rows.append(
                ConfirmationAnswer(
                    trial=number,
                    position=position,
                    form=trial.form,
                    phrasing=trial.phrasing,
                    draw=slot.draw,
                    seed=read.seed,
                    conversation=read.conversation,
                    turn=slot.turn,
                    question=slot.conversation.turns[slot.turn].text,
                    raw=response.raw if response is not None else "",
                    answer=response.answer if response is not None else Answer.INVALID,
                    error="not asked" if response is None else response.error,
                    p_yes=response.p_yes if response is not None else None,
                    latency_ms=response.latency_ms if response is not None else 0.0,
                    asked=read.first,
                    holds=held,
                )
            )
    counted = [held for held in holds if held is not None]
    calls, seconds = spent
    return Confirmation(
        oracle=verdict.oracle,
        refs=verdict.refs,
        relation=verdict.relation_id,
        status=confirmation_status(holds),
        trials=len(plan.trials),
        counted=len(counted),
        held=sum(counted),
        calls=calls,
        seconds=seconds,
        draws=draws,
        temperature=temperature,
        model=model,
        answers=tuple(rows),
    )


# -- the session API's call ----------------------------------------------------------------


def choose_confirmed(
    store: Store,
    session_id: str,
    *,
    numbers: Sequence[int] = (),
    kind: str | None = None,
    verdict_ids: Sequence[int] = (),
) -> list[Verdict]:
    """The errors to ask again: the `numbers`-th (from 1) in the clearest-first list of
    `kind`'s errors (the order of `kontest explain --error N` and the Errors tab), the
    stored verdicts `verdict_ids`, else every error (of `kind`). One line when none fits."""
    if kind is not None and kind not in CLEAREST_ORACLES:
        raise InvalidInputError(
            f"unknown error kind {kind!r} (kinds: {', '.join(CLEAREST_ORACLES)})"
        )
    report = ensure_report(store, session_id, errors=0)
    if report.total_errors == 0:
        raise InvalidInputError(f"session {session_id} has no errors to confirm")
    store.views.ensure(session_id, evaluation_engine())
    lists = store.error_list
    total = lists.count_errors(session_id, kind)
    if total == 0:
        raise InvalidInputError(f"session {session_id} has no {kind} errors to confirm")
    chosen: list[Verdict] = []
    for number in numbers:
        if number < 1 or number > total:
            raise InvalidInputError(
                f"session {session_id} has {total} error{'s' if total != 1 else ''}"
                f"{f' of kind {kind}' if kind else ''}: --error takes 1 to {total}, not {number}"
            )
        row = lists.error_at(session_id, number - 1, oracle=kind)
        if row is not None:
            chosen.append(row.verdict)
    for verdict_id in verdict_ids:
        found = lists.error_of(session_id, verdict_id)
        if found is None:
            raise InvalidInputError(f"session {session_id} has no error {verdict_id}")
        chosen.append(found.verdict)
    if numbers or verdict_ids:
        return chosen
    return [row.verdict for row in lists.errors(session_id, limit=total, oracle=kind)]


def _read_session(store: Store, session_id: str, verdicts: Sequence[Verdict]) -> SessionAnswers:
    row = store.sessions.get(session_id)
    try:
        template_set: TemplateSet | None = template_set_from_dict(
            row["templates_json"], f"session {session_id}"
        )
    except KontestError:
        template_set = None
    _kinds, kind_options, _problems = session_kinds(store, session_id)
    wanted = {conversation_id for verdict in verdicts for conversation_id, _turn in verdict.refs}
    conversations = store.relations.conversations_by_id(session_id, wanted)
    relation_ids = {verdict.relation_id for verdict in verdicts}
    for relation_id in relation_ids:
        for conversation in store.relations.conversations_of(session_id, relation_id):
            conversations.setdefault(conversation.id, conversation)
    session = SessionAnswers(
        kg=session_graph(store, session_id),
        template_set=template_set,
        kind_options=kind_options,
        conversations=conversations,
        responses=store.responses.of_conversations(session_id, conversations),
        relations=store.relations.by_id(session_id, relation_ids),
        seed=int(row.get("seed") or 0),
    )
    index_prefixes(session)
    return session


async def confirm_errors(
    store: Store,
    session_id: str | None = None,
    *,
    numbers: Sequence[int] = (),
    kind: str | None = None,
    verdict_ids: Sequence[int] = (),
    draws: int | None = None,
    rewordings: int | None = None,
    model: str | None = None,
    config: ExecutorConfig | None = None,
    events: ExecutorEvents | None = None,
    on_planned: Callable[[int, int], None] | None = None,
) -> ConfirmationOutcome:
    """Ask the chosen errors of a stored session (the latest when None) again and store
    each one's status (module docstring): `numbers`, `kind` and `verdict_ids` as for
    `choose_confirmed`; `draws` new samples per error (None: DEFAULT_DRAWS at a temperature
    above 0, none at 0), `rewordings` covering-array rewordings of the wrong question
    (None: DEFAULT_REWORDINGS);
    `model` another spec for the session's model (the same model elsewhere); `on_planned`
    gets (errors, conversations to ask) before the first call."""
    session_id = store.sessions.resolve(session_id)
    if store.read_only:
        raise StoreError(f"cannot store confirmations: {store.path} is read only")
    if store.leases.held(session_id):
        raise InvalidInputError(
            f"a run is asking session {session_id} now: confirm its errors when it ends"
        )
    if draws is not None and not 0 <= draws <= MAX_DRAWS:
        raise InvalidInputError(f"--draws takes 0 to {MAX_DRAWS}, not {draws}")
    if rewordings is None:
        rewordings = DEFAULT_REWORDINGS
    if not 0 <= rewordings <= MAX_REWORDINGS:
        raise InvalidInputError(f"--rewordings takes 0 to {MAX_REWORDINGS}, not {rewordings}")
    verdicts = choose_confirmed(
        store, session_id, numbers=numbers, kind=kind, verdict_ids=verdict_ids
    )
    row = store.sessions.get(session_id)
    options = options_from_dict(row["options_json"])
    if draws is None:
        draws = 0 if options.temperature == 0 else DEFAULT_DRAWS
    session = _read_session(store, session_id, verdicts)
    plans = [plan_error(session, v, draws=draws, rewordings=rewordings) for v in verdicts]
    base_seed = options.seed if options.seed is not None else session.seed
    asks = _asks(session, plans, base_seed)
    if on_planned is not None:
        on_planned(len(plans), len(asks))
    spec = model or str(row["model"])
    chat = open_session_model(
        spec,
        session.kg,
        options,
        options.seed if options.seed is not None else 0,
        stored=model is None,
    )
    got: dict[AnswerKey, Response] = {}
    calls, seconds = 0, 0.0
    try:
        if asks:
            await chat.check()
            started = time.monotonic()
            base = config or ExecutorConfig()
            executor = Executor(
                chat,
                options,
                config=ExecutorConfig(
                    concurrency=base.concurrency,
                    max_attempts=base.max_attempts,
                    backoff_base=base.backoff_base,
                    backoff_max=base.backoff_max,
                    rate_limit=base.rate_limit,
                    use_cache=False,
                    share_answers=False,  # two draws of one question are two samples
                    jitter_seed=base.jitter_seed,
                ),
                events=events,
                seeds={ask.conversation.id: ask.seed for ask in asks.values()},
            )
            done = {
                (ask.conversation.id, turn): response.raw
                for ask in asks.values()
                for turn, response in ask.done.items()
            }
            await executor.run([ask.conversation for ask in asks.values()], done)
            got = dict(executor.responses)
            calls, seconds = executor.calls, time.monotonic() - started
    finally:
        await chat.aclose()
    answers = _Answers(session, asks, got)
    spent = _spent(asks, got, seconds)
    confirmations = [
        _judged(
            plan,
            answers,
            spent.get(index, (0, 0.0)),
            model=str(row["model"]),
            temperature=options.temperature,
            draws=draws,
        )
        for index, plan in enumerate(plans)
    ]
    store.confirmations.replace(session_id, confirmations)
    return ConfirmationOutcome(
        session=session_id,
        confirmations=confirmations,
        calls=calls,
        seconds=seconds,
        asked=len(asks),
        draws=draws,
    )
