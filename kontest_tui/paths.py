"""Where kontest-tui keeps its files: config, data (the session DB) and cache.

All locations come from platformdirs; `KONTEST_HOME` overrides all three (tests use it so
they never touch the real user directories).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "kontest-tui"


def _home_override(kind: str) -> Path | None:
    home = os.environ.get("KONTEST_HOME")
    return Path(home) / kind if home else None


def config_dir() -> Path:
    """User config: extra templates, synonym lists, settings."""
    path = _home_override("config") or Path(platformdirs.user_config_dir(APP_NAME))
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """User data: the default session database."""
    path = _home_override("data") or Path(platformdirs.user_data_dir(APP_NAME))
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """User cache: Wikidata query results, built KGs, model responses."""
    path = _home_override("cache") or Path(platformdirs.user_cache_dir(APP_NAME))
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_db_path() -> Path:
    """The session database used when `--db` is not given."""
    return data_dir() / "sessions.db"
