"""How `kontest sim serve` behaves like the servers met in use, on purpose (its switches).

Each switch reproduces a server a user runs into, so the real clients are tested against
it over HTTP: a slower replica (`latency_ms`), a thinking model behind an OpenAI-compatible
server or Ollama that answers in its reasoning (`reasoning`: LiteLLM's and vLLM's
`reasoning_content`, vLLM's newer `reasoning`, llama-server's `--reasoning-format`, Ollama's
`message.thinking`), a server or gateway that rejects every chat the same way (`reject`: a
400 "does not support thinking", a 500 for a dead upstream), a proxy that answers
Ollama's /api/chat in NDJSON lines even when asked for one object (`ndjson`) and a reasoning
model that takes only its default temperature (`default_temperature_only`: OpenAI's o-series
and gpt-5 answer any other 400).
"""

from __future__ import annotations

from dataclasses import dataclass

from kontest_tui.errors import InvalidInputError

REASONING_MODES = ("first", "only")
REASONING_FIELDS = ("reasoning_content", "reasoning")
# What the simulated model "thinks" before it answers (split into streamed pieces).
THINKING_TEXT = "The user asks a yes or no question. Let me recall what I know about it. "


@dataclass(frozen=True, slots=True)
class ServeSwitches:
    """The switches of one server (none set: it behaves like a well-run server)."""

    latency_ms: float = 0.0  # added before the first byte of every answer
    # "first": reasoning, then the answer; "only": reasoning and no answer (a thinking model
    # whose budget ran out while it thought: finish_reason / done_reason "length")
    reasoning: str | None = None
    reasoning_field: str = "reasoning_content"  # the OpenAI wire's field for it
    reject_status: int | None = None  # every chat answered with this status ...
    reject_message: str = ""  # ... and this same message
    ndjson: bool = False  # /api/chat answers NDJSON lines even to "stream": false
    default_temperature_only: bool = False  # a temperature other than 1 sent: HTTP 400

    def refuses_temperature(self, temperature: object) -> str | None:
        """The 400 message for a temperature this server does not take (None: taken)."""
        if not self.default_temperature_only or temperature is None or temperature == 1:
            return None
        return (
            f"Unsupported value: 'temperature' does not support {temperature} with this "
            "model. Only the default (1) value is supported."
        )

    def __post_init__(self) -> None:
        if self.latency_ms < 0:
            raise InvalidInputError(f"--latency-ms must be >= 0, not {self.latency_ms:g}")
        if self.reasoning is not None and self.reasoning not in REASONING_MODES:
            raise InvalidInputError(
                f"--reasoning must be one of {', '.join(REASONING_MODES)}, not {self.reasoning!r}"
            )
        if self.reasoning_field not in REASONING_FIELDS:
            raise InvalidInputError(
                f"--reasoning-field must be one of {', '.join(REASONING_FIELDS)}, "
                f"not {self.reasoning_field!r}"
            )
        if self.reject_status is not None and not 400 <= self.reject_status <= 599:
            raise InvalidInputError(
                f"--reject needs an HTTP error status (400-599), not {self.reject_status}"
            )


def parse_reject(text: str) -> tuple[int, str]:
    """`STATUS[:MESSAGE]` (e.g. `400:model does not support thinking`) as (status, message);
    one line when it does not parse."""
    status, _, message = text.partition(":")
    try:
        code = int(status.strip())
    except ValueError:
        raise InvalidInputError(
            f"--reject takes STATUS[:MESSAGE] (e.g. 500:upstream unavailable), not {text!r}"
        ) from None
    return code, message.strip() or f"rejected (simulated HTTP {code})"
