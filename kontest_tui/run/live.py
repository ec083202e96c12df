"""Running counts of a run for a live view, made as answers arrive: `LiveTally`.

A run's answers arrive in the run's thread (run.executor's `on_answer` and `on_token`
events). The tally keeps, at a small constant cost per answer: how many turns were answered
(valid, invalid, failed) per test kind; the metamorphic tests and errors of each relation,
judged once, when its KONTEST conversations are all answered (oracles.metamorphic, the same
function the final evaluation uses: a relation's tests look at its own answers only); the
latest answers and error verdicts in bounded buffers; the text streaming in for the turns in
flight. A view reads it from another thread with `snapshot()`, as often as it redraws. The
run's thread is the only writer and takes no lock (an answer costs about 3 µs): a snapshot
copies each counter and buffer in one step (the GIL makes each copy whole), so its parts may
be an answer or two apart, never torn.

What it never does: evaluate all the answers so far (the ontological oracle looks across
relations and the other kinds' judges across conversations; their figures come with the
run's final evaluation, the stored report). Memory is bounded by the relations in flight.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field, replace

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Response, TestKind, Verdict
from kontest_tui.oracles.conversation_index import RelationConversations
from kontest_tui.oracles.metamorphic import METAMORPHIC_ORACLES, find_relation_verdicts
from kontest_tui.run.executor import ExecutorEvents

RECENT = 40  # answers and errors kept for the view

_YES, _NO, _KONTEST = Answer.YES, Answer.NO, TestKind.KONTEST
STREAMING = 8  # turns in flight shown
OPEN_RELATIONS = 4096  # relations partly answered kept at most (judged when dropped)


@dataclass(frozen=True, slots=True)
class LiveAnswer:
    """One answered turn and the conversation it belongs to."""

    conversation: Conversation
    response: Response


@dataclass(frozen=True, slots=True)
class LiveError:
    """One error verdict found during the run, with the question its first answer was to."""

    verdict: Verdict
    question: str


@dataclass(frozen=True, slots=True)
class LiveCounts:
    """A copy of the tally at one moment (what a view draws)."""

    answered: int = 0  # turns answered in this run (failed ones included)
    valid: int = 0
    invalid: int = 0
    failed: int = 0
    cut: int = 0  # answers cut before anything readable (not invalid: counted apart)
    relations: int = 0  # relations whose KONTEST conversations are all answered
    per_kind: dict[str, int] = field(default_factory=dict)  # turns answered per test kind
    tests: dict[str, int] = field(default_factory=dict)  # metamorphic tests per oracle
    errors: dict[str, int] = field(default_factory=dict)  # metamorphic errors per oracle
    recent: tuple[LiveAnswer, ...] = ()  # the latest answers, oldest first
    recent_errors: tuple[LiveError, ...] = ()  # the latest errors, oldest first
    streaming: tuple[tuple[Conversation, int, str], ...] = ()  # (conversation, turn, text)

    @property
    def error_total(self) -> int:
        return sum(self.errors.values())

    @property
    def test_total(self) -> int:
        return sum(self.tests.values())


@dataclass(slots=True)
class _Open:
    """A relation whose KONTEST conversations are not all answered yet."""

    entry: RelationConversations
    answers: dict[AnswerKey, Answer] = field(default_factory=dict)
    complete: int = 0  # KONTEST conversations with every turn answered


class LiveTally:
    """Running counts of one run (see the module docstring). `per_relation` is the number
    of KONTEST conversations of a relation (k atomic questions and, with k >= 2, the two
    sequential ones: `kontest_per_relation(k)`)."""

    def __init__(self, per_relation: int, recent: int = RECENT) -> None:
        self.per_relation = per_relation
        self._open: OrderedDict[str, _Open] = OrderedDict()
        self._recent: deque[tuple[Conversation, Response]] = deque(maxlen=recent)
        # each error with the conversations of its relation (its question is read when shown)
        self._errors: deque[tuple[Verdict, RelationConversations]] = deque(maxlen=recent)
        self._streaming: dict[tuple[str, int], tuple[Conversation, str]] = {}
        self._answered = self._valid = self._invalid = self._failed = self._relations = 0
        self._cut = 0
        self._per_kind: dict[str, int] = {}
        self._tests = dict.fromkeys(METAMORPHIC_ORACLES, 0)
        self._error_counts = dict.fromkeys(METAMORPHIC_ORACLES, 0)

    def events(self, base: ExecutorEvents | None = None) -> ExecutorEvents:
        """Executor events that feed this tally (and `base`'s other callbacks)."""
        return replace(base or ExecutorEvents(), on_stream=self.add_text, on_answer=self.add)

    def add_text(self, conversation: Conversation, turn: int, text: str) -> None:
        """Text streaming in for a turn in flight (the last 400 characters are kept)."""
        key = (conversation.id, turn)
        known = self._streaming.get(key)
        partial = known[1] + text if known is not None else text
        self._streaming[key] = (conversation, partial[-400:])

    def add(self, conversation: Conversation, response: Response) -> None:
        """One answered turn (in the run's thread)."""
        if self._streaming:
            self._streaming.pop((response.conversation_id, response.turn), None)
        self._recent.append((conversation, response))
        self._answered += 1
        kind = conversation.test_kind
        self._per_kind[kind] = self._per_kind.get(kind, 0) + 1
        answer = response.answer
        if response.error is not None:
            self._failed += 1
        elif answer is _YES or answer is _NO:
            self._valid += 1
        elif answer is Answer.CUT:
            self._cut += 1
        else:
            self._invalid += 1
        if kind is _KONTEST and conversation.turns:
            self._add_kontest(conversation, response)

    def _add_kontest(self, conversation: Conversation, response: Response) -> None:
        relation_id = conversation.relation_id
        state = self._open.get(relation_id)
        if state is None:
            state = self._open[relation_id] = _Open(RelationConversations(relation_id))
            if len(self._open) > OPEN_RELATIONS:
                self._judge(*self._open.popitem(last=False))
        if response.error is None:
            state.answers[response.conversation_id, response.turn] = response.answer
        if response.turn != len(conversation.turns) - 1:
            return  # the conversation goes on
        entry = state.entry
        if conversation.kind == "atomic":
            template_id = conversation.turns[0].template_id
            entry.add_template(template_id)
            entry.atomic.setdefault(template_id, conversation)
        elif len(conversation.turns) >= 2:
            for query in conversation.turns:
                entry.add_template(query.template_id)
            entry.sequential.append(conversation)
        state.complete += 1
        if state.complete >= self.per_relation:
            del self._open[relation_id]
            self._judge(relation_id, state)

    def _judge(self, relation_id: str, state: _Open) -> None:
        """Count a relation's metamorphic tests (once: it leaves the open relations)."""
        self._relations += 1
        for verdict in find_relation_verdicts(state.entry, state.answers):
            self._tests[verdict.oracle] += 1
            if verdict.error:
                self._error_counts[verdict.oracle] += 1
                self._errors.append((verdict, state.entry))

    def finish(self) -> None:
        """Judge the relations still open (the run ended: a cancel, failed turns). In the
        run's thread, after its last answer."""
        while self._open:
            self._judge(*self._open.popitem(last=False))

    def snapshot(self) -> LiveCounts:
        """The counts now, and copies of the bounded buffers (from any thread)."""
        streaming = list(self._streaming.items())[-STREAMING:]
        recent = tuple(self._recent)
        errors = tuple(self._errors)
        return LiveCounts(
            answered=self._answered,
            valid=self._valid,
            invalid=self._invalid,
            failed=self._failed,
            cut=self._cut,
            relations=self._relations,
            per_kind={str(kind): count for kind, count in list(self._per_kind.items())},
            tests=dict(self._tests),
            errors=dict(self._error_counts),
            recent=tuple(LiveAnswer(conversation, response) for conversation, response in recent),
            recent_errors=tuple(
                LiveError(verdict, _question(entry, verdict)) for verdict, entry in errors
            ),
            streaming=tuple(
                (conversation, turn, text) for (_, turn), (conversation, text) in streaming
            ),
        )


def kontest_per_relation(templates: int) -> int:
    """KONTEST conversations of a relation asked with `templates` templates
    (generate.conversations: one atomic per template, and A and B for the first two)."""
    return templates + (2 if templates >= 2 else 0)


def _question(entry: RelationConversations, verdict: Verdict) -> str:
    """The question the verdict's first answer was to."""
    conversation_id, turn = verdict.refs[0]
    for conversation in (*entry.atomic.values(), *entry.sequential):
        if conversation.id == conversation_id:
            return conversation.turns[turn].text
    return ""
