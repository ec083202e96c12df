"""One owner per session being run: a lease row in `session_leases`, renewed while the run lives.

`store.leases` (`Leases`) takes, renews and gives back a session's lease; the functions below
work inside a caller's transaction (the end of a run gives the lease back in the transaction
that stores its final status: `store.sessions.finish_run`).

A run takes the lease before it asks anything and gives it back when it ends (in the same
transaction as its final status). A second run or resume of the session is refused while
the lease is live. A lease is stale, and taken over, when its holder stopped renewing it
(`STALE_AFTER_S`) or, on the same host, when its process no longer exists (a `kill -9`).
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

from kontest_tui.errors import LeaseLostError, SessionBusyError

from .repository import Repository
from .schema import now_iso

# A live run renews its lease every RENEW_EVERY_S; one not renewed for STALE_AFTER_S is dead.
RENEW_EVERY_S = 10.0
STALE_AFTER_S = 60.0


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to run one session, held by one process."""

    session: str
    owner: str  # host:pid:token, unique per acquisition
    host: str
    pid: int


def _process_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def _age_s(stamp: str) -> float:
    try:
        return (datetime.now(UTC) - datetime.fromisoformat(stamp)).total_seconds()
    except ValueError:
        return float("inf")


def is_stale(host: str, pid: int, renewed: str, *, stale_after: float = STALE_AFTER_S) -> bool:
    """A lease whose holder is gone: not renewed for `stale_after` s, or a dead local pid."""
    if _age_s(renewed) > stale_after:
        return True
    return host == socket.gethostname() and not _process_alive(pid)


def acquire(conn: sqlite3.Connection, session: str, *, stale_after: float = STALE_AFTER_S) -> Lease:
    """Take the session's lease inside the caller's write transaction; SessionBusyError
    when another live process holds it."""
    host, pid = socket.gethostname(), os.getpid()
    row = conn.execute(
        "SELECT owner, host, pid, renewed FROM session_leases WHERE session = ?", (session,)
    ).fetchone()
    if row is not None and not is_stale(row[1], row[2], row[3], stale_after=stale_after):
        raise SessionBusyError(
            f"session {session} is being run by another kontest (pid {row[2]} on {row[1]}, "
            f"alive {row[3]}); wait for it to end or stop it, then resume"
        )
    lease = Lease(session, f"{host}:{pid}:{secrets.token_hex(6)}", host, pid)
    stamp = now_iso()
    conn.execute(
        "INSERT OR REPLACE INTO session_leases (session, owner, host, pid, acquired, renewed)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (session, lease.owner, host, pid, stamp, stamp),
    )
    return lease


def renew(conn: sqlite3.Connection, lease: Lease) -> bool:
    """Mark the lease alive; False when it was taken over (this run no longer owns it)."""
    cursor = conn.execute(
        "UPDATE session_leases SET renewed = ? WHERE session = ? AND owner = ?",
        (now_iso(), lease.session, lease.owner),
    )
    return cursor.rowcount == 1


def holder(conn: sqlite3.Connection, session: str) -> str:
    """Who holds the session's lease now ("pid P on HOST"), or "nobody"."""
    row = conn.execute(
        "SELECT host, pid FROM session_leases WHERE session = ?", (session,)
    ).fetchone()
    return f"pid {row[1]} on {row[0]}" if row is not None else "nobody"


def owns(conn: sqlite3.Connection, lease: Lease) -> bool:
    """Whether `lease` still holds its session (no other process took it over)."""
    row = conn.execute(
        "SELECT 1 FROM session_leases WHERE session = ? AND owner = ?",
        (lease.session, lease.owner),
    ).fetchone()
    return row is not None


def lost_message(conn: sqlite3.Connection, lease: Lease) -> str:
    """The one line of a run whose lease another process took over."""
    return (
        f"session {lease.session} was taken over by another kontest ({holder(conn, lease.session)})"
        f" while this run was paused past {STALE_AFTER_S:g} s: this run stopped asking and left "
        "the session to it (the answers it stored are kept)"
    )


def release(conn: sqlite3.Connection, lease: Lease) -> None:
    """Give the lease back (only if still ours)."""
    conn.execute(
        "DELETE FROM session_leases WHERE session = ? AND owner = ?", (lease.session, lease.owner)
    )


class Leases(Repository):
    """The sessions' leases (`session_leases`): who runs which session now."""

    def acquire(self, session_id: str) -> Lease:
        """Take the session's lease (SessionBusyError while another live run holds it)."""
        self.store.sessions.get(session_id)
        with self.store.transaction() as conn:
            return acquire(conn, session_id)

    def renew(self, lease: Lease) -> bool:
        """Keep the lease alive; False when another process took it over."""
        with self.store.transaction() as conn:
            return renew(conn, lease)

    def lost(self, lease: Lease) -> LeaseLostError:
        """The error of a run whose lease was taken over (saying by whom)."""
        return LeaseLostError(lost_message(self.conn, lease))

    def held(self, session_id: str) -> bool:
        """Whether a live run holds the session's lease (a stale one does not count)."""
        row = self.conn.execute(
            "SELECT host, pid, renewed FROM session_leases WHERE session = ?", (session_id,)
        ).fetchone()
        return row is not None and not is_stale(row[0], row[1], row[2])

    def release(self, lease: Lease) -> None:
        """Give the lease back (only if still ours)."""
        with self.store.transaction() as conn:
            release(conn, lease)
