"""Fixtures for the explorer's tests: a session DB per test (helpers live in tests/support/tui.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    """A fresh session database (the explorer's --db)."""
    return str(tmp_path / "sessions.db")
