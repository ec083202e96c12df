"""What a command prints on stdout passes here: control and format characters from stored
answers, KG files or model errors are written as escapes (`safe_text.escape_unsafe`), so no
output can drive the terminal (clear it, retitle it, write the clipboard, reorder a line)."""

from __future__ import annotations

import click

from kontest_tui.safe_text import escape_unsafe


def echo_out(text: str, nl: bool = True) -> None:
    """Print `text` on stdout with its unsafe characters escaped (JSON stays the same JSON)."""
    click.echo(escape_unsafe(text), nl=nl)
