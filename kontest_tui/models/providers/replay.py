"""Recorded answers (`replay:FILE.jsonl`): every question answered from a recording, nothing
asked (models/replay.py, imported when a model opens; the file's lines: docs/models.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kontest_tui.errors import ModelSpecError
from kontest_tui.models.provider import (
    RECORDING,
    ModelProvider,
    ModelSpec,
    OpenContext,
    ProviderHints,
)

if TYPE_CHECKING:
    from kontest_tui.models.base import ChatModel

PREFIX = "replay"


def parse(rest: str, text: str) -> ModelSpec:
    if not rest:
        raise ModelSpecError(f"{PREFIX} needs a file: {PREFIX}:FILE.jsonl")
    return ModelSpec(PREFIX, Path(rest).name, path=Path(rest))


def spec_text(spec: ModelSpec) -> str:
    return f"{PREFIX}:{spec.path}"


def file_spec(path: str | Path) -> str:
    """The spec of a recording file."""
    return spec_text(ModelSpec(PREFIX, Path(path).name, path=Path(path)))


def open_replay(spec: ModelSpec, context: OpenContext) -> ChatModel:
    from kontest_tui.models.replay import ReplayModel

    path = spec.path or Path(spec.name)
    if not path.is_file():
        raise ModelSpecError(f"replay file not found: {path}")
    return ReplayModel(path, spec=spec.spec)


PROVIDER = ModelProvider(
    prefix=PREFIX,
    parse=parse,
    text=spec_text,
    open=open_replay,
    mode=RECORDING,
    hints=ProviderHints(
        title="recording",
        description="recorded answers",
        pattern="replay:FILE.jsonl",
        featured=True,
    ),
)
