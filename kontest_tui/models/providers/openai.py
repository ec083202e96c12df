"""OpenAI-compatible chat servers (`openai:MODEL[@BASE_URL]`, default
https://api.openai.com/v1; OpenAI, vLLM, llama.cpp server, LM Studio; several endpoints:
`@URL1,URL2`). A base URL without a path gets /v1. The client is models/openai.py, imported
when a model opens.

The API key comes from OPENAI_API_KEY when the model is opened and lives only in the
client's headers: never in a spec. It is needed for api.openai.com; for a spec read from a
session database (someone else's database may name any URL) it goes only to the host it is
configured for: OPENAI_BASE_URL's, else api.openai.com.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kontest_tui.errors import ModelSpecError
from kontest_tui.models.provider import (
    CHAT,
    ModelProvider,
    ModelSpec,
    OpenContext,
    ProviderHints,
    WithheldKey,
)
from kontest_tui.models.providers.servers import (
    first_endpoint,
    host_of,
    parse_server_spec,
    served_models,
    server_spec_text,
)

if TYPE_CHECKING:
    from kontest_tui.models.base import ChatModel
    from kontest_tui.models.openai import OpenAIModel

PREFIX = "openai"
DEFAULT_URL = "https://api.openai.com/v1"
KEY_HOST = "api.openai.com"  # the server that always needs the key
API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"  # where the key belongs (default: api.openai.com)


def key_host() -> str:
    """The host the API key is configured for: OPENAI_BASE_URL's, else api.openai.com."""
    return host_of(os.environ.get(BASE_URL_ENV) or DEFAULT_URL)


def api_key_for(base_url: str, *, stored: bool) -> str | None:
    """The key to send to `base_url` (None: none); ModelSpecError when api.openai.com is
    asked without one. `stored`: the URL comes from a session database, so the key goes
    only to the host it is configured for."""
    api_key = os.environ.get(API_KEY_ENV) or None
    if stored and api_key is not None and host_of(base_url) != key_host():
        api_key = None  # a URL from a session DB: the key is not for it
    if api_key is None and host_of(base_url) == KEY_HOST:
        raise ModelSpecError(f"{API_KEY_ENV} is not set (needed for {KEY_HOST})")
    return api_key


def max_tokens_field(base_url: str) -> str:
    """The request field of the answer-length limit: OpenAI's own API takes
    max_completion_tokens (its o-series reject max_tokens); llama.cpp, vLLM, LM Studio and
    the rest take max_tokens."""
    return "max_completion_tokens" if host_of(base_url) == KEY_HOST else "max_tokens"


def withheld_key(spec: ModelSpec) -> WithheldKey | None:
    """The hosts of a stored spec the key is not sent to (None: it is sent, or there is no
    key to send)."""
    if not os.environ.get(API_KEY_ENV):
        return None
    hosts = {host_of(part.partition("*")[0]) for part in (spec.url or DEFAULT_URL).split(",")}
    foreign = tuple(sorted(hosts - {key_host()}))
    if not foreign:
        return None
    return WithheldKey(spec.spec, foreign, key_host() or BASE_URL_ENV, API_KEY_ENV, BASE_URL_ENV)


def server_provider(
    prefix: str, mode: str, hints: ProviderHints, *, completions_of: str | None = None
) -> ModelProvider:
    """The provider of OpenAI-compatible servers asked in `mode` (chat or completions)."""

    def parse(rest: str, text: str) -> ModelSpec:
        return parse_server_spec(
            prefix, rest, text, DEFAULT_URL, base_path=True, key_env=API_KEY_ENV
        )

    def spec_text(spec: ModelSpec) -> str:
        return server_spec_text(prefix, spec.name, spec.url, DEFAULT_URL)

    def open_client(spec: ModelSpec, context: OpenContext) -> OpenAIModel:
        from kontest_tui.models.openai import OpenAIModel

        base = first_endpoint(spec, DEFAULT_URL)
        api_key = api_key_for(base, stored=context.stored)
        return OpenAIModel(
            spec.name, base, api_key=api_key, mode=mode, stream=context.stream, spec=spec.spec
        )

    def open_model(spec: ModelSpec, context: OpenContext) -> ChatModel:
        return open_client(spec, context)

    async def list_models(spec: ModelSpec) -> list[str]:
        """The model ids the server offers (/models)."""
        return await served_models(open_client(spec, OpenContext()))

    return ModelProvider(
        prefix=prefix,
        parse=parse,
        text=spec_text,
        open=open_model,
        list_models=list_models,
        mode=mode,
        batch=True,  # OpenAI's Batch API; vLLM's run-batch takes chat lines
        completions_of=completions_of,
        withheld_key=withheld_key,
        hints=hints,
    )


PROVIDER = server_provider(
    PREFIX,
    CHAT,
    ProviderHints(
        title="OpenAI-compatible",
        description="OpenAI-compatible",
        pattern="openai:MODEL[@BASE_URL]",
        featured=True,
        lists_server=True,
    ),
)
