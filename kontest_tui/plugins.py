"""Third-party extensions: what installed packages offer under an entry-point group.

A package adds a model provider or a test kind by declaring an entry point in its
pyproject.toml, for example

    [project.entry-points."kontest.models"]
    echo = "my_package.models:PROVIDER"

    [project.entry-points."kontest.kinds"]
    echo = "my_package.kinds:KIND"

`load_plugins(group, accepts)` imports every entry point of the group and keeps the objects
`accepts` takes (harlequin's `harlequin.adapter` group, loaded by its plugins.py, is the
pattern). A plugin that cannot be loaded (its import raises, its object is not what the group
takes) never stops kontest: it is left out and said in one line naming it and its package
(`PluginGroup.problems`), never a traceback. The registries call this once, when they first
need more than what is built in, so a command that names no plugin imports none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

MODELS_GROUP = "kontest.models"
KINDS_GROUP = "kontest.kinds"


@dataclass(frozen=True, slots=True)
class Plugin:
    """One loaded entry point: its name, where it comes from and the object it names."""

    name: str
    source: str  # `package 1.0 (module:attribute)`: for messages
    value: object


@dataclass(frozen=True, slots=True)
class PluginGroup:
    """What a group offers: the plugins loaded, in entry-point order, and one line for each
    that could not be."""

    plugins: tuple[Plugin, ...] = ()
    problems: tuple[str, ...] = ()


def one_line(error: BaseException) -> str:
    """An exception as one line: its type and its message, whitespace collapsed."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def plugin_source(entry: EntryPoint) -> str:
    """`package 1.0 (module:attribute)`, or the entry point's value when no package owns it."""
    dist = entry.dist
    if dist is None:
        return entry.value
    return f"{dist.name} {dist.version} ({entry.value})"


def load_plugins(group: str, accepts: Callable[[object], str | None]) -> PluginGroup:
    """Import the entry points of `group`. `accepts(value)` says why an object does not fit
    the group (None: it fits); such an object, or one whose import raises, is a problem."""
    import importlib.metadata  # here, not at start-up: only a spec that names a plugin needs it

    plugins: list[Plugin] = []
    problems: list[str] = []
    for entry in importlib.metadata.entry_points(group=group):
        source = plugin_source(entry)
        try:
            value = entry.load()
        except Exception as error:  # a third party's import: anything may go wrong
            problems.append(f"plugin {entry.name!r} ({source}) did not load: {one_line(error)}")
            continue
        wrong = accepts(value)
        if wrong is not None:
            problems.append(f"plugin {entry.name!r} ({source}) is left out: {wrong}")
            continue
        plugins.append(Plugin(entry.name, source, value))
    return PluginGroup(tuple(plugins), tuple(problems))
