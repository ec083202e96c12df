"""What the model saw before each reply, rebuilt from a session's settings for a card.

A chat model (`sim`, `ollama:`, `openai:`) got the system prompt and the conversation so far
as messages: the session's `--system-prompt` when it has one, else the conversation's own
(the template set's), exactly as the executor sends it (run.executor). A completions-mode
model (`openai-completions:`, `local:`) got no messages: one text, the few-shot prompt with
the conversation rendered into it, which it continued; that text is rendered here by the
client's own function (models.completion_prompt.render_completion_prompt), never a copy of it. A
replay (`replay:FILE`) answered from a recording, which holds what its model was asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Conversation
from kontest_tui.errors import KontestError
from kontest_tui.models.base import Message
from kontest_tui.models.completion_prompt import render_completion_prompt
from kontest_tui.models.provider import CHAT, COMPLETIONS, RECORDING

__all__ = [
    "CHAT",
    "COMPLETIONS",
    "RECORDING",
    "Prompting",
    "asked_sentence",
    "completion_prompt",
    "prompting_of",
]


@dataclass(frozen=True, slots=True)
class Prompting:
    """How a session's model was asked: `mode` (CHAT, COMPLETIONS, RECORDING or "" when the
    spec does not parse), its spec, and the session's own system prompt (None: each
    conversation's, from its template set)."""

    model: str | None
    mode: str
    system_prompt: str | None = None

    def system_of(self, conversation: Conversation) -> str | None:
        """The system prompt a conversation's chat began with (None in completions mode:
        the few-shot prompt's header plays its part, and for a recording)."""
        if self.mode != CHAT:
            return None
        prompt = self.system_prompt or conversation.system_prompt
        return clean_text(prompt) if prompt else None


def prompting_of(model: str | None, options: Mapping[str, object] | None = None) -> Prompting:
    """How a session was asked, from its model spec and options (`options_json`)."""
    system = (options or {}).get("system_prompt")
    system_prompt = system if isinstance(system, str) and system else None
    from kontest_tui.models.specs import parse_model_spec  # not the HTTP clients (sim, replay)

    try:
        mode = parse_model_spec(model).mode if model else ""  # the provider's CHAT, ...
    except KontestError:
        mode = ""
    return Prompting(model, mode, system_prompt)


def completion_prompt(turns: Sequence[tuple[str, str | None]]) -> str:
    """The text a completions-mode model continued for the last of `turns` (each earlier
    turn's question with the reply it got, the last one's question), cleaned for display."""
    messages: list[Message] = []
    for question, reply in turns[:-1]:
        messages.append(Message("user", question))
        messages.append(Message("assistant", reply or ""))
    if turns:
        messages.append(Message("user", turns[-1][0]))
    try:
        return clean_text(render_completion_prompt(messages))
    except KontestError:  # the packaged few-shot prompt cannot be read
        return ""


def asked_sentence(prompting: Prompting) -> str | None:
    """How the replies below were asked for, in a sentence (None when not known)."""
    model = f" ({prompting.model})" if prompting.model else ""
    if prompting.mode == CHAT:
        return (
            f"Asked as a chat{model}: each conversation began with its system prompt, and each "
            "question came after the questions and replies before it."
        )
    if prompting.mode == COMPLETIONS:
        return (
            f"Asked as text to complete{model}: the model saw no chat, only the prompt shown "
            "before each reply, and wrote what follows its last “Answer:”."
        )
    if prompting.mode == RECORDING:
        return f"Replayed from a recording{model}, which holds the questions as they were asked."
    return None
