"""Reading a KG input file as UTF-8 text, with one clear `GraphError` when that fails."""

from __future__ import annotations

from pathlib import Path

from kontest_tui.errors import GraphError
from kontest_tui.validate_input import read_input_text


def read_text(path: Path, origin: str) -> str:
    """The file's UTF-8 text (a leading BOM is dropped); unreadable files raise `GraphError`."""
    return read_input_text(path, origin, GraphError)
