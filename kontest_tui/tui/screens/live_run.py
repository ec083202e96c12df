"""The live run: answers streaming token by token, progress, live error counters, pause/cancel.

The run itself is the engine's (run_plan -> run.executor / run.session) in an async
worker; its callbacks only fill buffers, and a timer flushes them to the widgets ten times a
second, so a fast model never floods the UI and a slow one never blocks it. Conversations
of every test kind stream alike, labelled by kind (`Q1 atomic`, `factcheck wh`, `logic
negation`, `variant t1 v3`); the counters come from the engine's `evaluate_all`, which
judges the other kinds from the raw replies.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, ProgressBar, RichLog, Static

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Answer, AnswerKey, Response, Verdict
from kontest_tui.errors import KontestError
from kontest_tui.kinds.evaluate import evaluate_all
from kontest_tui.tui.plan import SessionPlan, SessionResult
from kontest_tui.tui.run_control import RunControl, RunOutcome, run_plan
from kontest_tui.tui.screens.confirm import ConfirmScreen
from kontest_tui.tui.views import KIND_ORACLES, conversation_label, report_of, verdicts_of
from kontest_tui.tui.widgets.counts import ReportCounts
from kontest_tui.tui.widgets.relation_tree import ANSWER_STYLES, describe_answer
from kontest_tui.tui.workers import WorkerFailures

FLUSH_SECONDS = 0.1
EVALUATE_SECONDS = 0.5
STREAM_LINES = 6


class LiveRunScreen(WorkerFailures, Screen[None]):
    """One session running: what the model is saying right now and what it got wrong so far."""

    BINDINGS = [
        Binding(
            "p",
            "toggle_pause",
            "Pause/Resume",
            id="run_pause",
            tooltip="Pause or resume asking the model",
        ),
        Binding(
            "escape",
            "cancel_run",
            "Cancel",
            id="run_cancel",
            tooltip="Cancel the run (answers so far are kept)",
        ),
        Binding(
            "enter",
            "open_results",
            "Results",
            id="run_results",
            tooltip="Open the results of the answers so far",
        ),
    ]

    class RunFinished(Message):
        """The run ended (done or cancelled) with these answers."""

        def __init__(self, result: SessionResult, cancelled: bool) -> None:
            super().__init__()
            self.result = result
            self.cancelled = cancelled

    class RunEnded(Message):
        """The run's worker returned (done or cancelled): its outcome."""

        def __init__(self, outcome: RunOutcome) -> None:
            super().__init__()
            self.outcome = outcome

    class Evaluated(Message):
        """A fresh evaluation of the answers so far."""

        def __init__(self, evaluation: Any) -> None:
            super().__init__()
            self.evaluation = evaluation

    def __init__(
        self,
        plan: SessionPlan,
        auto_results: bool = True,
        store_session: bool = True,
        resumed: SessionResult | None = None,
    ) -> None:
        super().__init__()
        self.plan = plan
        self.auto_results = auto_results
        self.store_session = store_session
        self.failed: str | None = None
        self.result = SessionResult(plan=plan)
        if resumed is not None:  # a stored session going on: its answers so far count
            self.result.raw.update(resumed.raw)
            self.result.answers.update(resumed.answers)
        self.control = RunControl()
        self.streaming: dict[tuple[str, int], str] = {}
        self.pending_done: deque[Response] = deque()
        self.known_errors: set[tuple[str, str, str | None, tuple[AnswerKey, ...]]] = set()
        self.answered = len(self.result.answers)
        self.failed_turns = 0  # turns with no answer after all attempts
        self.total = sum(len(conversation.turns) for conversation in plan.conversations)
        self.conversations = {conversation.id: conversation for conversation in plan.conversations}
        self.last_evaluated = 0.0
        self.evaluated_count = -1
        self.finished = False

    def compose(self) -> ComposeResult:
        yield Header()
        kinds = "" if tuple(self.plan.kinds) == ("kontest",) else f" ({', '.join(self.plan.kinds)})"
        yield Static(
            f"{self.plan.model_spec} on {self.plan.kg.name}: {len(self.plan.relations)} relations, "
            f"{len(self.plan.conversations)} conversations{kinds}, {self.total} model calls",
            id="run-title",
            classes="title",
            markup=False,
        )
        yield ProgressBar(total=self.total or None, id="run-progress", show_eta=True)
        yield Static("starting…", id="run-state", classes="hint", markup=False)
        yield ReportCounts("", id="run-counts", classes="counts")
        with Horizontal(id="run-body"):
            with Vertical(id="transcript"):
                yield Static("", id="streaming", classes="pane", markup=False)
                yield RichLog(
                    id="finished-log", classes="pane", wrap=True, markup=False, max_lines=2000
                )
            yield RichLog(id="detected", classes="pane", wrap=True, markup=False, max_lines=2000)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#streaming", Static).border_title = "streaming"
        self.query_one("#finished-log", RichLog).border_title = "answers"
        self.query_one("#detected", RichLog).border_title = "errors detected"
        self.set_interval(FLUSH_SECONDS, self.flush_updates)
        self.run_worker_task(getattr(self.app, "db_path", None))

    def on_unmount(self) -> None:
        """Leaving the screen (or quitting) stops the run; the answers so far stay stored."""
        if not self.finished:
            self.control.cancel()

    # -- the run ---------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def run_worker_task(self, db: str | None) -> None:
        """The whole run in this thread's own event loop, so model I/O and the store's
        commits never wait on the UI and the UI never waits on them."""
        outcome = asyncio.run(
            run_plan(
                self.plan,
                on_token=self.token_arrived,
                on_response=self.response_arrived,
                control=self.control,
                db=db,
                store_session=self.store_session,
            )
        )
        # A failure (KontestError or not) goes to `worker_failed` through the one handler.
        self.post_message(self.RunEnded(outcome))

    @on(RunEnded)
    def run_ended(self, event: RunEnded) -> None:
        self.finish(event.outcome)

    def worker_failed(self, group: str, error: BaseException) -> None:
        """The run failed (already notified): it stops, the answers so far stay."""
        if group == "run":
            self.failed = str(error)
            self.finish(RunOutcome(session_id=None, cancelled=True))

    def finish(self, outcome: RunOutcome) -> None:
        """Take the engine's final evaluation (or evaluate the answers so far) and hand over."""
        if self.finished:
            return
        self.flush_updates()
        self.result.session_id = outcome.session_id
        evaluation = outcome.evaluation
        if evaluation is None:
            try:
                evaluation = evaluate_all(
                    self.plan.relations,
                    self.plan.conversations,
                    self.result.answers,
                    session=outcome.session_id,
                    model=self.plan.model_spec,
                    raw_answers=self.result.raw,
                )
            except KontestError as error:
                self.notify(str(error), title=error.title, severity="error", markup=False)
                return
        self.result.evaluation = evaluation
        self.finished = True
        self.show_evaluation(evaluation)
        self.flush_updates()
        self.post_message(self.RunFinished(self.result, outcome.cancelled))

    def token_arrived(self, conversation_id: str, turn: int, text: str) -> None:
        key = (conversation_id, turn)
        self.streaming[key] = self.streaming.get(key, "") + text

    def response_arrived(self, response: Response) -> None:
        self.pending_done.append(response)

    # -- batched UI updates ----------------------------------------------------------------

    def flush_updates(self) -> None:
        done: list[Response] = []
        while self.pending_done:
            done.append(self.pending_done.popleft())
        log = self.query_one("#finished-log", RichLog)
        for response in done:
            key = (response.conversation_id, response.turn)
            self.streaming.pop(key, None)
            self.result.raw[key] = response.raw
            if response.error is None:  # a failed turn is no answer
                self.result.answers[key] = response.answer
            else:
                self.failed_turns += 1
            self.answered += 1
            log.write(self.render_response(response))
        if done:
            self.query_one("#run-progress", ProgressBar).update(progress=self.answered)
        self.query_one("#streaming", Static).update(self.render_streaming())
        self.query_one("#run-state", Static).update(self.describe_state())
        now = time.monotonic()
        if self.answered != self.evaluated_count and now - self.last_evaluated >= EVALUATE_SECONDS:
            self.last_evaluated = now
            self.evaluated_count = self.answered
            self.evaluate_worker(dict(self.result.answers), dict(self.result.raw))

    def render_response(self, response: Response) -> Text:
        conversation = self.conversations.get(response.conversation_id)
        text = Text()
        if conversation is not None:
            text.append(f"{conversation_label(conversation)} ", style="cyan")
            text.append(conversation.turns[response.turn].text + " ")
        word, style = (
            describe_answer(conversation, response.answer)
            if conversation is not None
            else ANSWER_STYLES.get(response.answer, ANSWER_STYLES[None])
        )
        text.append(clean_text(response.raw[:400]).strip()[:200] or "(empty)", style="italic")
        text.append(f" → {word}", style=style)
        if response.error:
            text.append(f" ({clean_text(response.error)})", style="red")
        return text

    def render_streaming(self) -> Text:
        if not self.streaming:
            return Text("(waiting for the model)" if not self.finished else "(done)", style="dim")
        text = Text()
        # A copy first (one step under the GIL): the run's thread adds tokens meanwhile.
        for (conversation_id, turn), partial in list(self.streaming.copy().items())[-STREAM_LINES:]:
            conversation = self.conversations.get(conversation_id)
            label = conversation_label(conversation) if conversation else conversation_id
            text.append(f"{label} turn {turn + 1}: ", style="cyan")
            text.append(clean_text(partial[-400:])[-120:] + "\n")
        return text

    @work(thread=True, exclusive=True, group="run-evaluate", exit_on_error=False)
    def evaluate_worker(self, answers: dict[AnswerKey, Answer], raw: dict[AnswerKey, str]) -> None:
        try:
            evaluation = evaluate_all(
                self.plan.relations,
                self.plan.conversations,
                answers,
                model=self.plan.model_spec,
                raw_answers=raw,
            )
        except KontestError:
            return
        self.post_message(self.Evaluated(evaluation))

    @on(Evaluated)
    def evaluated(self, event: Evaluated) -> None:
        if not self.finished:
            self.show_evaluation(event.evaluation)

    def show_evaluation(self, evaluation: Any) -> None:
        self.query_one("#run-counts", ReportCounts).show_report(report_of(evaluation))
        log = self.query_one("#detected", RichLog)
        for verdict in verdicts_of(evaluation):
            if not verdict.error:
                continue
            key = (verdict.oracle, verdict.relation_id, verdict.template_id, verdict.refs)
            if key in self.known_errors:
                continue
            self.known_errors.add(key)
            log.write(self.render_verdict(verdict))

    def render_verdict(self, verdict: Verdict) -> Text:
        kg = self.plan.kg
        relation = next((r for r in self.plan.relations if r.id == verdict.relation_id), None)
        name = (
            f"{kg.label(relation.parent)} ⊃ {kg.label(relation.child)}"
            if relation
            else verdict.relation_id
        )
        text = Text(f"✗ {verdict.oracle} ", style="bold red")
        text.append(name)
        if verdict.template_id:
            text.append(f" ({verdict.template_id})", style="dim")
        text.append(" " + "/".join(answer.value for answer in verdict.answers))
        if verdict.oracle in KIND_ORACLES and verdict.detail:
            text.append(f": {clean_text(verdict.detail)[:80]}", style="dim")
        return text

    # -- controls --------------------------------------------------------------------------

    def action_toggle_pause(self) -> None:
        if self.finished:
            return
        if self.control.paused:
            self.control.resume()
            self.notify("Resumed", markup=False)
        else:
            self.control.pause()
            self.notify("Paused: answers in flight still arrive", markup=False)
        self.flush_updates()

    @property
    def running(self) -> bool:
        return not self.finished and not self.control.cancelled

    def action_cancel_run(self) -> None:
        if self.finished:
            self.app.pop_screen()
            return
        if self.control.cancelled:
            return
        self.app.push_screen(
            ConfirmScreen(
                f"Cancel the run? {self.answered}/{self.total} answers are in and stay "
                "stored; the rest can be asked later (Resume on the start screen).",
                yes="Cancel the run",
                no="Keep running",
            ),
            self.cancel_confirmed,
        )

    def cancel_confirmed(self, answer: bool | None) -> None:
        if answer and not self.finished:
            self.control.cancel()
            self.notify("Run cancelled; the answers so far are kept", markup=False)

    def action_open_results(self) -> None:
        if self.finished:
            self.open_results(self.result)

    def open_results(self, result: SessionResult) -> None:
        """The stored session's results, opened by id (a run that stored nothing has none)."""
        if result.session_id is None:
            self.notify("Nothing was stored: no results to show.", severity="warning", markup=False)
            return
        self.app.switch_screen_to_results(result.session_id, result)  # type: ignore[attr-defined]

    def describe_state(self) -> str:
        """One line: running / paused / cancelled / failed / finished, and the counts."""
        counts = f"{self.answered}/{self.total} answers"
        if self.failed_turns:
            counts += f" ({self.failed_turns} failed)"
        if not self.finished:
            state = "paused" if self.control.paused else "running"
            return f"{state}: {counts} · p pause/resume · escape cancel"
        if self.failed:
            return f"failed: {counts} · {self.failed}"
        state = "cancelled" if self.control.cancelled else "finished"
        return f"{state}: {counts} · enter for results · escape back"

    @on(RunFinished)
    def run_finished(self, event: RunFinished) -> None:
        self.query_one("#run-state", Static).update(self.describe_state())
        if self.auto_results and not event.cancelled:
            self.open_results(event.result)
