"""Notices about a run worth telling the user once, as it goes (ExecutorEvents.on_notice).

A base model asked in chat mode does not answer: it continues the chat template as text
(`Is Ireland a republic?<|im_end|>\\n<|im_start|>user ...`) or repeats the question. After
ECHO_AFTER such replies the run says so once, naming the fix: the completions mode
(`openai-completions:`), which asks a base model with a few-shot prompt. The command line
prints it as one line, the explorer as a notification; the report counts such replies
(`echoes`) and says the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kontest_tui.domain.answers import echoes_prompt
from kontest_tui.domain.records import Answer, Conversation, Response
from kontest_tui.models.specs import completions_spec
from kontest_tui.run.executor import ExecutorEvents

ECHO_AFTER = 3  # replies continuing the prompt before the run says so


def echo_notice(spec: str, count: int) -> str:
    return (
        f"{count} replies continue the chat template or repeat the question: this looks like "
        f"a base model asked in chat mode; ask it in completions mode instead "
        f"(--model {completions_spec(spec)})"
    )


class EchoWatch:
    """Counts replies that continue the prompt; calls `on_notice` once at ECHO_AFTER."""

    def __init__(self, spec: str, on_notice: Callable[[str], None]) -> None:
        self.spec = spec
        self.on_notice = on_notice
        self.count = 0

    def see(self, conversation: Conversation, response: Response) -> None:
        if self.count >= ECHO_AFTER or response.error is not None:
            return
        if response.answer not in (Answer.INVALID, Answer.CUT):
            return
        if response.turn < len(conversation.turns) and echoes_prompt(
            conversation.turns[response.turn].text, response.raw
        ):
            self.count += 1
            if self.count == ECHO_AFTER:
                self.on_notice(echo_notice(self.spec, self.count))


def watch_notices(events: ExecutorEvents, spec: str) -> ExecutorEvents:
    """`events` with its on_answer also fed to the notices' watchers (when on_notice is set)."""
    if events.on_notice is None:
        return events
    watch = EchoWatch(spec, events.on_notice)
    base = events.on_answer

    def on_answer(conversation: Conversation, response: Response) -> None:
        watch.see(conversation, response)
        if base is not None:
            base(conversation, response)

    return replace(events, on_answer=on_answer)
