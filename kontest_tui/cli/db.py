"""What the session commands share: `--db`, the store it names, the commands printed back to
the user with it, and writing `--out`."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TypeVar

import click

from kontest_tui.cli.output import echo_out
from kontest_tui.errors import InvalidInputError
from kontest_tui.paths import write_text_atomic
from kontest_tui.store.database import Store

F = TypeVar("F", bound=Callable[..., object])


def db_option(function: F) -> F:
    """Add `--db FILE` to a command, as the `db` parameter."""
    return click.option(
        "--db",
        type=click.Path(dir_okay=False),
        default=None,
        help="Session database (default: the user data directory's sessions.db).",
    )(function)


def out_option(function: F) -> F:
    """Add `--out FILE` to a command (written whole by `write_output`), as the `out`
    parameter."""
    return click.option(
        "--out",
        type=click.Path(dir_okay=False, writable=True),
        default=None,
        help="Write to this file instead of stdout.",
    )(function)


def db_arg(ctx: click.Context, db: str | None) -> str | None:
    """The --db the user gave (to this command or the group), for commands we print."""
    if db is None and ctx.parent is not None:
        db = ctx.parent.params.get("db")
    return db


def open_store(ctx: click.Context, db: str | None, *, create: bool = True) -> Store:
    """The store named by --db, else the group's --db, else the default path."""
    return Store(db_arg(ctx, db), create=create)


def resume_command(session_id: str, db: str | None) -> str:
    """The command that goes on with a session (its failed turns asked again)."""
    command = f"kontest run --resume {session_id}"
    return f"{command} --db {shlex.quote(str(db))}" if db else command


def write_output(text: str, out: str | None) -> None:
    """Print `text`, or write it to `out` whole (a full disk leaves no half file); control
    and format characters escaped either way."""
    if out is None:
        echo_out(text, nl=False)
        return
    try:
        write_text_atomic(out, text, newline="")
    except OSError as error:
        raise InvalidInputError(f"cannot write {out}: {error.strerror or error}") from None
