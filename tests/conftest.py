"""Shared fixtures: every test gets its own KONTEST_HOME so user directories are never touched.
`--fail-on-skip` (the real-model lane, `make test-real`) turns a skipped test into a failure:
a lane whose tests all skip for want of the [local] extra must not pass."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fail-on-skip",
        action="store_true",
        help="a skipped test fails (the real-model lane must run every test it selects)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.skipped and item.config.getoption("--fail-on-skip"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped where it must run (--fail-on-skip): {reason}"
    return report


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("kontest-home")
    monkeypatch.setenv("KONTEST_HOME", str(home))
    return home
