"""`fixed:WORD`: a model that answers WORD to every question, in process.

A third-party provider is what this module holds and nothing more: a `ModelProvider` with
its prefix, parse, canonical text, open, list and hints, and the ChatModel it opens, all
from kontest_tui's public model API (models.base, models.provider, errors).
"""

from __future__ import annotations

from collections.abc import Sequence

from kontest_tui.domain.records import Conversation
from kontest_tui.errors import ModelSpecError
from kontest_tui.models.base import ChatModel, ChatRequest, ChatResult, TokenCallback
from kontest_tui.models.provider import ModelProvider, ModelSpec, OpenContext, ProviderHints

PREFIX = "fixed"
WORDS = ("yes", "no")  # what `list` offers; any other word answers too


class FixedModel:
    """Answers the same word to every question (a failing model never)."""

    never_waits = True  # nothing to wait for: the executor calls it without a timeout

    def __init__(self, word: str, spec: str) -> None:
        self.word = word
        self.spec = spec

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        if on_token is not None:
            on_token(self.word)
        return ChatResult(text=self.word, tokens=1)

    async def check(self) -> str:
        return f"fixed: answers {self.word!r} to every question"

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        """Nothing to prepare."""

    async def aclose(self) -> None:
        """Nothing to close."""


def parse(rest: str, text: str) -> ModelSpec:
    if not rest:
        raise ModelSpecError(f"{PREFIX} needs a word: {PREFIX}:WORD")
    return ModelSpec(PREFIX, rest)


def spec_text(spec: ModelSpec) -> str:
    return f"{PREFIX}:{spec.name}"


def open_fixed(spec: ModelSpec, context: OpenContext) -> ChatModel:
    return FixedModel(spec.name, spec_text(spec))


async def list_words(spec: ModelSpec) -> list[str]:
    return list(WORDS)


PROVIDER = ModelProvider(
    prefix=PREFIX,
    parse=parse,
    text=spec_text,
    open=open_fixed,
    list_models=list_words,
    hints=ProviderHints(
        title="fixed",
        description="the same answer to every question",
        pattern="fixed:WORD",
    ),
)
