"""Model specs (`--model`): parse them and open the ChatModel they name.

    sim[:PROFILE]                   built-in simulated model (PROFILE: name or .toml path)
    ollama:MODEL[@URL]              Ollama server (default http://127.0.0.1:11434)
    openai:MODEL[@BASE_URL]         OpenAI-compatible chat (default https://api.openai.com/v1)
    openai-completions:MODEL[@URL]  OpenAI-compatible /completions with a few-shot prompt
    ollama|openai:MODEL@URL1[*N],URL2[*N]   one model on several endpoints (models/pool.py;
                                    *N caps the calls in flight on that endpoint)
    replay:FILE.jsonl               recorded answers
    local:gemma3-270m | local:FILE.gguf   a small base model run here (the [local] extra)

The API key comes from OPENAI_API_KEY when the model is opened; it is never part of a spec.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from kontest_tui.errors import ModelSpecError
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.models.base import ChatModel, ChatOptions
from kontest_tui.redact import has_secret
from kontest_tui.validate_input import check_port

# The HTTP clients (httpx and the modules of models.ollama and models.openai) are imported
# where a spec names them: parsing `sim`, a replay or a local model (a report, a card) needs
# none of them.

KINDS = ("sim", "ollama", "openai", "openai-completions", "replay", "local")
API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"  # where the key belongs (default: api.openai.com)


def key_host() -> str:
    """The host the API key is configured for: OPENAI_BASE_URL's, else api.openai.com."""
    import httpx

    from kontest_tui.models.openai import DEFAULT_OPENAI_URL

    configured = os.environ.get(BASE_URL_ENV) or DEFAULT_OPENAI_URL
    try:
        return (httpx.URL(configured).host or "").lower()
    except httpx.InvalidURL:
        return ""


@dataclass(frozen=True, slots=True)
class WithheldKey:
    """The API key is not sent to a stored model URL: that URL's hosts and the key's host."""

    spec: str
    hosts: tuple[str, ...]
    key_host: str  # the host the key is for (OPENAI_BASE_URL's, else api.openai.com)


def key_withheld(spec: str) -> WithheldKey | None:
    """For a model spec read from a session database (someone else's DB may name any URL):
    the hosts the API key is not sent to, or None when it is sent (the URL's host is the
    key's: OPENAI_BASE_URL's, else api.openai.com) or there is no key to send."""
    if not os.environ.get(API_KEY_ENV):
        return None
    parsed = parse_model_spec(spec)
    if parsed.kind not in ("openai", "openai-completions"):
        return None
    import httpx

    from kontest_tui.models.openai import DEFAULT_OPENAI_URL

    hosts = {
        (httpx.URL(part.partition("*")[0]).host or "").lower()
        for part in (parsed.url or DEFAULT_OPENAI_URL).split(",")
    }
    foreign = tuple(sorted(hosts - {key_host()}))
    if not foreign:
        return None
    return WithheldKey(parsed.spec, foreign, key_host() or BASE_URL_ENV)


def withheld_key(spec: str) -> str | None:
    """The command line's one line when the key is withheld from a stored URL (key_withheld)."""
    found = key_withheld(spec)
    if found is None:
        return None
    return (
        f"{API_KEY_ENV} is not sent to {', '.join(found.hosts)}, the session's stored URL (the "
        f"key is for {found.key_host}); to send it, resume with --model {found.spec} "
        f"or set {BASE_URL_ENV}"
    )


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed model spec. `spec` is its canonical text (no secret in it, ever)."""

    kind: str
    name: str
    url: str | None = None
    path: Path | None = None

    @property
    def spec(self) -> str:
        if self.kind == "sim":
            return "sim" if self.name == "default" else f"sim:{self.name}"
        if self.kind == "replay":
            return f"replay:{self.path}"
        if self.kind == "local":
            return f"local:{self.path}" if self.path else f"local:{self.name}"
        from kontest_tui.models.ollama import DEFAULT_OLLAMA_URL
        from kontest_tui.models.openai import DEFAULT_OPENAI_URL

        default = DEFAULT_OLLAMA_URL if self.kind == "ollama" else DEFAULT_OPENAI_URL
        if self.url and self.url != default:
            return f"{self.kind}:{self.name}@{self.url}"
        return f"{self.kind}:{self.name}"

    @property
    def display(self) -> str:
        return self.spec

    @property
    def mode(self) -> str:
        return "completions" if self.kind == "openai-completions" else "chat"

    def __str__(self) -> str:
        return self.spec


def _check_url(url: str, spec: str) -> str:
    import httpx

    if "://" not in url:
        url = f"http://{url}"
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):
        raise ModelSpecError(f"bad URL in model spec {spec!r}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ModelSpecError(f"bad URL in model spec {spec!r}: use http://HOST:PORT")
    check_port(parsed.port, f"bad URL in model spec {spec!r}", ModelSpecError)
    if parsed.userinfo or has_secret(url):
        raise ModelSpecError(
            f"credentials in the URL of model spec are not supported; use {API_KEY_ENV}"
        )
    return url.rstrip("/")


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse a `--model` spec; ModelSpecError (one line) when it does not parse."""
    text = (spec or "").strip()
    if not text:
        raise ModelSpecError("empty model spec (try sim, ollama:MODEL or openai:MODEL)")
    kind, _, rest = text.partition(":")
    kind = kind.lower()
    if kind not in KINDS:
        raise ModelSpecError(
            f"unknown model kind {kind!r} in {text!r} (use one of: {', '.join(KINDS)})"
        )
    rest = rest.strip()
    if kind == "sim":
        return ModelSpec("sim", rest or "default")
    if kind == "replay":
        if not rest:
            raise ModelSpecError("replay needs a file: replay:FILE.jsonl")
        return ModelSpec("replay", Path(rest).name, path=Path(rest))
    if kind == "local":
        if not rest:
            raise ModelSpecError("local needs a model: local:gemma3-270m or local:FILE.gguf")
        if rest.endswith(".gguf"):
            return ModelSpec("local", Path(rest).stem, path=Path(rest))
        return ModelSpec("local", rest)
    name, at, url = rest.partition("@")
    name = name.strip()
    if not name:
        raise ModelSpecError(f"{kind} needs a model name: {kind}:MODEL[@URL]")
    if at and not url.strip():
        raise ModelSpecError(f"empty URL after '@' in model spec {text!r}")
    from kontest_tui.models.ollama import DEFAULT_OLLAMA_URL
    from kontest_tui.models.openai import DEFAULT_OPENAI_URL, normalise_base_url

    if "," in url:
        return ModelSpec(
            kind, name, ",".join(_pool_url(kind, part, text) for part in url.split(","))
        )
    if kind == "ollama":
        return ModelSpec(
            "ollama", name, _check_url(url.strip(), text) if at else DEFAULT_OLLAMA_URL
        )
    base = normalise_base_url(_check_url(url.strip(), text)) if at else DEFAULT_OPENAI_URL
    return ModelSpec(kind, name, base)


