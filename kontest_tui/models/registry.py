"""The table of model providers: the built-in ones, then those installed packages add.

`BUILT_IN` lists one provider per module of `models/providers/` (a new built-in provider is
its module plus one line here). Packages add providers through the `kontest.models`
entry-point group (plugins.py): they are loaded the first time a spec names a prefix that is
not built in, or the pickers list every provider, never for a built-in spec. A plugin that
does not load, or claims a prefix already taken, is left out and said in one line
(`plugin_problems`, appended to the "unknown model kind" error); a plugin's provider whose
functions raise anything but kontest's errors raises one `ModelSpecError` naming it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from kontest_tui.errors import KontestError, ModelError, ModelSpecError
from kontest_tui.models.provider import (
    MODES,
    ModelProvider,
    ModelSpec,
    OpenContext,
    ProviderHints,
)
from kontest_tui.models.providers import (
    local,
    ollama,
    openai,
    openai_completions,
    replay,
    sim,
)
from kontest_tui.plugins import MODELS_GROUP, Plugin, load_plugins, one_line

if TYPE_CHECKING:
    from kontest_tui.domain.records import Conversation
    from kontest_tui.models.base import ChatModel, ChatRequest, ChatResult, TokenCallback

BUILT_IN: tuple[ModelProvider, ...] = (
    sim.PROVIDER,
    ollama.PROVIDER,
    openai.PROVIDER,
    openai_completions.PROVIDER,
    replay.PROVIDER,
    local.PROVIDER,
)
_BY_PREFIX = {provider.prefix: provider for provider in BUILT_IN}
# A prefix: lower-case letters, digits and '-' (it ends at the spec's first ':')
_PREFIX = re.compile(r"[a-z0-9][a-z0-9-]*")

P = ParamSpec("P")
R = TypeVar("R")


def find_provider(prefix: str) -> ModelProvider | None:
    """The provider of a spec prefix (built in first, then the plugins'), None if none."""
    found = _BY_PREFIX.get(prefix)
    if found is not None:
        return found
    return next((p for p in _plugin_providers()[0] if p.prefix == prefix), None)


def provider_of(prefix: str) -> ModelProvider:
    """The provider of a spec prefix; ModelSpecError when there is none."""
    found = find_provider(prefix)
    if found is None:
        raise ModelSpecError(f"unknown model kind {prefix!r}{known_kinds_hint()}")
    return found


def all_providers() -> tuple[ModelProvider, ...]:
    """Every provider: the built-in ones in table order, then the plugins'."""
    return BUILT_IN + _plugin_providers()[0]


def plugin_problems() -> tuple[str, ...]:
    """One line per `kontest.models` plugin left out (it did not load, or its prefix is
    taken)."""
    return _plugin_providers()[1]


def known_kinds_hint() -> str:
    """` (use one of: sim, ollama, ...)`, with the plugins left out said after it."""
    kinds = ", ".join(provider.prefix for provider in all_providers())
    return f" (use one of: {kinds})" + "".join(f"; {line}" for line in plugin_problems())


def reload_plugins() -> None:
    """Forget the plugins loaded, so the next lookup loads them again (installed or
    removed since)."""
    _plugin_providers.cache_clear()


def _not_a_provider(value: object) -> str | None:
    if not isinstance(value, ModelProvider):
        return f"{type(value).__name__} is not a kontest_tui.models.provider.ModelProvider"
    if not _PREFIX.fullmatch(value.prefix):
        return f"model kind {value.prefix!r} is not a prefix (lower-case letters, digits, '-')"
    if not isinstance(value.hints, ProviderHints):
        return "its hints are not a kontest_tui.models.provider.ProviderHints"
    if value.mode not in MODES:
        return f"mode {value.mode!r} is not one of {', '.join(MODES)}"
    return None


@functools.cache
def _plugin_providers() -> tuple[tuple[ModelProvider, ...], tuple[str, ...]]:
    group = load_plugins(MODELS_GROUP, _not_a_provider)
    providers: list[ModelProvider] = []
    problems = list(group.problems)
    taken = set(_BY_PREFIX)
    for plugin in group.plugins:
        assert isinstance(plugin.value, ModelProvider)  # accepted by _not_a_provider
        prefix = plugin.value.prefix
        if prefix in taken:
            problems.append(
                f"plugin {plugin.name!r} ({plugin.source}) is left out: "
                f"model kind {prefix!r} is taken"
            )
            continue
        taken.add(prefix)
        providers.append(guarded(plugin.value, plugin))
    return tuple(providers), tuple(problems)


def _failure(plugin: Plugin, error: Exception) -> ModelSpecError:
    return ModelSpecError(f"model plugin {plugin.name!r} ({plugin.source}): {one_line(error)}")


def guarded(provider: ModelProvider, plugin: Plugin) -> ModelProvider:
    """`provider` whose functions raise kontest's errors only: anything else a plugin raises
    becomes one ModelSpecError naming the plugin (its opened model's check a ModelError)."""

    def guard(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return function(*args, **kwargs)
            except KontestError:
                raise
            except Exception as error:
                raise _failure(plugin, error) from None

        return call

    def guard_list(
        function: Callable[[ModelSpec], Awaitable[list[str]]],
    ) -> Callable[[ModelSpec], Awaitable[list[str]]]:
        async def call(spec: ModelSpec) -> list[str]:
            try:
                return await function(spec)
            except KontestError:
                raise
            except Exception as error:
                raise _failure(plugin, error) from None

        return call

    def open_model(spec: ModelSpec, context: OpenContext) -> ChatModel:
        return PluginModel(guard(provider.open)(spec, context), plugin)

    hints = provider.hints
    return replace(
        provider,
        parse=guard(provider.parse),
        text=guard(provider.text),
        open=open_model,
        check=guard(provider.check) if provider.check else None,
        list_models=guard_list(provider.list_models) if provider.list_models else None,
        withheld_key=guard(provider.withheld_key) if provider.withheld_key else None,
        hints=replace(hints, presets=guard(hints.presets) if hints.presets else None),
    )


class PluginModel:
    """A plugin's ChatModel whose connection check fails in one line naming the plugin
    (the executor already turns any failure of a call into one failed turn)."""

    def __init__(self, model: ChatModel, plugin: Plugin) -> None:
        self.model = model
        self.plugin = plugin
        self.spec = model.spec

    def __getattr__(self, name: str) -> object:  # never_waits, cacheable, ...
        return getattr(self.model, name)

    def __repr__(self) -> str:
        return f"PluginModel({self.model!r})"

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        return await self.model.chat(request, on_token)

    async def check(self) -> str:
        try:
            return await self.model.check()
        except KontestError:
            raise
        except Exception as error:
            name, source = self.plugin.name, self.plugin.source
            raise ModelError(f"model plugin {name!r} ({source}): {one_line(error)}") from None

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        self.model.prepare(conversations)

    async def aclose(self) -> None:
        await self.model.aclose()
