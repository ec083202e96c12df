"""Subcommands imported when they are used, so every command starts with only what it needs.

The `kontest` group knows each subcommand by its name, the line `kontest --help` shows for
it and where it lives (click's "lazily loading subcommands" pattern): `kontest --help`
imports no subcommand module, and `kontest sessions` imports the sessions module alone, not
the report renderers, the HTTP clients or the explorer. A subcommand's module is imported
when the command runs, when its own `--help` is asked or when a shell completes it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import click


@dataclass(frozen=True, slots=True)
class LazyCommand:
    """Where a subcommand lives and its line in the group's help.

    `sources` are `module:attribute` names, loaded in order: a `click.Command` attribute is
    added to the group, any other is called with the group (a `register(group)` function,
    which may add several commands or extend one). A source is loaded once per group."""

    short_help: str
    sources: tuple[str, ...]


class LazyGroup(click.Group):
    """A click group whose subcommands (`lazy_commands`) are imported on first use.

    `on_load` is called once with each command the group gains this way (the `kontest` group
    bounds its number options), before it parses anything."""

    def __init__(
        self,
        *args: Any,
        lazy_commands: Mapping[str, LazyCommand] | None = None,
        on_load: Callable[[click.Command], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})
        self.on_load = on_load
        self._loaded_sources: set[str] = set()
        self._prepared: set[int] = set()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = self.lazy_commands.get(cmd_name)
        if lazy is not None and cmd_name not in self.commands:
            for source in lazy.sources:
                self._load(source)
            if cmd_name not in self.commands:
                raise RuntimeError(f"{', '.join(lazy.sources)} gave no command {cmd_name!r}")
        command = self.commands.get(cmd_name)
        if command is not None and id(command) not in self._prepared:
            self._prepare(cmd_name, command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their lines, from the table: nothing is imported to show them."""
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            lazy = self.lazy_commands.get(name)
            if lazy is not None:
                rows.append((name, inspect.cleandoc(lazy.short_help)))
                continue
            command = self.commands[name]
            if not command.hidden:
                limit = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
                rows.append((name, command.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def _load(self, source: str) -> None:
        if source in self._loaded_sources:
            return
        module_name, _, attribute = source.partition(":")
        found = getattr(importlib.import_module(module_name), attribute)
        if isinstance(found, click.Command):
            self.add_command(found)
        else:
            found(self)
        self._loaded_sources.add(source)

    def _prepare(self, name: str, command: click.Command) -> None:
        lazy = self.lazy_commands.get(name)
        if lazy is not None:
            command.short_help = lazy.short_help
        if self.on_load is not None:
            self.on_load(command)
        self._prepared.add(id(command))