def _pool_url(kind: str, part: str, spec: str) -> str:
    """One endpoint of a pool spec, checked: URL[*N] with N >= 1 calls in flight at most."""
    url, star, cap = part.strip().partition("*")
    if not url.strip():
        raise ModelSpecError(f"empty URL in the endpoint list of model spec {spec!r}")
    if star and not (cap.strip().isdigit() and int(cap) >= 1):
        raise ModelSpecError(f"bad cap {cap!r} in model spec {spec!r}: use URL*N with N >= 1")
    checked = _check_url(url.strip(), spec)
    if kind != "ollama":
        from kontest_tui.models.openai import normalise_base_url

        checked = normalise_base_url(checked)
    return f"{checked}*{int(cap)}" if star else checked


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
    the spec was read from a session database, so the API key goes only to the host it is
    configured for (`withheld_key`).
    `kg` lets the simulated model recognise relations in non-template wording (variants);
    `options` is accepted for clients that want defaults (none of the built-in ones)."""
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if parsed.url and "," in parsed.url:
        from kontest_tui.models.pool import Endpoint, ModelPool

        endpoints = []
        for part in parsed.url.split(","):
            url, star, cap = part.partition("*")
            one = ModelSpec(parsed.kind, parsed.name, url)
            endpoints.append(
                Endpoint(
                    url,
                    open_model(
                        one, kg=kg, options=options, seed=seed, stream=stream, stored=stored
                    ),
                    int(cap) if star else None,
                )
            )
        return ModelPool(parsed.spec, endpoints)
    if parsed.kind == "sim":
        from kontest_tui.models.sim import SimulatedModel

        return SimulatedModel(parsed.name, seed=seed, kg=kg)
    if parsed.kind == "ollama":
        from kontest_tui.models.ollama import DEFAULT_OLLAMA_URL, OllamaModel

        return OllamaModel(parsed.name, parsed.url or DEFAULT_OLLAMA_URL, stream=stream)
    if parsed.kind in ("openai", "openai-completions"):
        import httpx

        from kontest_tui.models.openai import DEFAULT_OPENAI_URL, OpenAIModel

        base = parsed.url or DEFAULT_OPENAI_URL
        api_key = os.environ.get(API_KEY_ENV) or None
        if stored and api_key is not None and (httpx.URL(base).host or "").lower() != key_host():
            api_key = None  # a URL from a session DB: the key is not for it
        if api_key is None and httpx.URL(base).host == "api.openai.com":
            raise ModelSpecError(f"{API_KEY_ENV} is not set (needed for api.openai.com)")
        return OpenAIModel(
            parsed.name, base, api_key=api_key, mode=parsed.mode, stream=stream, spec=parsed.spec
        )
    if parsed.kind == "replay":
        from kontest_tui.models.replay import ReplayModel

        assert parsed.path is not None
        if not parsed.path.is_file():
            raise ModelSpecError(f"replay file not found: {parsed.path}")
        return ReplayModel(parsed.path, spec=parsed.spec)
    from kontest_tui.models.local import LocalModel

    return LocalModel(parsed.name, path=parsed.path, spec=parsed.spec)


def list_models(spec: str) -> list[str]:
    """Models a server offers (blocking; call it from a worker thread, not an event loop).

    `ollama[:@URL]` (/api/tags), `openai[:@URL]` (/v1/models), `sim` (built-in profiles);
    a full spec works too (its model name is ignored). Async code uses `alist_models`.
    """
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
    if kind == "sim":
        from kontest_tui.models.sim import list_profiles

        return list_profiles()
    if kind not in ("ollama", "openai", "openai-completions"):
        raise ModelSpecError(f"cannot list models of {kind!r} (use ollama[:@URL] or openai[:@URL])")
    if not rest.partition("@")[0].strip():
        rest = "list" + rest  # a placeholder model name: only the URL matters here
    model = open_model(f"{kind}:{rest}")
    from kontest_tui.models.ollama import OllamaModel
    from kontest_tui.models.openai import OpenAIModel

    try:
        assert isinstance(model, OllamaModel | OpenAIModel)  # the kinds checked above
        return await model.list_models()
    finally:
        await model.aclose()
