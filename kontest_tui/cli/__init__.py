"""The `kontest` command: a thin layer that parses arguments and calls the engine.

`kontest` alone opens the explorer; each subcommand (or group of them) lives in its own
module, named in COMMANDS and imported only when it is used (cli.lazy), so a command starts
with what it needs and `kontest --help` with none of it. Every expected failure prints one line on stderr (exit 2 for bad
input, 1 for other failures), never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import sys

import click

from kontest_tui.errors import InvalidInputError, KontestError
from kontest_tui.validate_input import check_argv

from .lazy import LazyCommand, LazyGroup
from .params import bound_numbers

_CLI = "kontest_tui.cli"

# Each subcommand: its line in `kontest --help` and where it lives (cli.lazy.LazyCommand).
COMMANDS: dict[str, LazyCommand] = {
    "ca": LazyCommand(
        "Print a t-way covering array for an input-parameter model.",
        (f"{_CLI}.ca:register",),
    ),
    "compare": LazyCommand(
        "Put sessions side by side, as the papers' tables do.",
        (f"{_CLI}.compare:compare_command",),
    ),
    "confirm": LazyCommand(
        "Ask a session's errors again in other phrasings and draws.",
        (f"{_CLI}.confirm:register",),
    ),
    "ensemble": LazyCommand(
        "Weighted ensemble vs majority vote over several sessions.",
        (f"{_CLI}.ensemble:ensemble_command",),
    ),
    "explain": LazyCommand(
        "Explain an error of a session in plain sentences.",
        (f"{_CLI}.explain:explain_command",),
    ),
    "export": LazyCommand(
        "Export every response of a session as JSONL or CSV.",
        (f"{_CLI}.export:export_command",),
    ),
    "generate": LazyCommand(
        "Print the conversations generated from a knowledge graph.",
        (f"{_CLI}.generate:register",),
    ),
    "kg": LazyCommand(
        "Knowledge graphs: import, inspect (and build from Wikidata).",
        (f"{_CLI}.kg:register", f"{_CLI}.kg_wikidata:register"),
    ),
    "probe": LazyCommand(
        "Ask the model about one relation now, every phrasing side by side.",
        (f"{_CLI}.probe:probe_command",),
    ),
    "report": LazyCommand(
        "Print a session's report (text, JSON, markdown, CSV, html).",
        (f"{_CLI}.report:report_command",),
    ),
    "rerun": LazyCommand(
        "Ask a session again, its templates and synonyms as they are now.",
        (f"{_CLI}.rerun:rerun_command",),
    ),
    "run": LazyCommand(
        "Ask a model every conversation of a KG (or resume a session).",
        (f"{_CLI}.run:run_command",),
    ),
    "sessions": LazyCommand(
        "List the stored sessions, oldest first.",
        (f"{_CLI}.sessions:sessions_command",),
    ),
    "sim": LazyCommand(
        "The built-in simulated model (no model installed needed).",
        (f"{_CLI}.sim:register",),
    ),
}


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    on_load=bound_numbers,  # every integer option fits in 64 bits, every float is finite
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--kg", "kg_name", default=None, help="KG file or sample name (places, music, subdivisions)."
)
@click.option(
    "--model", "model_spec", default=None, help="Model spec, e.g. sim, sim:careful, ollama:llama3."
)
@click.option("--db", type=click.Path(dir_okay=False), default=None, help="Session database file.")
@click.option("--web", is_flag=True, help="Serve the explorer to a browser (textual-serve).")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="With --web: address to listen on (another than loopback is warned about).",
)
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="With --web: port to listen on.",
)
@click.version_option(package_name="kontest-tui")
@click.pass_context
def cli(
    ctx: click.Context,
    kg_name: str | None,
    model_spec: str | None,
    db: str | None,
    web: bool,
    host: str,
    port: int,
) -> None:
    """Test whether a language model is consistent about the facts of a knowledge graph."""
    if model_spec is not None and not model_spec.strip():
        raise InvalidInputError("empty model spec (try sim, ollama:MODEL or openai:MODEL)")
    if ctx.invoked_subcommand is None:
        from kontest_tui.tui.app import run_app, serve_app

        if web:  # each browser tab runs its own explorer
            serve_app(kg=kg_name, model=model_spec, db=db, host=host, port=port)
            return
        code = run_app(kg=kg_name, model=model_spec, db=db)
        if code:
            ctx.exit(code)


bound_numbers(cli)  # the group's own options


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. Output that cannot be written at the end (stdout on a full
    disk) is one line too, not Python's "Exception ignored" at exit."""
    code = run_cli(argv)
    try:
        sys.stdout.flush()
    except OSError as error:
        code = code or 1
        _output_failed(error)
    sys.exit(code)


def _output_failed(error: OSError) -> None:
    """Say once that the output could not be written, and send what is left of it nowhere
    (the interpreter's own flush at exit would fail again, with a traceback-like message)."""
    with contextlib.suppress(OSError, ValueError):
        click.echo(f"kontest: error: cannot write the output: {error.strerror or error}", err=True)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def run_cli(argv: list[str] | None = None) -> int:
    """Run the CLI and turn every expected failure into one stderr line; return the exit code."""
    try:
        check_argv(sys.argv[1:] if argv is None else argv)
        result = cli.main(args=argv, prog_name="kontest", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("kontest: interrupted", err=True)
        return 130
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.UsageError as error:
        click.echo(f"kontest: error: {error.format_message()}", err=True)
        return 2
    except click.ClickException as error:
        click.echo(f"kontest: error: {error.format_message()}", err=True)
        return error.exit_code
    except InvalidInputError as error:
        # One line, or one per item where the error lists several (stored_compare's settings).
        for line in getattr(error, "lines", None) or [str(error)]:
            click.echo(f"kontest: error: {line}", err=True)
        return 2
    except KontestError as error:
        click.echo(f"kontest: error: {error}", err=True)
        return 1
    except sqlite3.Error as error:  # the store maps its own; this catches any it missed
        click.echo(f"kontest: error: session database: {error}", err=True)
        return 1
    except KeyboardInterrupt:
        click.echo("kontest: interrupted", err=True)
        return 130
    except OSError as error:  # the output (stdout on a full disk), a directory, a device
        if error.errno in _OUTPUT_ERRORS and error.filename is None:
            _output_failed(error)
        else:
            click.echo(f"kontest: error: {_os_error_text(error)}", err=True)
        return 1
    return result if isinstance(result, int) else 0


_OUTPUT_ERRORS = (errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EDQUOT, errno.EFBIG)


def _os_error_text(error: OSError) -> str:
    """One line for an OSError: its own text when it has no errno (kontest's own, such as
    paths'), else the reason and the file."""
    if error.errno is None:
        return str(error)
    where = f": {error.filename}" if error.filename else ""
    return f"{error.strerror or error}{where}"


if __name__ == "__main__":
    main()
