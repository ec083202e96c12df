"""The explorer quits when its terminal goes away (a closed window, `tmux kill-server`).

Before, a `kontest` started under `make run` in tmux outlived `tmux kill-server` at 100%
CPU: the terminal hung up without a SIGHUP reaching the app (it was not the session's
leader), and Textual's input thread read the dead terminal in a loop. Here the explorer runs
on a pseudo-terminal that is not its controlling terminal (so no SIGHUP either); closing the
terminal's other end must end the process.
"""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux pseudo-terminals")


def read_until(fd: int, text: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    os.set_blocking(fd, False)
    while time.monotonic() < deadline and text not in seen:
        try:
            seen += os.read(fd, 65536)
        except BlockingIOError:
            time.sleep(0.05)
    return seen


def test_the_explorer_exits_when_its_terminal_hangs_up() -> None:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "kontest_tui.cli", "--kg", "places", "--model", "sim"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    os.close(slave)
    try:
        shown = read_until(master, b"kontest-tui", timeout=90)
        assert b"kontest-tui" in shown, shown[-500:]
        os.close(master)  # the terminal goes away
        master = -1
        process.wait(timeout=30)  # before: still running, reading the dead terminal
    finally:
        if master >= 0:
            os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
