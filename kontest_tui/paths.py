"""Where kontest-tui keeps its files: config, data (the session DB) and cache.

All locations come from platformdirs; `KONTEST_HOME` overrides all three (tests use it so
they never touch the real user directories). A directory that cannot be made (KONTEST_HOME
naming a file) is a NotADirectoryError whose text is one readable line (the CLI prints it).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from kontest_tui.safe_text import escape_unsafe

APP_NAME = "kontest-tui"


def _home_override(kind: str) -> Path | None:
    home = os.environ.get("KONTEST_HOME")
    return Path(home) / kind if home else None


def _made(path: Path, kind: str) -> Path:
    """`path`, made when missing; NotADirectoryError with one readable line when it cannot be
    (KONTEST_HOME naming a file, a directory that may not be written)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        where = "KONTEST_HOME" if os.environ.get("KONTEST_HOME") else "the user"
        raise NotADirectoryError(
            f"cannot use {path} for kontest's {kind} files ({where} directory): "
            f"{error.strerror or error}"
        ) from None
    return path


def config_dir() -> Path:
    """User config: extra templates, synonym lists, settings."""
    return _made(_home_override("config") or Path(platformdirs.user_config_dir(APP_NAME)), "config")


def data_dir() -> Path:
    """User data: the default session database."""
    return _made(_home_override("data") or Path(platformdirs.user_data_dir(APP_NAME)), "data")


def cache_dir() -> Path:
    """User cache: Wikidata query results, built KGs, model responses."""
    return _made(_home_override("cache") or Path(platformdirs.user_cache_dir(APP_NAME)), "cache")


def default_db_path() -> Path:
    """The session database used when `--db` is not given."""
    return data_dir() / "sessions.db"


def write_text_atomic(path: str | Path, text: str, *, newline: str | None = None) -> Path:
    """Write `text` to `path` whole or not at all: into a hidden temporary file beside it, then
    renamed over it (a full disk or a kill leaves the old file, never half a new one).
    Control and format characters are written as escapes (`safe_text.escape_unsafe`: JSON
    stays the same JSON), so no export drives a terminal that shows it. Parent folders are
    made; OSError as open() raises it. A target that exists and is not a regular file (a
    device such as /dev/stdout or /dev/full, a pipe) is written in place: renaming over it
    would replace the device itself with a file (run as root, it can)."""
    target = Path(path)
    if target.exists() and not target.is_file():
        with target.open("w", encoding="utf-8", newline=newline) as handle:
            handle.write(escape_unsafe(text))
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with temp.open("w", encoding="utf-8", newline=newline) as handle:
            handle.write(escape_unsafe(text))
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target
