"""What a model provider is: the `ModelProvider` record every kind of `--model` spec fills in.

A provider owns one spec prefix (`sim`, `ollama`, `openai`, ...) and says everything the
rest of kontest needs to know about it: how the text after the prefix parses (`parse`) and
prints back without a secret (`text`), how its model opens (`open`, importing its client only
then, as inspect_ai's `@modelapi` factories do, so a spec parses without httpx or a local
model loaded), what can be told before asking it (`check`), what models it offers (`list_models`),
and what the explorer's model pickers show of it (`hints`). The built-in ones are the
modules of `models/providers/`, one each, gathered in the table of `models/registry.py`;
another package adds one through the `kontest.models` entry-point group (plugins.py).
This module imports nothing heavy: a plugin imports its names from here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kontest_tui.kg.graph import KnowledgeGraph
    from kontest_tui.models.base import ChatModel, ChatOptions

# How a provider's model is asked (the explanation cards show what the model saw):
CHAT = "chat"  # a chat: the system prompt and the conversation as messages
COMPLETIONS = "completions"  # one text: the few-shot prompt ending in the question
RECORDING = "recording"  # nothing: the answers come from a recording
MODES = (CHAT, COMPLETIONS, RECORDING)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed model spec. `spec` is its canonical text (no secret in it, ever), printed by
    the provider of `kind`."""

    kind: str  # the provider's prefix
    name: str
    url: str | None = None
    path: Path | None = None

    @property
    def spec(self) -> str:
        from kontest_tui.models.registry import provider_of

        return provider_of(self.kind).text(self)

    @property
    def display(self) -> str:
        return self.spec

    @property
    def mode(self) -> str:
        """How this model is asked: `CHAT`, `COMPLETIONS` or `RECORDING`."""
        from kontest_tui.models.registry import provider_of

        return provider_of(self.kind).mode

    def __str__(self) -> str:
        return self.spec


@dataclass(frozen=True, slots=True)
class OpenContext:
    """What opening a model may use besides its spec. `seed` seeds the simulated model (a
    request's options.seed wins); `stream=False` asks HTTP servers for whole answers;
    `stored`: the spec was read from a session database, so a secret goes only to the host
    it is configured for; `kg` lets the simulated model recognise relations in non-template
    wording; `options` are the session's chat options, for clients that want defaults."""

    kg: KnowledgeGraph | None = None
    options: ChatOptions | None = None
    seed: int = 0
    stream: bool = True
    stored: bool = False


@dataclass(frozen=True, slots=True)
class WithheldKey:
    """An API key is not sent to a stored model URL: that URL's hosts and the key's host."""

    spec: str
    hosts: tuple[str, ...]
    key_host: str  # the host the key is for
    key_name: str  # the environment variable holding the key
    url_setting: str  # the environment variable saying which host the key is for


@dataclass(frozen=True, slots=True)
class ProviderHints:
    """What the explorer's model pickers show of a provider."""

    title: str  # its name in messages: "3 Ollama models found"
    description: str  # a few words beside one of its specs in a list: "simulated"
    pattern: str  # the shape of its specs: "ollama:MODEL[@URL]"
    featured: bool = False  # named in the model field's placeholder
    presets: Callable[[], list[str]] | None = None  # specs offered without asking anyone
    lists_server: bool = False  # "Find models" lists the server its spec names
    default_server: bool = False  # ... and this one's default server when none is named


Parse = Callable[[str, str], ModelSpec]  # (the text after `prefix:`, the whole spec)
ListModels = Callable[[ModelSpec], Awaitable[list[str]]]
Withhold = Callable[[ModelSpec], WithheldKey | None]


@dataclass(frozen=True, slots=True)
class ModelProvider:
    """One kind of model spec. Every function raises `errors.ModelSpecError` (one line) on
    bad input; none may do I/O but `open`'s client, `check` (local files) and `list_models`."""

    prefix: str  # what a spec starts with, before the first ':'
    parse: Parse  # ModelSpec(kind=prefix, ...); the canonical text parses back the same
    text: Callable[[ModelSpec], str]  # the canonical spec text: never a secret
    open: Callable[[ModelSpec, OpenContext], ChatModel]  # imports its client when called
    hints: ProviderHints
    # What can be told without asking the model (a profile or a file that must exist)
    check: Callable[[ModelSpec], None] | None = None
    # The models it offers (a server's, a list of profiles); None: it cannot list any
    list_models: ListModels | None = None
    mode: str = CHAT
    batch: bool = False  # a batch engine runs its requests (`kontest run --batch-out`)
    # The chat provider whose servers this one asks in completions mode (a base model asked
    # in chat mode there is told to use this prefix instead)
    completions_of: str | None = None
    # Whether a secret it sends is withheld from a spec read from a session database
    withheld_key: Withhold | None = None
