"""The `kontest` command starts with what it uses: `kontest --help` imports no subcommand and no
heavy library, the session commands none they do not need (a fresh interpreter's `sys.modules`
after the command); every subcommand still loads, with its help, options and bounds."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from kontest_tui.cli import COMMANDS, cli, run_cli

# Run a command in a fresh interpreter, then print the modules it imported on the last line.
_IMPORTED = (
    "import json, sys\n"
    "from kontest_tui.cli import run_cli\n"
    "code = run_cli(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "print('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
    "sys.exit(code)\n"
)
# What no quick command should pay for: the HTTP client, the explorer, the model clients, the
# ensemble (it evaluates with every oracle), the executor, the session API facade.
NEVER = (
    "httpx",
    "textual",
    "kontest_tui.tui",
    "kontest_tui.models.ollama",
    "kontest_tui.models.openai",
    "kontest_tui.mitigate.ensemble",
    "kontest_tui.run.api",
    "kontest_tui.run.executor",
)


def imported(*args: str) -> tuple[int, str, set[str]]:
    """Exit code, output and imported modules of `kontest ARGS` in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, *args], capture_output=True, text=True, timeout=60
    )
    output, _, modules = done.stdout.rpartition("\nMODULES ")
    assert modules, done.stderr
    return done.returncode, output, set(json.loads(modules))


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules among `modules` that are one of `names` or inside one of them."""
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_help_imports_no_subcommand_and_no_heavy_library() -> None:
    code, output, modules = imported("--help")
    assert code == 0 and "Usage: kontest" in output
    for name, lazy in COMMANDS.items():
        assert f"  {name}" in output and lazy.short_help in output
    assert loaded(modules, (*NEVER, "rich", "sqlite_utils", "networkx", "rapidfuzz")) == []
    commands = {m for m in modules if m.startswith("kontest_tui.cli.")}
    assert commands <= {"kontest_tui.cli.lazy", "kontest_tui.cli.params"}
    assert loaded(modules, ("kontest_tui.store", "kontest_tui.report", "kontest_tui.oracles")) == []


@pytest.fixture(scope="module")
def session_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("startup") / "s.db")
    args = ["--db", db, "run", "--kg", "places", "--model", "sim", "--limit", "3", "-q"]
    assert run_cli(args) == 0
    return db


@pytest.mark.parametrize(
    ("args", "also_not"),
    [
        (("sessions",), ("rich", "kontest_tui.report", "kontest_tui.results")),
        (("report",), ("rich", "kontest_tui.report.session_page")),
        (("report", "--format", "json"), ("rich", "kontest_tui.report.explain_render")),
        (("explain",), ("rich", "kontest_tui.report.session_page")),
    ],
)
def test_session_commands_import_only_what_they_use(
    session_db: str, args: tuple[str, ...], also_not: tuple[str, ...]
) -> None:
    code, output, modules = imported(*args, "--db", session_db)
    assert code == 0 and output.strip()
    assert loaded(modules, (*NEVER, *also_not)) == []


def test_every_command_loads_and_its_help_works(capsys: pytest.CaptureFixture[str]) -> None:
    context = click.Context(cli)
    assert cli.list_commands(context) == sorted(COMMANDS)
    for name, lazy in COMMANDS.items():
        command = cli.get_command(context, name)
        assert command is not None and command.name == name
        assert command.get_short_help_str() == lazy.short_help
        groups = [[name]]
        if isinstance(command, click.Group):
            groups += [[name, sub] for sub in command.list_commands(context)]
        for path in groups:
            assert run_cli([*path, "--help"]) == 0, path
            assert f"Usage: kontest {' '.join(path)}" in capsys.readouterr().out


def test_generate_has_the_options_other_modules_add(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["generate", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "--variant-limit" in shown and "--postfix" in shown  # cli/ca.py's
    assert "--kind" in shown and "--rules" in shown  # cli/kinds.py's


def test_number_options_of_a_lazy_command_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["ca", "--ipm", "x.json", "--seed", str(2**63)]) == 2
    assert "at most 9223372036854775807" in capsys.readouterr().err


def test_an_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no-such-command" in err


def test_each_source_is_loaded_once() -> None:
    from kontest_tui.cli import generate

    context = click.Context(cli)
    for name in ("ca", "generate", "ca", "generate", "kg"):
        cli.get_command(context, name)
    options = [param.name for param in generate.generate_command.params]
    assert len(options) == len(set(options))
    assert {"kinds", "variants", "strength", "rules"} <= set(options)  # the kinds' flags
