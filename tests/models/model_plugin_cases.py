"""Providers for the plugin-loading tests, named by hand-made entry points
(tests/models/test_model_plugins.py): one whose functions raise what a buggy plugin would,
one claiming a built-in prefix, one with a prefix that cannot be one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kontest_tui.domain.records import Conversation
from kontest_tui.models.base import ChatModel, ChatRequest, ChatResult, TokenCallback
from kontest_tui.models.provider import ModelProvider, ModelSpec, OpenContext, ProviderHints


class CrashingModel:
    """Opens, then fails its connection check the way a plugin's bug would."""

    spec = "raising:ok"

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        return ChatResult(text="Yes")

    async def check(self) -> str:
        raise RuntimeError("the plugin's check\nbroke")

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        """Nothing to prepare."""

    async def aclose(self) -> None:
        """Nothing to close."""


def parse_raising(rest: str, text: str) -> ModelSpec:
    if rest == "boom":
        raise ValueError("cannot read 'boom'")
    return ModelSpec("raising", rest)


def open_crashing(spec: ModelSpec, context: OpenContext) -> ChatModel:
    return CrashingModel()


RAISING = ModelProvider(
    prefix="raising",
    parse=parse_raising,
    text=lambda spec: f"raising:{spec.name}",
    open=open_crashing,
    hints=ProviderHints(title="raising", description="a buggy plugin", pattern="raising:X"),
)
TAKEN = replace(RAISING, prefix="sim")  # the built-in simulated model's prefix
NOT_A_PREFIX = replace(RAISING, prefix="Bad Prefix")
