"""Errors asked again (run.confirm): each error's confirmation and the answers its trials read.

The `confirmations` and `confirmation_answers` tables (schema migration 16) name an error by
its oracle and the answers it compares (`refs`, as `verdicts.refs` holds them), so a session
evaluated again keeps its confirmations. No oracle and no figure of the session reads them:
their calls are counted apart. Storing a session's confirmations ranks its errors again
(store.rollups: confirmed errors first, each error's status and weak mark) in the same
transaction. `store.confirmations` (`Confirmations`) reads and writes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kontest_tui.domain.records import Answer, AnswerKey, Verdict

from . import rollups
from .records import refs_text
from .repository import Repository
from .schema import now_iso

# A verdict as its confirmation names it: (oracle, its refs as verdicts.refs holds them).
ErrorKey = tuple[str, str]


def error_key(verdict: Verdict) -> ErrorKey:
    """How a confirmation names the error `verdict` is."""
    return verdict.oracle, refs_text(verdict.refs)


@dataclass(frozen=True, slots=True)
class ConfirmationAnswer:
    """One answer a trial read: which trial and which of the error's compared answers it
    stands for (`position`), the form and phrasing of the trial, the draw and the seed sent,
    the conversation asked and its turn, the question, reply, reading and margin; `asked`
    False when it is the session's own answer (the question as the run asked it) or another
    trial's (asked once); `holds` the trial's (None: not counted)."""

    trial: int
    position: int
    form: str
    phrasing: str
    draw: int
    seed: int | None
    conversation: str
    turn: int
    question: str
    raw: str
    answer: Answer
    error: str | None = None
    p_yes: float | None = None
    latency_ms: float = 0.0
    asked: bool = True
    holds: bool | None = None


@dataclass(frozen=True, slots=True)
class Confirmation:
    """One error asked again: its status (oracles.confirmation), the trials asked, counted
    (every answer a yes or a no) and held (the contradiction came back), the model calls made
    for it and its share of the asking's wall time (by calls), the draws, temperature and
    model; its trials' answers when read with them."""

    oracle: str
    refs: tuple[AnswerKey, ...]
    relation: str
    status: str
    trials: int
    counted: int
    held: int
    calls: int = 0
    seconds: float = 0.0
    draws: int = 0
    temperature: float | None = None
    model: str = ""
    created: str = ""
    answers: tuple[ConfirmationAnswer, ...] = field(default=(), compare=False)

    @property
    def key(self) -> ErrorKey:
        return self.oracle, refs_text(self.refs)


@dataclass(frozen=True, slots=True)
class ConfirmationSummary:
    """A session's confirmations in counts: errors asked again per status, model calls
    and their seconds (apart from the session's own answers)."""

    errors: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    trials: int = 0
    calls: int = 0
    seconds: float = 0.0
    confirmed: dict[str, int] = field(default_factory=dict)  # confirmed errors per oracle

    def to_json(self) -> dict[str, object]:
        return {
            "errors": self.errors,
            "statuses": dict(self.statuses),
            "trials": self.trials,
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "confirmed": dict(self.confirmed),
        }


_COLUMNS = (
    "oracle",
    "refs",
    "relation",
    "status",
    "trials",
    "counted",
    "held",
    "calls",
    "seconds",
    "draws",
    "temperature",
    "model",
    "created",
)
_ANSWER_COLUMNS = (
    "trial",
    "position",
    "form",
    "phrasing",
    "draw",
    "seed",
    "conversation",
    "turn",
    "question",
    "raw",
    "answer",
    "error",
    "p_yes",
    "latency_ms",
    "asked",
    "holds",
)


def _refs_of(text: str) -> tuple[AnswerKey, ...]:
    return tuple((str(ref), int(turn)) for ref, turn in json.loads(text))


