"""What comparisons and the ensemble read of a stored session, each one indexed query.

Each function takes the connection (`Store.conn`, opened in the reading thread) and a session
id and reads only what it returns: the relation ids in order, the metamorphic errors per
relation (the weighted ensemble's x_r), the verdicts of some oracles or the errors, the
conversations of some test kinds with their first answers, and the timing sums (KONTEST
Table 14). Verdict reads are only as current as the stored report (results.reports).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kontest_tui.domain.extras import ConversationExtras, extras_from_json
from kontest_tui.domain.records import Verdict

from .records import row_to_verdict

_VERDICT_COLUMNS = ("oracle", "relation", "template", "error", "refs", "answers", "detail")


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def read_relation_ids(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """The session's relation ids in its order."""
    return [
        str(row[0])
        for row in conn.execute(
            "SELECT id FROM relations WHERE session = ? ORDER BY position", (session_id,)
        )
    ]


def read_errors_by_relation(
    conn: sqlite3.Connection, session_id: str, oracles: Sequence[str]
) -> dict[str, int]:
    """relation id -> its error verdicts of `oracles` (relations without one left out)."""
    return {
        str(relation): int(count)
        for relation, count in conn.execute(
            "SELECT relation, COUNT(*) FROM verdicts WHERE session = ? AND error = 1"
            f" AND oracle IN ({_marks(oracles)}) GROUP BY relation",
            (session_id, *oracles),
        )
    }


def read_verdicts(
    conn: sqlite3.Connection, session_id: str, *, oracles: Sequence[str] = ()
) -> list[Verdict]:
    """The session's error verdicts and every verdict of `oracles`, in stored order."""
    condition = "error = 1"
    if oracles:
        condition = f"(error = 1 OR oracle IN ({_marks(oracles)}))"
    cursor = conn.execute(
        f"SELECT {', '.join(_VERDICT_COLUMNS)} FROM verdicts WHERE session = ? AND {condition}"
        " ORDER BY id",
        (session_id, *oracles),
    )
    return [row_to_verdict(dict(zip(_VERDICT_COLUMNS, row, strict=True))) for row in cursor]


@dataclass(frozen=True, slots=True)
class FirstAnswer:
    """A conversation of some test kind with the answer to its first turn (if any)."""

    conversation: str
    question: str
    answer: str | None  # the parsed answer (None: no answer)
    expected: str | None  # its first expected answer, when the kind knows it
    extras: ConversationExtras | None  # what its test kind records (domain.extras)


def read_first_answers(
    conn: sqlite3.Connection, session_id: str, test_kinds: Iterable[str]
) -> list[FirstAnswer]:
    """The conversations of `test_kinds` with their first turn's question and answer."""
    kinds = list(test_kinds)
    found: list[FirstAnswer] = []
    for cid, kind, turns, expected, meta, answer, error in conn.execute(
        "SELECT c.id, c.test_kind, c.turns, c.expected, c.meta, r.answer, r.error"
        " FROM conversations c"
        " LEFT JOIN responses r ON r.conversation_key = c.pk AND r.turn = 0"
        f" WHERE c.session = ? AND c.test_kind IN ({_marks(kinds)}) ORDER BY c.position",
        (session_id, *kinds),
    ):
        questions = json.loads(turns)
        if not questions:
            continue
        expectations = json.loads(expected) if expected else []
        found.append(
            FirstAnswer(
                str(cid),
                str(questions[0]["text"]),
                str(answer) if answer is not None and error is None else None,
                str(expectations[0]) if expectations and expectations[0] else None,
                extras_from_json(str(kind), json.loads(meta)) if meta else None,
            )
        )
    return found


@dataclass(frozen=True, slots=True)
class TimingSums:
    """A session's calls, answers and tokens, summed over its response rows."""

    answers: int  # answered turns (failed ones included: each was asked)
    calls: int  # model calls, retries included (0 for a reused answer)
    cached: int  # answers reused from this run's memo or the cache (no call)
    tokens: int | None  # tokens of the answers the model was called for (None: none reported)
    mean_latency_ms: float | None  # of the answers the model was called for


def read_timing(conn: sqlite3.Connection, session_id: str) -> TimingSums:
    """The timing sums of the session's responses (KONTEST Table 14): tokens and latency of
    the calls made only, never of reused answers."""
    answers, calls, cached, tokens, latency = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(attempts), 0), COALESCE(SUM(cached), 0),"
        " SUM(CASE WHEN cached = 0 THEN tokens END),"
        " AVG(CASE WHEN cached = 0 THEN latency_ms END)"
        " FROM responses WHERE session = ?",
        (session_id,),
    ).fetchone()
    return TimingSums(
        int(answers),
        int(calls),
        int(cached),
        None if tokens is None else int(tokens),
        None if latency is None else round(float(latency), 3),
    )
