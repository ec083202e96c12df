"""Model specs (`--model`): parse them and open the ChatModel they name.

    sim[:PROFILE]                   built-in simulated model (PROFILE: name or .toml path)
    ollama:MODEL[@URL]              Ollama server (default http://127.0.0.1:11434)
    openai:MODEL[@BASE_URL]         OpenAI-compatible chat (default https://api.openai.com/v1)
    openai-completions:MODEL[@URL]  OpenAI-compatible /completions with a few-shot prompt
    ollama|openai:MODEL@URL1[*N],URL2[*N]   one model on several endpoints (models/pool.py;
                                    *N caps the calls in flight on that endpoint)
    replay:FILE.jsonl               recorded answers
    local:gemma3-270m | local:FILE.gguf   a small base model run here (the [local] extra)

Each prefix is a provider (models/providers/, gathered in models/registry.py, plugins added
through the `kontest.models` entry-point group): this module finds the spec's provider and
lets it parse, print, open and list. Parsing imports no client (no httpx, no local model).
An API key comes from the environment when the model is opened; it is never part of a spec.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from kontest_tui.errors import ModelSpecError
from kontest_tui.models.provider import (
    COMPLETIONS,
    RECORDING,
    ModelSpec,
    OpenContext,
    WithheldKey,
)
from kontest_tui.models.registry import (
    all_providers,
    find_provider,
    known_kinds_hint,
    provider_of,
)

if TYPE_CHECKING:
    from kontest_tui.kg.graph import KnowledgeGraph
    from kontest_tui.models.base import ChatModel, ChatOptions

__all__ = [
    "ModelSpec",
    "WithheldKey",
    "alist_models",
    "check_model_spec",
    "completions_kinds",
    "completions_spec",
    "key_withheld",
    "list_models",
    "open_model",
    "parse_model_spec",
    "recording_of",
    "withheld_key",
]


def featured_patterns() -> list[str]:
    """The spec shapes the model fields show (`sim:PROFILE`, `ollama:MODEL[@URL]`, ...)."""
    return [p.hints.pattern for p in all_providers() if p.hints.featured]


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse a `--model` spec; ModelSpecError (one line) when it does not parse."""
    text = (spec or "").strip()
    if not text:
        raise ModelSpecError(f"empty model spec (try one of: {', '.join(featured_patterns())})")
    kind, _, rest = text.partition(":")
    kind = kind.lower()
    provider = find_provider(kind)
    if provider is None:
        raise ModelSpecError(f"unknown model kind {kind!r} in {text!r}{known_kinds_hint()}")
    return provider.parse(rest.strip(), text)


def check_model_spec(spec: str) -> ModelSpec:
    """Parse a spec and check what its provider can tell without asking the model (the
    simulated model's profile exists); ModelSpecError (one line) when it cannot run."""
    parsed = parse_model_spec(spec)
    check = provider_of(parsed.kind).check
    if check is not None:
        check(parsed)
    return parsed


def completions_spec(spec: str) -> str:
    """The spec asking a chat spec's model in completions mode (`openai:M@URL` ->
    `openai-completions:M@URL`); for any other kind, the pattern `openai-completions:MODEL@URL`
    (the first completions-mode provider of a chat one)."""
    kind, _, rest = spec.partition(":")
    twins = [provider for provider in all_providers() if provider.completions_of]
    for twin in twins:
        if twin.completions_of == kind:
            return f"{twin.prefix}:{rest}"
    return f"{twins[0].prefix}:MODEL@URL" if twins else "a completions-mode model"


def completions_kinds() -> str:
    """The specs that ask a base model in completions mode, as a hint names them:
    `openai-completions:MODEL@URL (or local:)`."""
    modes = [provider for provider in all_providers() if provider.mode == COMPLETIONS]
    servers = " or ".join(f"{p.prefix}:MODEL@URL" for p in modes if p.completions_of)
    others = ", ".join(f"{p.prefix}:" for p in modes if not p.completions_of)
    return f"{servers} (or {others})" if servers and others else servers or others


def recording_of(spec: str) -> Path | None:
    """The file a recorded model answers from (None: the spec asks a model, or does not
    parse)."""
    try:
        parsed = parse_model_spec(spec)
    except ModelSpecError:
        return None
    return parsed.path if parsed.mode == RECORDING else None


def key_withheld(spec: str) -> WithheldKey | None:
    """For a model spec read from a session database (someone else's DB may name any URL):
    the hosts its provider's API key is not sent to, or None when it is sent (the URL's host
    is the key's) or there is no key to send."""
    parsed = parse_model_spec(spec)
    hook = provider_of(parsed.kind).withheld_key
    return hook(parsed) if hook is not None else None


def withheld_key(spec: str) -> str | None:
    """The command line's one line when the key is withheld from a stored URL (key_withheld)."""
    found = key_withheld(spec)
    if found is None:
        return None
    return (
        f"{found.key_name} is not sent to {', '.join(found.hosts)}, the session's stored URL "
        f"(the key is for {found.key_host}); to send it, resume with --model {found.spec} "
        f"or set {found.url_setting}"
    )


def open_model(
    spec: str | ModelSpec,
    *,
    kg: KnowledgeGraph | None = None,
    options: ChatOptions | None = None,
    seed: int = 0,
    stream: bool = True,
    stored: bool = False,
) -> ChatModel:
    """The ChatModel a spec names. `seed` seeds the simulated model (a request's
    options.seed wins); `stream=False` makes HTTP clients ask for whole answers. `stored`:
    the spec was read from a session database, so an API key goes only to the host it is
    configured for (`withheld_key`).
    `kg` lets the simulated model recognise relations in non-template wording (variants);
    `options` is accepted for clients that want defaults (none of the built-in ones).
    A spec with several endpoints (`@URL1,URL2`) opens one model per endpoint in a pool."""
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    provider = provider_of(parsed.kind)
    context = OpenContext(kg=kg, options=options, seed=seed, stream=stream, stored=stored)
    if parsed.url and "," in parsed.url:
        from kontest_tui.models.pool import Endpoint, ModelPool

        endpoints = []
        for part in parsed.url.split(","):
            url, star, cap = part.partition("*")
            one = replace(parsed, url=url)
            endpoints.append(Endpoint(url, provider.open(one, context), int(cap) if star else None))
        return ModelPool(parsed.spec, endpoints)
    return provider.open(parsed, context)


def list_models(spec: str) -> list[str]:
    """Models a provider offers (blocking; call it from a worker thread, not an event loop).

    `ollama[:@URL]` (/api/tags), `openai[:@URL]` (/v1/models), `sim` (built-in profiles);
    a full spec works too (its model name is ignored). Async code uses `alist_models`.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(alist_models(spec))
    raise RuntimeError("list_models() blocks: use await alist_models() inside an event loop")


async def alist_models(spec: str) -> list[str]:
    """The async form of `list_models`."""
    text = (spec or "").strip()
    kind, _, rest = text.partition(":")
    kind = kind.lower()
    provider = find_provider(kind)
    if provider is None or provider.list_models is None:
        servers = [p for p in all_providers() if p.hints.lists_server and p.hints.featured]
        shown = " or ".join(f"{p.prefix}[:@URL]" for p in servers)
        raise ModelSpecError(f"cannot list models of {kind!r} (use {shown})")
    if not rest.partition("@")[0].strip():
        rest = "list" + rest  # a placeholder model name: only the URL matters here
    return await provider.list_models(provider.parse(rest.strip(), f"{kind}:{rest}"))
