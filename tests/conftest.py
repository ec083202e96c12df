"""Shared fixtures: every test gets its own KONTEST_HOME so user directories are never touched."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path_factory.mktemp("kontest-home")
    monkeypatch.setenv("KONTEST_HOME", str(home))
    return home
