"""Running the command line in process, as the tests of many areas do."""

from __future__ import annotations

import pytest

from kontest_tui.cli import run_cli


def kontest(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """`kontest ARGS...` run in this process: its exit code, stdout and stderr (what was
    printed before is dropped)."""
    capsys.readouterr()
    code = run_cli([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return code, out, err
