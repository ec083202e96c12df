"""Ollama (`ollama:MODEL[@URL]`, default http://127.0.0.1:11434; several endpoints:
`@URL1,URL2`): the client is models/ollama.py, imported when a model opens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kontest_tui.models.provider import ModelProvider, ModelSpec, OpenContext, ProviderHints
from kontest_tui.models.providers.servers import (
    first_endpoint,
    parse_server_spec,
    served_models,
    server_spec_text,
)

if TYPE_CHECKING:
    from kontest_tui.models.base import ChatModel
    from kontest_tui.models.ollama import OllamaModel

PREFIX = "ollama"
TITLE = "Ollama"  # the service's name in the client's messages is the prefix
DEFAULT_URL = "http://127.0.0.1:11434"


def parse(rest: str, text: str) -> ModelSpec:
    return parse_server_spec(PREFIX, rest, text, DEFAULT_URL)


def spec_text(spec: ModelSpec) -> str:
    return server_spec_text(PREFIX, spec.name, spec.url, DEFAULT_URL)


def open_client(spec: ModelSpec, context: OpenContext) -> OllamaModel:
    from kontest_tui.models.ollama import OllamaModel

    return OllamaModel(spec.name, first_endpoint(spec, DEFAULT_URL), stream=context.stream)


def open_ollama(spec: ModelSpec, context: OpenContext) -> ChatModel:
    return open_client(spec, context)


async def list_models(spec: ModelSpec) -> list[str]:
    """The models the server offers (/api/tags)."""
    return await served_models(open_client(spec, OpenContext()))


PROVIDER = ModelProvider(
    prefix=PREFIX,
    parse=parse,
    text=spec_text,
    open=open_ollama,
    list_models=list_models,
    hints=ProviderHints(
        title=TITLE,
        description=TITLE,
        pattern="ollama:MODEL[@URL]",
        featured=True,
        lists_server=True,
        default_server=True,
    ),
)
