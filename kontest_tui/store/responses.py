"""The model's answers: one row per asked turn of a conversation (`responses`).

Every response is one INSERT committed on its own (`save`) or with its batch (`save_batch`,
what a run's writer calls), so a killed run loses at most the calls in flight and never
leaves half a row; a turn is stored once (the conversation's key and the turn are unique).
Text SQLite cannot hold (lone surrogates from a lenient decoder) is stored with U+FFFD in
its place; everything else exactly as received. `store.responses` (`Responses`) writes and
reads them: whole sessions (what an evaluation reads), a few conversations' (one card), the
atomic answers per relation (comparisons, the ensemble) and the timing sums.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import cast

from kontest_tui.domain.records import Answer, AnswerKey, Response
from kontest_tui.errors import StoreError

from .cache import CacheEntry, cache_rows, put_rows
from .records import ResponseRow, row_to_response
from .repository import Repository
from .schema import now_iso
from .text import storable_text

# The conversation's single-column key is looked up by (session, id) in the same statement;
# an unknown conversation leaves it NULL, which NOT NULL refuses.
_RESPONSE_INSERT = (
    "INSERT INTO responses (conversation_key, session, conversation, turn, raw, answer, error,"
    " latency_ms, tokens, attempts, created, cached, cut, stopped, p_yes) VALUES"
    " ((SELECT pk FROM conversations WHERE session = ?1 AND id = ?2),"
    " ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
)
_SESSION_ROWS = (
    "SELECT r.* FROM responses r JOIN conversations c ON c.pk = r.conversation_key"
    " WHERE r.session = ? ORDER BY c.position, r.turn"
)
_CHUNK = 500  # ids per query (SQLite allows 999 variables in old builds)
# Another session's answers to the first `upto` turns of one of its conversations, stored as
# answers of a conversation of this session (run.rerun): reused, no call made (attempts 0,
# `cached`), marked with the session they come from (`origin`). Failed turns are not copied.
_REUSE_INSERT = (
    "INSERT INTO responses (conversation_key, session, conversation, turn, raw, answer, error,"
    " latency_ms, tokens, attempts, created, cached, cut, stopped, origin)"
    " SELECT t.pk, t.session, t.id, r.turn, r.raw, r.answer, NULL, 0, r.tokens, 0, :created,"
    " 1, r.cut, r.stopped, s.session"
    " FROM conversations t, conversations s JOIN responses r ON r.conversation_key = s.pk"
    " WHERE t.session = :target AND t.id = :target_id AND s.session = :source"
    " AND s.id = :source_id AND r.turn < :upto AND r.error IS NULL"
)


def _response_values(
    session_id: str, response: Response, cached: bool, created: str
) -> list[object]:
    """The parameters of _RESPONSE_INSERT for one response."""
    return [
        session_id,
        response.conversation_id,
        response.turn,
        response.raw,
        response.answer.value,
        response.error,
        response.latency_ms,
        response.tokens,
        response.attempts,
        created,
        int(cached),
        response.cut,
        response.stopped,
        response.p_yes,
    ]


def _storable_values(values: list[object]) -> list[object]:
    """Response parameters with text SQLite cannot hold made storable (raw and error)."""
    values = list(values)
    for index in (3, 5):  # raw, error
        text = values[index]
        if isinstance(text, str):
            values[index] = storable_text(text)
    return values


def _insert_response(conn: sqlite3.Connection, values: list[object]) -> None:
    try:
        conn.execute(_RESPONSE_INSERT, values)
    except UnicodeEncodeError:
        conn.execute(_RESPONSE_INSERT, _storable_values(values))


def _response_error(session_id: str, response: Response, error: sqlite3.Error) -> StoreError:
    reason = str(error)
    if "UNIQUE" in reason:
        reason = "this turn is stored already (another run of the session answered it)"
    elif "responses.conversation_key" in reason:
        reason = f"session {session_id} has no conversation {response.conversation_id!r}"
    return StoreError(
        f"cannot store the response to {response.conversation_id} turn {response.turn}: {reason}"
    )


def count_responses(conn: sqlite3.Connection, session_id: str) -> dict[str, int]:
    """The session's answered turns, failed turns (rows with an error: no answer) and
    retries, counted from its responses (the session row's `answered`, `failed`, `retries`)."""
    row = conn.execute(
        "SELECT COALESCE(SUM(error IS NULL), 0), COALESCE(SUM(error IS NOT NULL), 0),"
        " COALESCE(SUM(MAX(attempts - 1, 0)), 0) FROM responses WHERE session = ?",
        (session_id,),
    ).fetchone()
    return {"answered": row[0], "failed": row[1], "retries": row[2]}


@dataclass(frozen=True, slots=True)
class TimingSums:
    """A session's calls, answers and tokens, summed over its response rows."""

    answers: int  # answered turns (failed ones included: each was asked)
    calls: int  # model calls, retries included (0 for a reused answer)
    cached: int  # answers reused from this run's memo or the cache (no call)
    tokens: int | None  # tokens of the answers the model was called for (None: none reported)
    mean_latency_ms: float | None  # of the answers the model was called for


class Responses(Repository):
    """The sessions' stored answers."""

    # -- writing -------------------------------------------------------------------------

    def save(self, session_id: str, response: Response, *, cached: bool = False) -> None:
        """Insert one response and commit it (a duplicate (conversation, turn) is an error)."""
        values = _response_values(session_id, response, cached, now_iso())
        try:
            _insert_response(self.conn, values)
        except sqlite3.Error as error:
            raise _response_error(session_id, response, error) from None

    def save_batch(
        self,
        session_id: str,
        responses: Sequence[tuple[Response, bool, str]],
        cache: Sequence[CacheEntry] = (),
    ) -> list[StoreError]:
        """Store responses ((response, cached, created) each) and cache entries ((key, model,
        raw, tokens) each) in one transaction: one commit for a whole batch.

        When a row cannot be stored (an unknown conversation, a duplicate turn), the batch is
        stored row by row instead, so every other answer is kept, and the rows that failed
        are returned as StoreErrors. A failure of the transaction itself (locked, read only,
        disk full) raises a StoreError and stores nothing."""
        rows = [_response_values(session_id, *entry) for entry in responses]
        cached = cache_rows(cache)
        try:
            with self.store.transaction() as conn:
                try:
                    conn.executemany(_RESPONSE_INSERT, rows)
                except UnicodeEncodeError:
                    conn.executemany(_RESPONSE_INSERT, [_storable_values(row) for row in rows])
                put_rows(conn, cached)
        except StoreError:
            if not rows:
                raise
        else:
            return []
        # One row spoiled the batch: keep every other one, return the failures.
        failures: list[StoreError] = []
        with self.store.transaction() as conn:
            for (response, _, _), values in zip(responses, rows, strict=True):
                conn.execute("SAVEPOINT one_row")
                try:
                    _insert_response(conn, values)
                except sqlite3.Error as error:
                    conn.execute("ROLLBACK TO one_row")
                    failures.append(_response_error(session_id, response, error))
                conn.execute("RELEASE one_row")
            put_rows(conn, cached)
        return failures

    def reuse(self, source: str, target: str, copies: Iterable[tuple[str, str, int]]) -> int:
        """Store answers of session `source` as answers of session `target`, in one
        transaction: for each (source conversation, target conversation, turns), the source's
        answers to those first turns (run.rerun decides which are the same questions). They
        are marked reused (`cached`, no attempt) and with their `origin`; the count stored."""
        created = now_iso()
        params = (
            {
                "created": created,
                "target": target,
                "target_id": target_id,
                "source": source,
                "source_id": source_id,
                "upto": upto,
            }
            for source_id, target_id, upto in copies
        )
        with self.store.transaction() as conn:
            before = conn.total_changes
            conn.executemany(_REUSE_INSERT, params)
            stored = conn.total_changes - before
        self.store.sessions.refresh_counts(target)
        return stored

    def delete_failed(self, session_id: str) -> int:
        """Delete the session's error responses and every later turn of their conversations
        (their context changes), so a resume asks them again; return how many went."""
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM responses WHERE session = ? AND EXISTS (SELECT 1 FROM responses e"
                " WHERE e.conversation_key = responses.conversation_key"
                " AND e.error IS NOT NULL AND e.turn <= responses.turn)",
                (session_id,),
            )
        self.store.sessions.refresh_counts(session_id)
        return cursor.rowcount

    # -- reading -------------------------------------------------------------------------

    def rows(self, session_id: str) -> Iterator[ResponseRow]:
        """Response rows in conversation order, then turn (what an export writes)."""
        return cast(Iterator[ResponseRow], self._dicts(_SESSION_ROWS, (session_id,)))

    def load(self, session_id: str) -> dict[AnswerKey, Response]:
        """(conversation id, turn) -> the stored response."""
        with self._damaged_rows("responses", session_id):
            return {
                (row["conversation"], row["turn"]): row_to_response(row)
                for row in self._dicts(_SESSION_ROWS, (session_id,))
            }

    def answers(self, session_id: str) -> dict[AnswerKey, Answer]:
        """(conversation id, turn) -> parsed answer: what the oracles read."""
        with self._damaged_rows("responses", session_id):
            return {
                (row[0], row[1]): Answer(row[2])
                for row in self._fetch(
                    "SELECT conversation, turn, answer FROM responses WHERE session = ?",
                    (session_id,),
                )
            }

    def of_conversations(
        self, session_id: str, conversation_ids: Iterable[str]
    ) -> dict[AnswerKey, Response]:
        """Every stored response (all turns) of these conversations."""
        unique = sorted(set(conversation_ids))
        found: dict[AnswerKey, Response] = {}
        with self._damaged_rows("responses", session_id):
            for start in range(0, len(unique), _CHUNK):
                part = unique[start : start + _CHUNK]
                for row in self._dicts(
                    "SELECT r.* FROM conversations c JOIN responses r"
                    " ON r.conversation_key = c.pk WHERE c.session = ?"
                    f" AND c.id IN ({','.join('?' * len(part))})",
                    (session_id, *part),
                ):
                    found[(row["conversation"], row["turn"])] = row_to_response(row)
        return found

    def answered_turns(self, session_id: str) -> dict[str, int]:
        """conversation id -> how many of its first turns have an answer (a failed turn, and
        every turn after it, has none): what another session may reuse (run.rerun)."""
        turns: dict[str, set[int]] = {}
        for conversation, turn in self._fetch(
            "SELECT conversation, turn FROM responses WHERE session = ? AND error IS NULL",
            (session_id,),
        ):
            turns.setdefault(str(conversation), set()).add(int(turn))
        answered: dict[str, int] = {}
        for conversation, found in turns.items():
            count = 0
            while count in found:
                count += 1
            answered[conversation] = count
        return answered

    def count_reused(self, session_id: str) -> int:
        """Stored responses of the session taken from another session (run.rerun)."""
        rows = self._fetch(
            "SELECT COUNT(*) FROM responses WHERE session = ? AND origin IS NOT NULL",
            (session_id,),
        )
        return int(rows[0][0])

    def count_cached(self, session_id: str) -> int:
        """Stored responses of the session that were reused (memo, cache or a shared call)."""
        rows = self._fetch(
            "SELECT COUNT(*) FROM responses WHERE session = ? AND cached", (session_id,)
        )
        return int(rows[0][0])

    def atomic_answers(self, session_id: str) -> dict[str, dict[str, str | None]]:
        """relation id -> template -> atomic KONTEST answer (None: asked, not answered), the
        first atomic conversation per (relation, template) counting, as the oracles read them."""
        found: dict[str, dict[str, str | None]] = {}
        for relation_id, template_id, answer, error in self._fetch(
            "SELECT c.relation, json_extract(c.turns, '$[0].template'), r.answer, r.error"
            " FROM conversations c LEFT JOIN responses r"
            " ON r.conversation_key = c.pk AND r.turn = 0"
            " WHERE c.session = ? AND c.shape = 'atomic' AND c.test_kind = 'kontest'"
            " ORDER BY c.position",
            (session_id,),
        ):
            if template_id is None:
                continue
            per = found.setdefault(relation_id, {})
            if template_id not in per:
                per[template_id] = answer if error is None else None
        return found

    def answer_seconds(self, session_id: str) -> dict[str, float]:
        """Seconds the model took to answer the calls made (reused answers excluded), summed
        per kind of conversation: "atomic" and "sequential" for KONTEST's (KONTEST Table 14),
        "other" for the other test kinds'."""
        rows = self._fetch(
            "SELECT CASE WHEN c.test_kind = 'kontest' THEN c.shape ELSE 'other' END,"
            " COALESCE(SUM(r.latency_ms), 0) FROM responses r JOIN conversations c"
            " ON c.pk = r.conversation_key WHERE r.session = ? AND r.cached = 0 GROUP BY 1",
            (session_id,),
        )
        found = {"atomic": 0.0, "sequential": 0.0, "other": 0.0}
        for kind, milliseconds in rows:
            key = kind if kind in found else "other"
            found[key] += float(milliseconds) / 1000
        return found

    def timing(self, session_id: str) -> TimingSums:
        """The timing sums of the session's responses (KONTEST Table 14): tokens and latency
        of the calls made only, never of reused answers."""
        answers, calls, cached, tokens, latency = self._fetch(
            "SELECT COUNT(*), COALESCE(SUM(attempts), 0), COALESCE(SUM(cached), 0),"
            " SUM(CASE WHEN cached = 0 THEN tokens END),"
            " AVG(CASE WHEN cached = 0 THEN latency_ms END)"
            " FROM responses WHERE session = ?",
            (session_id,),
        )[0]
        return TimingSums(
            int(answers),
            int(calls),
            int(cached),
            None if tokens is None else int(tokens),
            None if latency is None else round(float(latency), 3),
        )
