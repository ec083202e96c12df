"""Reading a KG input file as UTF-8 text, with one clear `GraphError` when that fails."""

from __future__ import annotations

from pathlib import Path

from kontest_tui.errors import GraphError


def read_text(path: Path, origin: str) -> str:
    """The file's UTF-8 text (a leading BOM is dropped); unreadable files raise `GraphError`."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise GraphError(f"{origin}: no such file") from None
    except IsADirectoryError:
        raise GraphError(f"{origin}: is a directory, not a file") from None
    except OSError as error:
        raise GraphError(f"{origin}: cannot read file: {error.strerror or error}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise GraphError(f"{origin}: not UTF-8 text (bad byte at offset {error.start})") from None
