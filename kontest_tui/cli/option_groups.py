"""Click options gathered into typed records: one frozen dataclass per group of options.

Click passes a command one keyword per option; `grouped(request=RunRequest)` turns the
keywords named by a dataclass's fields (and, recursively, by the fields of the dataclasses
it holds) into one instance of it, so a command takes a few typed records instead of one
parameter per option. The options themselves are declared as usual, in the order `--help`
lists them; a field's name is its option's parameter name.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, get_type_hints

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T", bound="DataclassInstance")


def build_group(cls: type[T], values: dict[str, Any]) -> T:
    """An instance of the dataclass `cls` from the option values it names (taken out of
    `values`); a field whose type is a dataclass is built the same way."""
    hints = get_type_hints(cls)
    fields: dict[str, object] = {}
    for field in dataclasses.fields(cls):
        kind = hints[field.name]
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            fields[field.name] = build_group(kind, values)
        else:
            fields[field.name] = values.pop(field.name)
    return cls(**fields)


def grouped(**groups: type[DataclassInstance]) -> Callable[[Callable[P, R]], Callable[..., R]]:
    """Decorate a click callback (below its options and `pass_context`): each keyword of
    `groups` receives its dataclass built from the options named by its fields."""

    def decorate(function: Callable[P, R]) -> Callable[..., R]:
        @functools.wraps(function)
        def wrapper(*args: Any, **values: Any) -> R:
            for name, cls in groups.items():
                values[name] = build_group(cls, values)
            return function(*args, **values)

        return wrapper

    return decorate
