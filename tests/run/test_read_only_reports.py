"""Reading a report never writes: a session's report, its page and the explorer's results read
from a database file this process cannot write (a 0444 copy in a 0555 directory) give what
the writable original gives, and the file and its directory are left byte for byte as they
were (no -wal, no -shm, no migration, no refreshed report).

The session: the forgetful simulated model over the first 12 relations of `places`, every
test kind; `kontest report` on the writable original is the oracle (its figures are checked
against an evaluation of the stored answers in tests/run/test_run_stored_report.py), and the
relation count (12) is known from the limit.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import TestKind
from kontest_tui.kg.io import load_graph
from kontest_tui.run.api import SessionSpec, start_session
from kontest_tui.store import Store, database, rollups
from kontest_tui.tui.sessions import open_results, open_views

ALL_KINDS = tuple(kind for kind in TestKind if kind is not TestKind.ANNOTATION)


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A writable database with one done session (its report and views stored)."""
    path = tmp_path_factory.mktemp("original") / "s.db"
    with Store(path) as store:
        spec = SessionSpec(load_graph("places"), model="sim:forgetful", limit=12, kinds=ALL_KINDS)
        session_id = asyncio.run(start_session(store, spec)).session_id
    return path, session_id


def copy_of(path: Path, folder: Path) -> Path:
    folder.mkdir()
    copy = folder / path.name
    shutil.copyfile(path, copy)
    return copy


@pytest.fixture
def read_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Files made read only by `lock` are opened as such (root may write them anyway: the
    Store is told what another user's process finds)."""
    if os.geteuid() == 0:
        monkeypatch.setattr(database, "_writable", lambda path: False)
    yield


def lock(path: Path) -> dict[str, bytes]:
    """Make `path` and its directory read only; what the directory holds."""
    path.chmod(0o444)
    path.parent.chmod(0o555)
    return {p.name: p.read_bytes() for p in path.parent.iterdir()}


def unlock(path: Path) -> None:
    path.parent.chmod(0o755)
    path.chmod(0o644)


def edit(path: Path, sql: str, *params: str) -> None:
    """One hand edit, as a user's sqlite3 shell makes it (the copy is read only to the
    Store already)."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, params)
    conn.close()


def report(path: Path, session_id: str, fmt: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert run_cli(["report", session_id, "--db", str(path), "--format", fmt]) == 0
    return capsys.readouterr().out


def test_a_read_only_copy_reads_as_the_original(
    original: tuple[Path, str], tmp_path: Path, read_only: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path, session_id = original
    expected = {fmt: report(path, session_id, fmt, capsys) for fmt in ("text", "json", "html")}
    opened = open_results(path, session_id)
    copy = copy_of(path, tmp_path / "ro")
    files = lock(copy)
    try:
        with Store(copy, create=False) as store:
            assert store.read_only
        for fmt, text in expected.items():
            assert report(copy, session_id, fmt, capsys) == text, fmt
        figures = json.loads(expected["json"])
        assert figures["relations"] == 12
        seen = open_results(copy, session_id)
        assert (seen.report, seen.errors, seen.oracles) == (
            opened.report,
            opened.errors,
            opened.oracles,
        )
        assert seen.errors > 0 and seen.roots == opened.roots and seen.children == opened.children
        with open_views(copy) as store:
            first = store.error_list.errors(session_id, limit=5)
        with open_views(path) as store:
            assert first == store.error_list.errors(session_id, limit=5)
        assert {p.name: p.read_bytes() for p in copy.parent.iterdir()} == files
    finally:
        unlock(copy)


def test_views_missing_from_a_read_only_copy_are_built_in_memory(
    original: tuple[Path, str], tmp_path: Path, read_only: None
) -> None:
    """A file without the explorer's views (its report stored before they existed): they are
    built in memory for every read (each opens its own Store), the file unchanged."""
    path, session_id = original
    opened = open_results(path, session_id)
    with open_views(path) as store:
        first_errors = store.error_list.errors(session_id, limit=5)
    copy = copy_of(path, tmp_path / "ro")
    for table in rollups.TABLES:  # views not built yet: a report stored before they existed
        edit(copy, f"DELETE FROM {table}")
    files = lock(copy)
    try:
        seen = open_results(copy, session_id)
        assert (seen.report, seen.errors, seen.roots) == (
            opened.report,
            opened.errors,
            opened.roots,
        )
        with open_views(copy, session_id) as store:
            assert store.error_list.errors(session_id, limit=5) == first_errors
            root = opened.roots[0].node
            assert store.tree.children(session_id, root) == opened.children[root]
        assert {p.name: p.read_bytes() for p in copy.parent.iterdir()} == files
    finally:
        unlock(copy)


def test_a_stale_report_on_a_read_only_copy_is_evaluated_in_memory(
    original: tuple[Path, str], tmp_path: Path, read_only: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Answers changed by hand after the run: `kontest report` evaluates them (what
    `--re-evaluate` stores on a writable copy); the page, which lists stored verdicts, and
    the explorer say in one line that the file is read only."""
    path, session_id = original
    edited = copy_of(path, tmp_path / "edited")
    edit(
        edited,
        "UPDATE responses SET answer = 'no' WHERE id = (SELECT MIN(id) FROM responses"
        " WHERE session = ? AND answer = 'yes' AND turn = 0)",
        session_id,
    )
    copy = copy_of(edited, tmp_path / "ro")
    capsys.readouterr()
    # (root: the `read_only` fixture makes every file read only to the Store, so the edited
    # copy is evaluated in memory rather than with --re-evaluate, which would refuse it)
    assert run_cli(["report", session_id, "--db", str(edited)]) == 0
    evaluated = capsys.readouterr().out
    assert evaluated != report(path, session_id, "text", capsys)  # the edit shows
    files = lock(copy)
    try:
        assert report(copy, session_id, "text", capsys) == evaluated
        capsys.readouterr()
        assert run_cli(["report", session_id, "--db", str(copy), "--format", "html"]) != 0
        said = capsys.readouterr().err
        assert "read only" in said and len(said.strip().splitlines()) == 1
        with pytest.raises(Exception, match="read only"):
            open_results(copy, session_id)
        assert {p.name: p.read_bytes() for p in copy.parent.iterdir()} == files
    finally:
        unlock(copy)
