"""cli.option_groups: click's keywords gathered into the typed records a command takes."""

from __future__ import annotations

from dataclasses import dataclass

import click
from click.testing import CliRunner

from kontest_tui.cli.option_groups import build_group, grouped


@dataclass(frozen=True)
class Inner:
    depth: int
    name: str | None


@dataclass(frozen=True)
class Outer:
    inner: Inner
    seed: int


def test_build_group_takes_the_fields_it_names_and_leaves_the_rest() -> None:
    values: dict[str, object] = {"depth": 3, "name": None, "seed": 7, "quiet": True}
    built = build_group(Outer, values)
    assert built == Outer(Inner(3, None), 7)
    assert values == {"quiet": True}  # what no field names stays for the command


def test_grouped_command_receives_its_record() -> None:
    seen: list[tuple[bool, Outer]] = []

    @click.command()
    @click.option("--depth", type=int, default=1)
    @click.option("--name", default=None)
    @click.option("--seed", type=int, default=0)
    @click.option("--quiet", is_flag=True)
    @grouped(request=Outer)
    def command(quiet: bool, request: Outer) -> None:
        seen.append((quiet, request))

    result = CliRunner().invoke(command, ["--depth", "2", "--seed", "5", "--quiet"])
    assert result.exit_code == 0, result.output
    assert seen == [(True, Outer(Inner(2, None), 5))]
