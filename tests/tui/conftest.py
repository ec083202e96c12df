"""Fixtures for the explorer's tests: a session DB per test (helpers live in tests/support/tui.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tui import record_notifications


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    """A fresh session database (the explorer's --db)."""
    return str(tmp_path / "sessions.db")


@pytest.fixture(autouse=True)
def recorded_notifications(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every app's notifications kept for `tests.support.tui.notifications`."""
    record_notifications(monkeypatch)


@pytest.fixture(autouse=True)
def built_in_kinds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The explorer's tests (and snapshots) see the built-in test kinds only: the test
    plugin's kind, installed beside kontest for tests/kinds/, would add its row to the
    wizard's Kinds step."""
    from kontest_tui.kinds import registry

    monkeypatch.setattr(registry, "_plugin_kinds", lambda: ((), ()))
