"""The test kinds' options on the command line: one flag per option a kind declares
(kinds.base.KindOption, gathered by kinds.registry.kind_options), made here for `kontest run`
and `kontest generate` alike, and the kinds step of `kontest generate` (the kinds named by
`--kind`, built from the registry after the KONTEST conversations)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from kontest_tui.domain.records import Conversation
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import Suite
from kontest_tui.kinds.base import KindOption
from kontest_tui.kinds.registry import (
    KindOptions,
    all_kinds,
    build_kind_conversations,
    kind_options,
    parse_kinds,
)

if TYPE_CHECKING:
    from .generate import GenerateRequest

F = TypeVar("F", bound=Callable[..., object])
_META = "kontest.kind_options"  # the click context's meta key of the option values given
_SHORTCUTS = "kontest.kind_shortcuts"  # ... and of the kinds asked by their shortcut flags


def _keep(ctx: click.Context, param: click.Parameter, value: object) -> object:
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


def kind_names_help() -> str:
    """`kontest, variant, factcheck, logic`: the kinds `--kind` takes."""
    return ", ".join(info.name for info in all_kinds().values() if info.build is not None)


def _settings(option: KindOption, expose: bool) -> dict[str, Any]:
    settings: dict[str, Any] = {"help": option.help, "metavar": option.metavar}
    if not expose:
        settings.update(expose_value=False, callback=_keep)
    if option.type == "flag":
        settings["is_flag"] = True
    elif option.type == "int":
        settings["type"] = click.IntRange(option.minimum, option.maximum)
        settings["default"] = option.default
        settings["show_default"] = option.default is not None
    elif option.type == "path":
        settings["type"] = click.Path(dir_okay=False, exists=True)
    elif option.type == "choice":
        settings["type"] = click.Choice(option.choices)
        settings["default"] = option.default
        settings["show_default"] = True
    return settings


def kind_flags() -> list[click.Option]:
    """A click option per kind option, in registry order, passed to the command by its key
    (`kontest generate` keeps them in its request's extras), after each kind's shortcut
    (`--variants`: KONTEST's conversations and the variants)."""
    shortcuts = [
        click.Option(
            [info.shortcut, info.shortcut_name],
            is_flag=True,
            help=f"Add {info.title.lower()} (= --kind kontest,{info.name}).",
        )
        for info in all_kinds().values()
        if info.shortcut
    ]
    return shortcuts + [click.Option([o.flag, o.key], **_settings(o, True)) for o in kind_options()]


def with_kind_shortcuts(function: F) -> F:
    """Add each kind's shortcut flag (`--variants`) to a command; the kinds given are kept in
    the click context for `shortcut_kinds`."""
    for info in reversed(all_kinds().values()):
        if info.shortcut:
            function = click.option(
                info.shortcut,
                info.shortcut_name,
                is_flag=True,
                expose_value=False,
                callback=_keep_shortcut,
                help=f"Also ask {info.title.lower()} (= --kind {info.name}).",
            )(function)
    return function


def _keep_shortcut(ctx: click.Context, param: click.Parameter, value: object) -> object:
    if value:
        kind = next(i.name for i in all_kinds().values() if i.shortcut_name == param.name)
        ctx.meta.setdefault(_SHORTCUTS, []).append(kind)
    return value


def shortcut_kinds() -> list[str]:
    """The kinds asked by their shortcut flags (the current click context's)."""
    context = click.get_current_context(silent=True)
    return list(context.meta.get(_SHORTCUTS, [])) if context is not None else []


def with_kind_options(function: F) -> F:
    """Add every kind option's flag to a command (in registry order); their values are kept
    in the click context for `chosen_options`, not passed to the command."""
    for option in reversed(kind_options()):
        function = click.option(option.flag, option.key, **_settings(option, False))(function)
    return function


def _value(option: KindOption, given: object) -> object:
    try:
        value = option.parse(option.default if given is None else given)
    except ValueError as error:
        raise InvalidInputError(str(error)) from error
    if option.type == "path" and value is not None:
        return str(Path(str(value)).resolve())
    return value


def chosen_options(seed: int, given: Mapping[str, object] | None = None) -> KindOptions:
    """The kinds' options `given` (None: the current click context's, `with_kind_options`),
    each kind's default where none is; one line for a value that does not parse."""
    if given is None:
        context = click.get_current_context(silent=True)
        given = dict(context.meta.get(_META, {})) if context is not None else {}
    fields: dict[str, Any] = {"seed": seed}
    extra: list[tuple[str, object]] = []
    for option in kind_options():
        value = _value(option, given.get(option.key))
        if option.key in KindOptions.__dataclass_fields__:
            if value is not None:
                fields[option.key] = value
        elif value is not None:
            extra.append((option.key, value))
    return KindOptions(**fields, extra=tuple(sorted(extra)))


def with_kinds(
    request: GenerateRequest, suite: Suite, conversations: list[Conversation]
) -> list[Conversation]:
    """`kontest generate`'s kinds step: KONTEST's conversations unless `--kind` leaves them
    out, then every other kind named, built from the registry (none named: KONTEST's)."""
    extras = request.extras
    known = all_kinds()
    named = [str(kind) for kind in cast("Iterable[object]", extras.get("kinds") or ())]
    shortcuts = [i.name for i in known.values() if i.shortcut and extras.get(i.shortcut_name)]
    if not named and not shortcuts:
        return conversations
    kinds = parse_kinds([*(named or ["kontest"]), *shortcuts])
    others = [kind for kind in kinds if not known[kind].is_core]
    kept = conversations if any(known[kind].is_core for kind in kinds) else []
    options = chosen_options(int(cast("int", extras.get("kind_seed") or 0)), extras)
    return kept + build_kind_conversations(suite, request.kg, others, options)
