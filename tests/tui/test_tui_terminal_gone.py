"""The explorer quits when its terminal goes away (a closed window, `tmux kill-server`), at any
moment, a run at full speed included, and the answers stored so far can be resumed.

Before, a `kontest` started under `make run` in tmux outlived `tmux kill-server` at 100%
CPU: the terminal hung up without a SIGHUP reaching the app (it was not the session's
leader), and Textual's input thread read the dead terminal in a loop. And a terminal closed
while answers arrived at full speed left the process alive (3 of 6 tries): the
run's thread went on to evaluate every answer, and the interpreter waited for it. Here the
explorer runs on a pseudo-terminal, either not its controlling terminal (no SIGHUP: only
the dead terminal tells) or its controlling terminal (closing it sends SIGHUP); closing the
terminal's other end must end the process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux pseudo-terminals")

CTRL_R = b"\x12"


def read_until(fd: int, text: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    os.set_blocking(fd, False)
    while time.monotonic() < deadline and text not in seen:
        try:
            seen += os.read(fd, 65536)
        except BlockingIOError:
            time.sleep(0.05)
        except OSError:  # EIO: the other end is gone (the process ended)
            break
    return seen


@contextlib.contextmanager
def on_pty(
    args: list[str], env: dict[str, str], *, controlling: bool
) -> Iterator[tuple[subprocess.Popen[bytes], Terminal]]:
    """`kontest ARGS` on a pseudo-terminal (killed at the end if still running)."""
    process, master = start_on_pty(args, env, controlling=controlling)
    terminal = Terminal(master)
    try:
        yield process, terminal
    finally:
        terminal.close()
        if process.poll() is None:
            process.kill()
            process.wait()


class Terminal:
    """The terminal's side of a pseudo-terminal: closed once (the terminal goes away)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def start_on_pty(
    args: list[str], env: dict[str, str], *, controlling: bool
) -> tuple[subprocess.Popen[bytes], int]:
    """Run `kontest ARGS` with a pseudo-terminal as its stdin/stdout/stderr (and, when
    `controlling`, as its controlling terminal: closing it then sends SIGHUP)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))

    def take_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        [sys.executable, "-m", "kontest_tui.cli", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
        env={**os.environ, **env, "TERM": "xterm-256color"},
        preexec_fn=take_terminal if controlling else None,  # noqa: PLW1509 - test only
    )
    os.close(slave)
    return process, master


def test_the_explorer_exits_when_its_terminal_hangs_up(tmp_path: Path) -> None:
    args = ["--kg", "places", "--model", "sim", "--db", str(tmp_path / "s.db")]
    with on_pty(args, {"KONTEST_HOME": str(tmp_path)}, controlling=False) as (process, term):
        shown = read_until(term.fd, b"kontest-tui", timeout=90)
        assert b"kontest-tui" in shown, shown[-500:]
        term.close()  # the terminal goes away
        process.wait(timeout=30)  # before: still running, reading the dead terminal


def country_kg(path: Path, regions: int = 60, places: int = 60) -> int:
    """A places KG of one country, `regions` regions of `places` places each; its relations."""
    nodes = [{"id": "c", "label": "Country", "aliases": [], "type": "country"}]
    edges = []
    for r in range(regions):
        nodes.append({"id": f"r{r}", "label": f"Region {r}", "aliases": [], "type": "region"})
        edges.append({"parent": "c", "child": f"r{r}", "relation": "contains"})
        for p in range(places):
            node = f"r{r}p{p}"
            nodes.append({"id": node, "label": f"Place {r}-{p}", "aliases": [], "type": "locality"})
            edges.append({"parent": f"r{r}", "child": node, "relation": "contains"})
    graph = {"name": "country", "domain": "places", "source": "test", "built": ""}
    path.write_text(json.dumps({**graph, "nodes": nodes, "edges": edges}), encoding="utf-8")
    return regions + 2 * regions * places


def stored_answers(db: Path) -> tuple[str, str, int]:
    """(session id, status, answers stored) of the only session."""
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT id, status FROM sessions").fetchone()
        if row is None:
            return "", "", 0
        count = conn.execute("SELECT COUNT(*) FROM responses WHERE session = ?", row[:1])
        return str(row[0]), str(row[1]), int(count.fetchone()[0])


@pytest.mark.parametrize("controlling", [False, True], ids=["no-sighup", "sighup"])
def test_a_full_speed_run_ends_with_its_terminal_and_can_be_resumed(
    tmp_path: Path, controlling: bool
) -> None:
    kg = tmp_path / "country.json"
    # 7,260 relations, 43,560 model calls: seconds at full speed, so the terminal closes
    # while most are still to come
    relations = country_kg(kg)
    db = tmp_path / "s.db"
    args = ["--kg", str(kg), "--model", "sim", "--db", str(db)]
    env = {"KONTEST_HOME": str(tmp_path)}
    with on_pty(args, env, controlling=controlling) as (process, term):
        shown = read_until(term.fd, b"model calls.", timeout=120)  # the wizard is prepared
        assert b"model calls." in shown, shown[-800:]
        os.write(term.fd, CTRL_R)
        # The run is going at full speed: answers are being stored.
        deadline = time.monotonic() + 120
        while stored_answers(db)[2] < 2000:
            read_until(term.fd, b"\0", timeout=0.2)  # keep the terminal's output drained
            assert time.monotonic() < deadline, "the run never got going"
            assert process.poll() is None, "the explorer ended before its terminal"
        term.close()  # the terminal goes away, answers arriving
        try:
            process.wait(timeout=30)  # ends within EXIT_GRACE_S once it notices (about 1 s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 30 s after its terminal closed: {stored_answers(db)}")
    session_id, status, stored = stored_answers(db)
    # cut short: cancelled, by its run winding down in time or by the process as it ends
    # (not left `running`, as a run still busy then would be without the cut-off handling)
    assert status == "cancelled" and 2000 <= stored < relations * 6, (status, stored)
    # What is stored is resumable: only the rest is asked, and the session is complete.
    assert run_cli(["run", "--resume", session_id, "--db", str(db), "--quiet"]) == 0
    session_id, status, stored = stored_answers(db)
    assert (status, stored) == ("done", relations * 6)
