"""The few-shot prompt of the completions mode: a chat rendered as Question/Answer turns for a
base model without a chat template (`openai-completions:`, `local:`), one prompt per answer
format (assets/models/prompts/completions.toml: yes/no, an option's letter, a name), and the
chat read back from such a prompt (the simulated server's /v1/completions). Plain text, no
HTTP: the explanation cards and the batch writer render it without loading a client.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from kontest_tui.errors import ModelSpecError
from kontest_tui.models.base import Message
from kontest_tui.resources import asset_path


@dataclass(frozen=True, slots=True)
class CompletionPrompt:
    """The few-shot prompt of the completions mode."""

    header: str
    examples: tuple[tuple[str, str], ...]
    stop: tuple[str, ...] = ("\n",)
    max_tokens: int = 3

    @property
    def preamble(self) -> str:
        lines = [self.header] if self.header else []
        for question, answer in self.examples:
            lines += [f"Question: {question}", f"Answer: {answer}"]
        return "\n".join(lines)


ANSWER_FORMATS = ("yes_no", "choice", "open")


def _prompt_of(data: dict[str, object], stop: object) -> CompletionPrompt:
    items = data.get("examples", [])
    examples = tuple(
        (str(item["question"]), str(item["answer"]))
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict)
    )
    stops = data.get("stop", stop)
    tokens = data.get("max_tokens", 3)
    return CompletionPrompt(
        header=str(data.get("header", "")),
        examples=examples,
        stop=tuple(str(s) for s in stops) if isinstance(stops, list) else ("\n",),
        max_tokens=tokens if isinstance(tokens, int) and tokens > 0 else 3,
    )


@lru_cache(maxsize=1)
def load_completion_prompts() -> dict[str, CompletionPrompt]:
    """The few-shot prompt of each answer format ("yes_no", "choice", "open") from
    assets/models/prompts/completions.toml (a format it lacks takes the yes/no one)."""
    path = asset_path("models", "prompts", "completions.toml")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        base = _prompt_of(data, ["\n"])
        formats = data.get("formats", {})
        prompts = {"yes_no": base}
        for name in ANSWER_FORMATS[1:]:
            section = formats.get(name) if isinstance(formats, dict) else None
            prompts[name] = _prompt_of(section, list(base.stop)) if section else base
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as error:
        raise ModelSpecError(f"cannot read completion prompt {path}: {error}") from None
    return prompts


def load_completion_prompt(answer_format: str = "yes_no") -> CompletionPrompt:
    """The few-shot prompt of one answer format (the yes/no one for an unknown format)."""
    prompts = load_completion_prompts()
    return prompts.get(answer_format, prompts["yes_no"])


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_completion_prompt(
    messages: Sequence[Message], prompt: CompletionPrompt | None = None
) -> str:
    """The chat as a few-shot transcript ending in `Question: <last>\\nAnswer:`.

    Earlier assistant turns become their answers (first line); system messages are dropped
    (the header plays their part).
    """
    prompt = prompt or load_completion_prompt()
    lines = [prompt.preamble] if prompt.preamble else []
    for message in messages:
        if message.role == "user":
            lines.append(f"Question: {_one_line(message.content)}")
        elif message.role == "assistant":
            answer = message.content.strip().splitlines()[0] if message.content.strip() else ""
            lines.append(f"Answer: {_one_line(answer)}")
    lines.append("Answer:")
    return "\n".join(lines)


def parse_completion_prompt(text: str, prompt: CompletionPrompt | None = None) -> list[Message]:
    """The chat back from a rendered prompt (used by the simulated server's /v1/completions):
    past `prompt`'s preamble, or any answer format's."""
    prompts = [prompt] if prompt is not None else list(load_completion_prompts().values())
    for candidate in sorted(prompts, key=lambda p: -len(p.preamble)):
        if candidate.preamble and text.startswith(candidate.preamble):
            text = text[len(candidate.preamble) :]
            break
    messages: list[Message] = []
    for line in text.splitlines():
        if line.startswith("Question:"):
            messages.append(Message("user", line[len("Question:") :].strip()))
        elif line.startswith("Answer:") and line[len("Answer:") :].strip():
            messages.append(Message("assistant", line[len("Answer:") :].strip()))
    return messages
