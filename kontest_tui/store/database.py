"""The session database: one SQLite file (WAL, foreign keys) opened, migrated and closed by `Store`.

A `Store` holds one sqlite3 connection (open it in the thread that uses it: the TUI opens one
per worker thread), its write transactions, and the repositories over it, one per family of
tables (docs/architecture.md, "The store"):

- `sessions` (store.sessions): the session rows and their KG snapshots; creating a session,
  ending a run;
- `relations` (store.relations): what a session asks, its relations and conversations;
- `responses` (store.responses): the answers, stored as they arrive;
- `verdicts` (store.verdicts): the oracles' verdicts, stored with the report;
- `reports` (store.reports): the stored Report JSON, read only when current;
- `views` (store.views): whether the explorer's derived tables are built (store.rollups
  writes them), and building them; read by `tree` (store.tree: the results tree),
  `error_list` (store.error_list: the ranked errors), `gaps` (store.gaps: the gap lists)
  and `details` (store.details: one relation's answers, verdicts and transcripts);
- `chunks` (store.chunks): a session a chunk of relations at a time (streamed runs);
- `cache` (store.cache): raw answers kept across sessions;
- `leases` (store.leases): which process runs which session;
- `probes` (store.probes): questions asked by hand;
- `confirmations` (store.confirmations): errors asked again and their trials' answers.

Readers give records or TypedDict rows (store.records). Failures raise `StoreError` with one
line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from kontest_tui import paths
from kontest_tui.errors import StoreError

from .schema import SCHEMA_VERSION, apply_migrations, read_version

if TYPE_CHECKING:
    from .cache import ResponseCache
    from .chunks import Chunks
    from .confirmations import Confirmations
    from .details import RelationDetails
    from .error_list import ErrorList
    from .gaps import GapLists
    from .leases import Leases
    from .places import Places
    from .probes import Probes
    from .relations import Relations
    from .reports import Reports
    from .responses import Responses
    from .search import ResultSearch
    from .sessions import Sessions
    from .tree import ResultTree
    from .verdicts import Verdicts
    from .views import ResultViews


def _writable(path: Path) -> bool:
    """Whether SQLite can write `path` and its journal files (the file and its directory)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _is_read_only_error(error: sqlite3.Error) -> bool:
    text = str(error).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that never writes, the file nor its directory: `immutable=1`
    when no -wal file is beside it (the file holds every commit; `mode=ro` would leave a
    -wal and -shm there), else `mode=ro` (it reads what a running writer's WAL holds), or
    `immutable=1` when the directory does not allow the WAL index to be made."""
    uri = "file:" + quote(str(path.resolve()))
    if Path(f"{path}-wal").exists():
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, timeout=10.0)
        try:
            conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
            return conn
        except sqlite3.OperationalError:
            conn.close()
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None, timeout=10.0)


def _switch_to_wal(conn: sqlite3.Connection, patience_s: float = 10.0) -> str:
    """`PRAGMA journal_mode = WAL`, tried again while another process holds the lock: the
    switch does not wait on the busy timeout, and processes opening a new DB together
    collide on it."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Store:
    """The session database at `path` (default: paths.default_db_path()), migrated on open.

    A file (or directory) this process cannot write is opened read only: reports, lists and
    exports work, writes fail with a StoreError; an older schema is then migrated in a
    private in-memory copy, never in the file."""

    def __init__(self, path: str | Path | None = None, *, create: bool = True) -> None:
        self.path = Path(path) if path is not None else paths.default_db_path()
        if not create and not self.path.exists():
            raise StoreError(f"no session database at {self.path}")
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a session database")
        self.new_file = not self.path.exists()  # made by this Store: removed if left unused
        self.read_only = self.path.exists() and not _writable(self.path)
        try:
            if self.read_only:
                conn = _connect_read_only(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"cannot open session database {self.path}: {error}") from None
        self.conn = conn
        try:
            try:
                self._set_up()
            except sqlite3.OperationalError as error:
                if self.read_only or not self.path.exists() or not _is_read_only_error(error):
                    raise
                # A read-only mount (or a file we may not write, as root on a read-only
                # file system): read it as it is.
                self.conn.close()
                self.read_only = True
                self.conn = _connect_read_only(self.path)
                self._set_up()
        except sqlite3.DatabaseError as error:
            self.conn.close()
            raise StoreError(f"{self.path} is not a kontest session database ({error})") from None
        except StoreError:
            self.conn.close()
            raise

    def _set_up(self) -> None:
        conn = self.conn
        conn.execute("PRAGMA busy_timeout = 10000")
        version = read_version(conn)
        if version is None:
            raise StoreError(
                f"{self.path} is not a kontest session database (it holds other tables)"
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this kontest "
                f"({SCHEMA_VERSION}); upgrade kontest-tui"
            )
        if self.read_only:
            if version < SCHEMA_VERSION:
                # Read the file as this kontest's schema without writing it: migrate a copy.
                memory = sqlite3.connect(":memory:", isolation_level=None)
                conn.backup(memory)
                conn.close()
                self.conn = conn = memory
                apply_migrations(conn)
            conn.execute("PRAGMA foreign_keys = ON")
            return
        mode = _switch_to_wal(conn)
        if str(mode).lower() != "wal":
            raise StoreError(f"cannot switch {self.path} to WAL mode (got {mode})")
        # NORMAL in WAL mode: a commit survives a killed process (not a power cut) and
        # costs no fsync, which keeps the per-response commit far below a millisecond.
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            apply_migrations(conn)
        conn.execute("PRAGMA foreign_keys = ON")

    # -- the repositories, each made (and its module imported) on first use: a command that
    # lists sessions never imports the explorer's views or the oracles the chunks read with

    @functools.cached_property
    def sessions(self) -> Sessions:
        from .sessions import Sessions

        return Sessions(self)

    @functools.cached_property
    def relations(self) -> Relations:
        from .relations import Relations

        return Relations(self)

    @functools.cached_property
    def responses(self) -> Responses:
        from .responses import Responses

        return Responses(self)

    @functools.cached_property
    def verdicts(self) -> Verdicts:
        from .verdicts import Verdicts

        return Verdicts(self)

    @functools.cached_property
    def reports(self) -> Reports:
        from .reports import Reports

        return Reports(self)

    @functools.cached_property
    def views(self) -> ResultViews:
        from .views import ResultViews

        return ResultViews(self)

    @functools.cached_property
    def tree(self) -> ResultTree:
        from .tree import ResultTree

        return ResultTree(self)

    @functools.cached_property
    def error_list(self) -> ErrorList:
        from .error_list import ErrorList

        return ErrorList(self)

    @functools.cached_property
    def gaps(self) -> GapLists:
        from .gaps import GapLists

        return GapLists(self)

    @functools.cached_property
    def details(self) -> RelationDetails:
        from .details import RelationDetails

        return RelationDetails(self)

    @functools.cached_property
    def chunks(self) -> Chunks:
        from .chunks import Chunks

        return Chunks(self)

    @functools.cached_property
    def cache(self) -> ResponseCache:
        from .cache import ResponseCache

        return ResponseCache(self)

    @functools.cached_property
    def leases(self) -> Leases:
        from .leases import Leases

        return Leases(self)

    @functools.cached_property
    def probes(self) -> Probes:
        from .probes import Probes

        return Probes(self)

    @functools.cached_property
    def search(self) -> ResultSearch:
        from .search import ResultSearch

        return ResultSearch(self)

    @functools.cached_property
    def places(self) -> Places:
        from .places import Places

        return Places(self)

    @functools.cached_property
    def confirmations(self) -> Confirmations:
        from .confirmations import Confirmations

        return Confirmations(self)

    # -- plumbing -------------------------------------------------------------------------

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close_after(failed=kind is not None)

    def close_after(self, *, failed: bool) -> None:
        """Close; a file this Store made is removed again when the command failed before
        storing any session (a failed `kontest run` leaves no empty database behind)."""
        unused = False
        if failed and self.new_file and not self.read_only:
            try:
                unused = self.conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is None
            except sqlite3.Error:
                unused = False
        self.close()
        if unused:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    Path(f"{self.path}{suffix}").unlink()

    @property
    def version(self) -> int:
        return read_version(self.conn) or 0

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all or nothing. SQLite failures (locked, read only, disk
        full, corrupt) become one-line StoreErrors."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise StoreError(f"{self.path}: {error}") from None
