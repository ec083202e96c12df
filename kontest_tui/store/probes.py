"""Probes stored with their session: questions asked by hand about one relation (run.probe).

The `probes` table (schema migration 10) is read by no oracle: a probe changes no metric
until it is promoted (a rephrasing made a template, or its word a synonym), and then what is
asked is the session's own conversations. Exports list probes apart from the responses. `store.probes` (`Probes`) reads and writes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kontest_tui.domain.records import Answer
from kontest_tui.errors import InvalidInputError

from .repository import Repository
from .schema import now_iso

PROMOTIONS = ("template", "synonym")


@dataclass(frozen=True, slots=True)
class StoredProbe:
    """One question asked by hand, as stored."""

    id: int
    session: str
    relation: str
    model: str
    question: str
    template: str | None  # the template text it was filled from; None: typed by hand
    raw: str
    answer: Answer
    error: str | None
    latency_ms: float
    created: str
    promoted: str | None = None


_COLUMNS = (
    "id",
    "session",
    "relation",
    "model",
    "question",
    "template",
    "raw",
    "answer",
    "error",
    "latency_ms",
    "created",
    "promoted",
)
_ANSWERS = frozenset(answer.value for answer in Answer)


class Probes(Repository):
    """The questions asked by hand about a session's relations (`probes`)."""

    def save(
        self,
        session_id: str,
        relation_id: str,
        *,
        model: str,
        question: str,
        template: str | None,
        raw: str,
        answer: Answer,
        error: str | None = None,
        latency_ms: float = 0.0,
    ) -> StoredProbe:
        """Store one probe of a session (committed at once); the stored record."""
        created = now_iso()
        row = (session_id, relation_id, model, question, template, raw, answer.value, error)
        with self.store.transaction() as conn:
            cursor = conn.execute(
                f"INSERT INTO probes ({', '.join(_COLUMNS[1:-1])}) VALUES ({', '.join('?' * 10)})",
                (*row, latency_ms, created),
            )
        return StoredProbe(int(cursor.lastrowid or 0), *row[:6], answer, error, latency_ms, created)

    def of_session(self, session_id: str, relation_id: str | None = None) -> Iterator[StoredProbe]:
        """A session's probes (of one relation), oldest first."""
        sql = f"SELECT {', '.join(_COLUMNS)} FROM probes WHERE session = ?"
        params: tuple[str, ...] = (session_id,)
        if relation_id is not None:
            sql += " AND relation = ?"
            params = (session_id, relation_id)
        for row in self._fetch(sql + " ORDER BY id", params):
            values = list(row)
            values[0], values[9] = int(values[0]), float(values[9])
            values[7] = Answer(values[7]) if values[7] in _ANSWERS else Answer.INVALID
            yield StoredProbe(*values)

    def mark_promoted(self, probe_id: int, promotion: str) -> None:
        """Record what a probe became: 'template' or 'synonym'."""
        if promotion not in PROMOTIONS:
            raise InvalidInputError(
                f"a probe is promoted to a template or a synonym, not {promotion!r}"
            )
        with self.store.transaction() as conn:
            conn.execute("UPDATE probes SET promoted = ? WHERE id = ?", (promotion, probe_id))