class Confirmations(Repository):
    """The errors of stored sessions asked again (`confirmations`, `confirmation_answers`)."""

    def replace(self, session_id: str, confirmations: Sequence[Confirmation]) -> None:
        """Store these confirmations of a session's errors (an error asked again before has
        its earlier confirmation replaced) and rank the session's errors again, in one
        transaction."""
        created = now_iso()
        with self.store.transaction() as conn:
            for confirmation in confirmations:
                oracle, refs = confirmation.key
                conn.execute(
                    "DELETE FROM confirmations WHERE session = ? AND oracle = ? AND refs = ?",
                    (session_id, oracle, refs),
                )
                conn.execute(
                    f"INSERT INTO confirmations (session, {', '.join(_COLUMNS)})"
                    f" VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})",
                    (
                        session_id,
                        oracle,
                        refs,
                        confirmation.relation,
                        confirmation.status,
                        confirmation.trials,
                        confirmation.counted,
                        confirmation.held,
                        confirmation.calls,
                        confirmation.seconds,
                        confirmation.draws,
                        confirmation.temperature,
                        confirmation.model,
                        confirmation.created or created,
                    ),
                )
                conn.executemany(
                    "INSERT INTO confirmation_answers (session, oracle, refs,"
                    f" {', '.join(_ANSWER_COLUMNS)})"
                    f" VALUES ({', '.join('?' * (len(_ANSWER_COLUMNS) + 3))})",
                    (
                        (
                            session_id,
                            oracle,
                            refs,
                            answer.trial,
                            answer.position,
                            answer.form,
                            answer.phrasing,
                            answer.draw,
                            answer.seed,
                            answer.conversation,
                            answer.turn,
                            answer.question,
                            answer.raw,
                            answer.answer.value,
                            answer.error,
                            answer.p_yes,
                            answer.latency_ms,
                            int(answer.asked),
                            None if answer.holds is None else int(answer.holds),
                        )
                        for answer in confirmation.answers
                    ),
                )
            rollups.rewrite_errors(conn, session_id)

    def statuses(self, session_id: str) -> dict[ErrorKey, str]:
        """The status of every error of the session asked again, by error key."""
        return {
            (str(oracle), str(refs)): str(status)
            for oracle, refs, status in self._fetch(
                "SELECT oracle, refs, status FROM confirmations WHERE session = ?", (session_id,)
            )
        }

    def of_errors(
        self, session_id: str, verdicts: Iterable[Verdict], *, answers: bool = True
    ) -> dict[ErrorKey, Confirmation]:
        """The confirmations of these error verdicts (those asked again), with their trials'
        answers unless `answers` is False."""
        keys = {error_key(verdict) for verdict in verdicts}
        found: dict[ErrorKey, Confirmation] = {}
        with self._damaged_rows("confirmations", session_id):
            for oracle, refs in sorted(keys):
                rows = self._fetch(
                    f"SELECT {', '.join(_COLUMNS)} FROM confirmations"
                    " WHERE session = ? AND oracle = ? AND refs = ?",
                    (session_id, oracle, refs),
                )
                if not rows:
                    continue
                row = dict(zip(_COLUMNS, rows[0], strict=True))
                read = (
                    tuple(
                        _answer_of(dict(zip(_ANSWER_COLUMNS, found_row, strict=True)))
                        for found_row in self._fetch(
                            f"SELECT {', '.join(_ANSWER_COLUMNS)} FROM confirmation_answers"
                            " WHERE session = ? AND oracle = ? AND refs = ?"
                            " ORDER BY trial, position",
                            (session_id, oracle, refs),
                        )
                    )
                    if answers
                    else ()
                )
                found[oracle, refs] = Confirmation(
                    oracle=str(row["oracle"]),
                    refs=_refs_of(str(row["refs"])),
                    relation=str(row["relation"]),
                    status=str(row["status"]),
                    trials=int(row["trials"]),
                    counted=int(row["counted"]),
                    held=int(row["held"]),
                    calls=int(row["calls"]),
                    seconds=float(row["seconds"]),
                    draws=int(row["draws"]),
                    temperature=row["temperature"],
                    model=str(row["model"]),
                    created=str(row["created"]),
                    answers=read,
                )
        return found

    def summary(self, session_id: str) -> ConfirmationSummary:
        """The session's confirmations counted (no error asked again: all zeros)."""
        statuses: dict[str, int] = {}
        errors = trials = calls = 0
        seconds = 0.0
        for status, count, trial_count, call_count, spent in self._fetch(
            "SELECT status, COUNT(*), SUM(trials), SUM(calls), SUM(seconds) FROM confirmations"
            " WHERE session = ? GROUP BY status",
            (session_id,),
        ):
            statuses[str(status)] = int(count)
            errors += int(count)
            trials += int(trial_count or 0)
            calls += int(call_count or 0)
            seconds += float(spent or 0.0)
        confirmed = {
            str(oracle): int(count)
            for oracle, count in self._fetch(
                "SELECT oracle, COUNT(*) FROM confirmations WHERE session = ?"
                " AND status = 'confirmed' GROUP BY oracle",
                (session_id,),
            )
        }
        return ConfirmationSummary(errors, statuses, trials, calls, seconds, confirmed)


def _answer_of(row: dict[str, Any]) -> ConfirmationAnswer:
    seed, p_yes, holds = row["seed"], row["p_yes"], row["holds"]
    return ConfirmationAnswer(
        trial=int(row["trial"]),
        position=int(row["position"]),
        form=str(row["form"]),
        phrasing=str(row["phrasing"]),
        draw=int(row["draw"]),
        seed=None if seed is None else int(seed),
        conversation=str(row["conversation"]),
        turn=int(row["turn"]),
        question=str(row["question"]),
        raw=str(row["raw"]),
        answer=Answer(str(row["answer"])),
        error=None if row["error"] is None else str(row["error"]),
        p_yes=None if p_yes is None else float(p_yes),
        latency_ms=float(row["latency_ms"]),
        asked=bool(row["asked"]),
        holds=None if holds is None else bool(holds),
    )
