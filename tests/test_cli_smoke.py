"""The `kontest` entry point: help works, bad options give one line and exit code 2."""

from __future__ import annotations

import subprocess
import sys


def run_kontest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kontest_tui.cli", *args], capture_output=True, text=True, timeout=60
    )


def test_help_lists_usage() -> None:
    done = run_kontest("--help")
    assert done.returncode == 0
    assert "Usage: kontest" in done.stdout


def test_unknown_option_is_one_line_exit_2() -> None:
    done = run_kontest("--no-such-option")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "no-such-option" in done.stderr
    assert "Traceback" not in done.stderr
