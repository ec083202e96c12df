"""Bounded number types for every CLI option: integers fit in 64 bits, floats are finite.

`bound_numbers(cli)` walks every command once at start-up and gives each integer option an
upper (and lower) bound of a signed 64-bit integer, what the session database can hold, and
each float option a check that refuses `nan` and `inf`. Options added later by any module get
the same bounds without repeating them; ranges a command sets itself are kept.
"""

from __future__ import annotations

import math
from typing import Any

import click

from kontest_tui.validate_input import INT64_MAX, INT64_MIN


class FiniteFloatRange(click.FloatRange):
    """A `click.FloatRange` that also refuses NaN and the infinities."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        # Finiteness first: a range would call -inf merely "out of range".
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)


class Int64Range(click.IntRange):
    """A `click.IntRange` held within 64 bits; help shows only the bounds the option set."""

    def __init__(self, shown: click.IntRange | None = None) -> None:
        low = INT64_MIN if shown is None or shown.min is None else max(shown.min, INT64_MIN)
        high = INT64_MAX if shown is None or shown.max is None else min(shown.max, INT64_MAX)
        super().__init__(
            low,
            high,
            min_open=bool(shown and shown.min_open),
            max_open=bool(shown and shown.max_open),
            clamp=bool(shown and shown.clamp),
        )
        self.shown = shown
        if shown is None:
            self.name = "integer"

    def _describe_range(self) -> str:
        return self.shown._describe_range() if self.shown is not None else ""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            if self.shown is not None and not self.clamp:
                self.shown.convert(value, param, ctx)  # the option's own message first
            self.fail(f"{value!r} is out of range (at most {INT64_MAX}).", param, ctx)


def bounded_type(kind: click.ParamType[Any, Any]) -> click.ParamType[Any, Any]:
    """The bounded form of an integer or float parameter type (others unchanged)."""
    if isinstance(kind, Int64Range):
        return kind
    if isinstance(kind, click.IntRange):
        inside = (kind.min is None or kind.min >= INT64_MIN) and (
            kind.max is None or kind.max <= INT64_MAX
        )
        if inside and kind.min is not None and kind.max is not None:
            return kind
        return Int64Range(kind)
    if type(kind) is click.types.IntParamType:
        return Int64Range()
    if isinstance(kind, FiniteFloatRange):
        return kind
    if isinstance(kind, click.FloatRange):
        return FiniteFloatRange(
            kind.min, kind.max, min_open=kind.min_open, max_open=kind.max_open, clamp=kind.clamp
        )
    if type(kind) is click.types.FloatParamType:
        return FiniteFloatRange()
    return kind


def bound_numbers(command: click.Command) -> None:
    """Give every number parameter of `command` and its subcommands its bounded type."""
    for param in command.params:
        param.type = bounded_type(param.type)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            bound_numbers(sub)
