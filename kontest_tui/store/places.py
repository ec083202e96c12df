"""Where the explorer was in a session's results, so they reopen there.

The `session_places` table (schema migration 15): per session, the node selected in the
graph, the error whose card was shown (its verdict id) and whether the graph showed only the
nodes with errors. Written when the selection settles, read when the results open; deleted
with its session. A database opened read only keeps no place (the results open at the top).
`store.places` (`Places`) reads and writes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .repository import Repository
from .schema import now_iso


@dataclass(frozen=True, slots=True)
class Place:
    """A spot in a session's results: the node selected, the error shown, errors only."""

    node: str = ""
    verdict: int | None = None
    errors_only: bool = False


class Places(Repository):
    """The last place in each session's results (`session_places`)."""

    def get(self, session_id: str) -> Place | None:
        """The session's last place (None: none stored)."""
        rows = self._fetch(
            "SELECT node, verdict, errors_only FROM session_places WHERE session = ?",
            (session_id,),
        )
        if not rows:
            return None
        node, verdict, errors_only = rows[0]
        return Place(str(node), int(verdict) if verdict is not None else None, bool(errors_only))

    def save(self, session_id: str, place: Place) -> bool:
        """Keep `place` as the session's last one; False when the database is read only (or
        the session is gone): nothing is written then."""
        if self.store.read_only:
            return False
        with self.store.transaction() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                conn.execute(
                    "INSERT INTO session_places (session, node, verdict, errors_only, updated)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (session) DO UPDATE SET"
                    " node = excluded.node, verdict = excluded.verdict,"
                    " errors_only = excluded.errors_only, updated = excluded.updated",
                    (session_id, place.node, place.verdict, int(place.errors_only), now_iso()),
                )
                return True
        return False
