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
