"""What every model client offers the executor: one async chat call that streams tokens.

Clients (ollama, openai, sim, replay, local) implement `ChatModel`. They raise
`kontest_tui.errors.ModelError` (with `retryable` and `retry_after`) on failure; the
executor owns retries, concurrency, caching and storage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kontest_tui.domain.records import Conversation


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """Per-session generation options (part of the response-cache key)."""

    # None: no temperature is sent, the server uses its own default (reasoning models take
    # no other; `kontest run --temperature default`)
    temperature: float | None = 0.0
    # The session's model seed (--model-seed; None: no seed sent). The executor sends each
    # call its own seed derived from it (domain.seeds.draw_seed: the conversation and the
    # draw), so a request's options carry that per-call seed.
    seed: int | None = None
    max_tokens: int | None = None
    timeout: float = 60.0
    system_prompt: str | None = None
    # Let a thinking model (qwen3, deepseek-r1 on Ollama) think first (`--think`); off, the
    # request says `"think": false` so the token budget goes to the answer.
    think: bool = False


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One turn to answer. `messages` is the whole chat so far, ending with the user turn
    (no system message: clients add `options.system_prompt`). The ids let replay and
    simulated models answer deterministically whatever the concurrency."""

    messages: tuple[Message, ...]
    options: ChatOptions = field(default_factory=ChatOptions)
    conversation_id: str = ""
    turn: int = 0
    kind: str = "atomic"
    # What the reply should be: "yes_no", "choice" (an option letter) or "open" (a name);
    # completions mode picks its few-shot prompt and token budget by it (kinds.registry).
    answer_format: str = "yes_no"


@dataclass(frozen=True, slots=True)
class ChatResult:
    """An answer. `stopped` says why it ended before the model finished: "timeout" (the call's
    timeout came after tokens had arrived: the partial text is the answer, not asked again)
    or "length" (the max-tokens limit); None when the model ended it."""

    text: str
    tokens: int = 0
    latency_ms: float = 0.0
    first_token_ms: float | None = None
    stopped: str | None = None
    dropped: int = 0  # characters a stream sent past what is kept (never held in memory)
    # P(yes | yes or no) from the server's token log-probabilities (domain.margins); None
    # when the server gave none or no yes/no token was among the first tokens' alternatives
    p_yes: float | None = None


TokenCallback = Callable[[str], None]


@runtime_checkable
class ChatModel(Protocol):
    """A system under test."""

    spec: str  # the model spec as stored: never contains a secret

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        """Answer the last user message, calling `on_token` with each streamed piece."""
        ...

    async def check(self) -> str:
        """A one-line connection check; raises ModelError with one line saying what is wrong."""
        ...

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        """Called once with every conversation of a run, in generation order, before any
        chat (replay assigns its recorded answers here). Most clients do nothing."""
        ...

    async def aclose(self) -> None: ...
