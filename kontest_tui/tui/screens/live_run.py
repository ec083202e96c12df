"""The live run: progress, running counts, the latest answers and errors, pause/cancel.

The run is the engine's (run.api.start_session / resume_session) in a worker thread with its
own event loop; it goes at engine speed whatever the screen does. Its answers feed the
engine's `run.live.LiveTally` in that thread (a few counters, the metamorphic tests of each
relation once its conversations are answered, bounded buffers of the latest answers and
errors). The screen never receives answers one by one: a timer redraws from a snapshot of
the tally at most REDRAWS_PER_S times a second, so a run of a million answers costs the
screen what a run of a hundred does. Ontological errors and the other kinds' verdicts need
every answer: they come with the engine's final evaluation, made in the run's thread, whose
report the counts show at the end. The results screen then opens on the session id and reads
the stored report.
"""

from __future__ import annotations

import asyncio
import time
from typing import cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, ProgressBar, Static

from kontest_tui.domain.answers import clean_text
from kontest_tui.report.words import conversation_name, oracle_name, verdict_brief
from kontest_tui.run.api import (
    LiveCounts,
    LiveTally,
    Progress,
    SessionSpec,
    WithheldKey,
    kontest_per_relation,
)
from kontest_tui.tui.run_control import RunControl, RunEnd, run_live
from kontest_tui.tui.screens.confirm import ConfirmScreen
from kontest_tui.tui.widgets.counts import ReportCounts, oracle_item, pack
from kontest_tui.tui.widgets.relation_tree import describe_answer
from kontest_tui.tui.widgets.templates_pane import render_delta
from kontest_tui.tui.workers import WorkerFailures

REDRAWS_PER_S = 10  # the progress, state line and counts
PANES_EVERY = 5  # the answers and errors panes: every 5th redraw (twice a second)
ANSWERS_SHOWN = 24
ORACLES_LIVE = ("atomic", "sequential_intra", "sequential_inter")


class LiveRunScreen(WorkerFailures, Screen[None]):
    """One session running: what the model is saying right now and what it got wrong so far.

    `spec`: a new session (a resolved spec from the wizard's `prepare`); `resume`: a stored
    session's id, whose missing turns are asked. The first line names the session once the
    engine has stored it.
    """

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
            "escape",
            "leave",
            "Back",
            id="run_back",
            tooltip="Back to the previous screen",
        ),
        Binding(
            "enter",
            "open_results",
            "Results",
            id="run_results",
            tooltip="Open the results of the answers so far",
        ),
    ]

    class SessionStarted(Message):
        """The engine stored the session (its id, name and a line naming it) and starts
        asking."""

        def __init__(self, session_id: str, name: str, title: str) -> None:
            super().__init__()
            self.session_id = session_id
            self.name = name
            self.title = title

    class ModelFailing(Message):
        """The executor's failing event: `turns` in a row failed (`error` the last), or, with
        0, the model answers again."""

        def __init__(self, turns: int, error: str) -> None:
            super().__init__()
            self.turns = turns
            self.error = error

    class RunNotice(Message):
        """The run's notice: one line to tell once (a base model asked in chat mode)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class KeyWithheld(Message):
        """Resuming: the API key is not sent to the session's stored URL."""

        def __init__(self, withheld: WithheldKey) -> None:
            super().__init__()
            self.withheld = withheld

    class RunEnded(Message):
        """The run's worker returned: how the run ended, with the engine's final report."""

        def __init__(self, end: RunEnd) -> None:
            super().__init__()
            self.end = end

    def __init__(
        self,
        spec: SessionSpec | None = None,
        *,
        resume: str | None = None,
        rerun: str | None = None,
        auto_results: bool = True,
        compare_with: str | None = None,
    ) -> None:
        super().__init__()
        self.compare_with = compare_with  # the results open on Compare with this session
        if [spec, resume, rerun].count(None) != 2:
            raise ValueError("a live run needs one of a spec, a session to resume or to rerun")
        self.spec = spec
        self.resume = resume
        self.rerun = rerun  # a session asked again: only what changed since (run.rerun)
        self.title_line = (
            f"resuming session {resume}…"
            if resume
            else f"asking session {rerun} again: what changed…"
            if rerun
            else "storing the session…"
        )
        self.auto_results = auto_results
        self.tally = LiveTally(kontest_per_relation(2), recent=ANSWERS_SHOWN)
        self.control = RunControl()
        self.session_id: str | None = resume
        self.end: RunEnd | None = None
        self.failed: str | None = None
        # (answers of this run, answers before it, the width wrapped to) drawn
        self.shown_counts = (-1, 0, 0)
        self.count_lines = 0  # lines of the running counts (a layout when they change)
        self.redraws = 0
        self.panes_answered = -1
        self.bar_step = -1
        self.started = time.monotonic()
        self.results_waiting = False  # finished under another screen: results on return
        self.active_s = 0.0  # seconds spent asking (pauses left out): the rate and the ETA
        self.ticked = time.monotonic()
        self.failing: tuple[int, str] | None = None  # paused because the model stopped answering
        self.run_name = ""  # `sim on places` (the line naming the session, its head)

    @property
    def finished(self) -> bool:
        """The run is over (done, cancelled or failed)."""
        return self.end is not None or self.failed is not None

    @property
    def running(self) -> bool:
        return not self.finished and not self.control.cancelled

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(self.title_line, id="run-title", classes="title", markup=False)
        # The ETA is the state line's: Textual's counts paused time and a resume's stored
        # answers as speed, so it would grow while paused.
        yield ProgressBar(id="run-progress", show_eta=False)
        yield Static("starting…", id="run-state", classes="hint", markup=False)
        yield ReportCounts("", id="run-counts", classes="counts")
        with Horizontal(id="run-body"):
            with Vertical(id="transcript"):
                yield Static("", id="streaming", classes="pane", markup=False)
                yield LivePane("", id="finished-log", classes="pane", markup=False)
            yield LivePane("", id="detected", classes="pane", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#streaming", Static).border_title = "streaming"
        self.query_one("#finished-log").border_title = "answers (newest first)"
        self.query_one("#detected").border_title = "errors (newest first)"
        self.set_interval(1 / REDRAWS_PER_S, self.redraw)
        self.run_worker_task(getattr(self.app, "db_path", None))

    def on_unmount(self) -> None:
        """Leaving the screen (the explorer quitting, its terminal gone) stops the run at
        once: the answers so far stay stored, the session resumable."""
        if not self.finished:
            self.control.abort()
            from kontest_tui.tui.app import KontestApp

            cast(KontestApp, self.app).aborted_runs.append(self.control)

    # -- the run ---------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def run_worker_task(self, db: str | None) -> None:
        """The whole run in this thread's own event loop, so model I/O, the store's commits
        and the final evaluation never wait on the UI and the UI never waits on them."""
        end = asyncio.run(
            run_live(
                self.spec,
                self.tally,
                self.control,
                resume=self.resume,
                rerun=self.rerun,
                db=db,
                on_started=self.announce_start,
                on_failing=self.announce_failing,
                on_notice=self.announce_notice,
                on_key_withheld=self.announce_withheld_key,
            )
        )
        # A failure (KontestError or not) goes to `worker_failed` through the one handler.
        self.post_message(self.RunEnded(end))

    def announce_start(self, session_id: str, name: str, title: str) -> None:
        """In the run's thread: the engine stored the session."""
        self.post_message(self.SessionStarted(session_id, name, title))

    def announce_withheld_key(self, withheld: WithheldKey) -> None:
        """In the run's thread, before a resume asks: the key is not sent to its URL."""
        self.post_message(self.KeyWithheld(withheld))

    def announce_notice(self, text: str) -> None:
        """In the run's thread: a line to tell once (a base model asked in chat mode)."""
        self.post_message(self.RunNotice(text))

    def announce_failing(self, turns: int, error: str) -> None:
        """In the run's thread: the model stopped answering (or answers again)."""
        self.post_message(self.ModelFailing(turns, error))

    @on(RunNotice)
    def run_notice(self, event: RunNotice) -> None:
        self.notify(event.text, title="Check the model", severity="warning", markup=False)

    @on(ModelFailing)
    def model_failing(self, event: ModelFailing) -> None:
        """Turns failing in a row: pause (calls in flight still end) and say why; `p` asks
        again once the model is back, escape cancels (a dead server would otherwise fail
        every turn left, silently)."""
        if self.finished or self.control.cancelled:
            return
        if event.turns == 0:
            if self.failing is None:
                self.notify("The model answers again.", markup=False)
            return
        self.failing = (event.turns, clean_text(event.error)[:200])
        if not self.control.paused:
            self.control.pause()
        self.notify(
            f"The model stopped answering: {event.turns} turns in a row failed "
            f"({self.failing[1]}). The run is paused: p asks again once the model is back, "
            "escape cancels (the answers so far stay stored).",
            title="Model not answering",
            severity="warning",
            markup=False,
            timeout=15,
        )
        self.refresh_bindings()
        self.redraw()

    @on(KeyWithheld)
    def key_withheld(self, event: KeyWithheld) -> None:
        withheld = event.withheld
        self.notify(
            f"{withheld.key_name} is not sent to {', '.join(withheld.hosts)}, the session's "
            f"stored URL (the key is for {withheld.key_host}): its answers may fail as "
            f"unauthorized. To send it there, set {withheld.url_setting} to that URL and resume "
            "again.",
            title="API key withheld",
            severity="warning",
            markup=False,
            timeout=15,
        )

    @on(SessionStarted)
    def session_started(self, event: SessionStarted) -> None:
        self.session_id = event.session_id
        self.run_name = event.name
        self.query_one("#run-title", Static).update(event.title)

    @on(RunEnded)
    def run_ended(self, event: RunEnded) -> None:
        self.end = event.end
        self.session_id = event.end.session_id
        self.stop_clock()
        self.redraw()
        self.query_one("#run-counts", ReportCounts).show_report(event.end.report)
        if event.end.delta is not None:
            # Asked again: what changed is this run's result, shown here at once; enter
            # opens the results (their Templates tab shows it too).
            log = self.query_one("#finished-log", LivePane)
            log.border_title = f"what changed since session {event.end.delta['before']}"
            log.update(render_delta(event.end.delta))
            self.query_one("#detected").display = False  # the delta takes the width
            errors = event.end.delta["errors"]
            self.notify(
                f"Asked again: {errors['gone']} errors gone, {errors['new']} new; enter opens "
                "the results",
                title="What changed",
                markup=False,
                timeout=10,
            )
            return
        if self.auto_results and event.end.status != "cancelled":
            if self.app.screen is self:
                self.action_open_results()
            else:
                # A screen the user opened meanwhile (a new wizard, the help) stays on top,
                # with what was typed in it; the results open when this screen is back.
                self.results_waiting = True
                self.notify(
                    f"The run of {self.describe_run()} finished; its results open when you go "
                    "back to its live screen.",
                    title="Run finished",
                    markup=False,
                    timeout=10,
                )

    def on_screen_resume(self) -> None:
        """Back on the live screen after its run finished under another one: its results."""
        if self.results_waiting and self.end is not None:
            self.results_waiting = False
            self.call_after_refresh(self.action_open_results)

    def describe_run(self) -> str:
        """`sim on places` once the session is stored, else `the session`."""
        return self.run_name or "the session"

    def worker_failed(self, group: str, error: BaseException) -> None:
        """The run failed (already notified): it stops, the answers so far stay."""
        if group == "run":
            self.failed = str(error) or type(error).__name__
            self.stop_clock()
            self.redraw()

    def stop_clock(self) -> None:
        """The run is over: no ETA counting on, the footer offers what is left to do."""
        self.tick()
        self.refresh_bindings()

    def tick(self) -> None:
        """Count the time since the last tick as asking time unless paused or over."""
        now = time.monotonic()
        if self.running and not self.control.paused:
            self.active_s += now - self.ticked
        self.ticked = now

    # -- drawing ---------------------------------------------------------------------------

    def progress(self) -> Progress | None:
        executor = self.control.executor
        return executor.progress if executor is not None else None

    def redraw(self) -> None:
        """Draw from a snapshot of the tally (at most REDRAWS_PER_S times a second)."""
        self.tick()
        counts = self.tally.snapshot()
        progress = self.progress()
        if progress is not None and progress.total:
            done = progress.done + progress.skipped
            step = max(1, progress.total // 200)  # the bar moves in steps of 0.5%
            if done // step != self.bar_step or done == progress.total:
                self.bar_step = done // step
                self.query_one("#run-progress", ProgressBar).update(
                    total=progress.total, progress=done
                )
        # Fixed sizes: a new text is drawn without laying the screen out again.
        self.query_one("#run-state", Static).update(
            self.describe_state(counts, progress), layout=False
        )
        streaming = self.query_one("#streaming", Static)
        if streaming.display != bool(counts.streaming):  # (a model answering at once: never)
            streaming.display = bool(counts.streaming)
        if counts.streaming or self.finished:
            streaming.update(self.render_streaming(counts))
        before = progress.skipped if progress is not None else 0
        box = self.query_one("#run-counts", ReportCounts)
        width = box.content_size.width
        if (counts.answered, before, width) != self.shown_counts and self.end is None:
            self.shown_counts = (counts.answered, before, width)
            lines = render_live_counts(counts, before=before, width=width or None)
            box.update(lines, layout=len(lines.plain.splitlines()) != self.count_lines)
            self.count_lines = len(lines.plain.splitlines())
        # The panes' wrapped text is most of a redraw's cost: drawn twice a second.
        self.redraws += 1
        if counts.answered == self.panes_answered:
            return
        if self.redraws % PANES_EVERY and not self.finished and self.panes_answered >= 0:
            return  # (the first redraw draws them: "(none so far)" from the start)
        self.panes_answered = counts.answered
        self.query_one("#finished-log", Static).update(render_answers(counts), layout=False)
        self.query_one("#detected", Static).update(render_errors(counts), layout=False)

    def render_streaming(self, counts: LiveCounts) -> Text:
        if not counts.streaming:
            return Text("(waiting for the model)" if not self.finished else "(done)", style="dim")
        text = Text()
        for conversation, turn, partial in counts.streaming:
            text.append(f"{conversation_name(conversation)}, question {turn + 1}: ", style="cyan")
            text.append(clean_text(partial)[-120:] + "\n")
        return text

    def describe_state(self, counts: LiveCounts, progress: Progress | None) -> str:
        """One line: running / paused / cancelled / failed / finished, the answers stored of
        all (a resume's earlier ones included), and while asking the answers per second
        and the time left, both over the time spent asking (pauses left out)."""
        done = progress.done + progress.skipped if progress is not None else counts.answered
        total = progress.total if progress is not None else 0
        line = f"{done}/{total} answers" if total else f"{done} answers"
        if counts.failed:
            line += f" ({counts.failed} failed)"
        if self.failed is not None:
            return f"failed: {line} · {self.failed} · escape back"
        if self.end is not None:
            state = {"done": "finished", "cancelled": "cancelled"}.get(self.end.status, "failed")
            return f"{state}: {line} · enter for results · escape back"
        if self.control.cancelled:
            return f"cancelling: {line} · evaluating the answers so far…"
        if self.control.paused:
            why = ", the model not answering" if self.failing is not None else ""
            return f"paused{why}: {line} · p resume · escape cancel"
        rate = counts.answered / self.active_s if self.active_s > 1 else 0.0
        if counts.answered and rate:
            line += f" · {rate:,.0f} answers/s"
            if total > done:
                line += f" · {format_duration((total - done) / rate)} left"
        return f"running: {line} · p pause · escape cancel"

    # -- controls --------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While running: pause and cancel; once over: results (when stored) and back."""
        if action in ("toggle_pause", "cancel_run"):
            return not self.finished and not self.control.cancelled
        if action == "leave":
            return self.finished
        if action == "open_results":
            return self.end is not None
        return True

    def action_toggle_pause(self) -> None:
        if self.finished:
            return
        self.tick()
        if self.control.paused:
            self.control.resume()
            self.failing = None
            self.notify("Resumed", markup=False)
        else:
            self.control.pause()
            self.notify("Paused: answers in flight still arrive", markup=False)
        self.redraw()

    def action_cancel_run(self) -> None:
        if self.finished or self.control.cancelled:
            return
        progress = self.progress()
        so_far = f"{progress.done + progress.skipped}/{progress.total}" if progress else "The"
        self.app.push_screen(
            ConfirmScreen(
                f"Cancel the run? {so_far} answers are in and stay "
                "stored; the rest can be asked later (Resume on the start screen).",
                yes="Cancel the run",
                no="Keep running",
            ),
            self.cancel_confirmed,
        )

    def cancel_confirmed(self, answer: bool | None) -> None:
        if answer and not self.finished:
            self.control.cancel()
            self.refresh_bindings()
            self.notify("Run cancelled; the answers so far are kept", markup=False)

    def action_leave(self) -> None:
        if self.finished:
            self.app.pop_screen()

    def action_open_results(self) -> None:
        if self.end is not None:
            from kontest_tui.tui.app import KontestApp

            cast(KontestApp, self.app).open_results(
                self.end.session_id,
                replace=True,
                compare_with=self.compare_with,
                # a session asked again: its Templates tab says what changed
                tab="tab-templates" if self.rerun else None,
            )


class LivePane(Static, can_focus=True):
    """A pane of the latest answers or errors: a fixed size whatever its text (no layout
    on a redraw; the newest first, what does not fit is cut at the bottom)."""


def render_live_counts(counts: LiveCounts, before: int = 0, width: int | None = None) -> Text:
    """`relations judged 63 · answers 400 · valid …`, then `two phrasings alone 7/57  …`
    from the tally, wrapped between items to `width` (never inside one); the ontological
    and other kinds' oracles come with the final evaluation, which a last item says. The
    tally counts this run's answers: a resumed session's `before` stored ones are named
    beside them."""
    if not counts.answered:
        if before:
            return Text(f"No answers yet in this run ({before} stored before).", style="italic")
        return Text("No answers yet.", style="italic")
    first = Text()
    if before:
        first.append(f"this run ({before} answers stored before): ", style="dim")
    first.append(f"relations judged {counts.relations}", style="bold")
    answers = [
        first,
        Text(f"answers {counts.answered}"),
        Text(f"valid {counts.valid}"),
        Text(f"invalid {counts.invalid}"),
    ]
    if counts.cut:
        answers.append(Text(f"cut {counts.cut}"))
    if counts.failed:
        answers.append(Text(f"failed {counts.failed}", style="bold red"))
    tests = [oracle_item(oracle, counts.errors, counts.tests) for oracle in ORACLES_LIVE]
    tests.append(Text(f"{oracle_name('ontological')} and other kinds: at the end", style="dim"))
    return pack([(" · ", answers), ("  ", tests)], width)


def render_answers(counts: LiveCounts) -> Text:
    """The latest answers, newest first: label, question, the reply and what it was read as."""
    text = Text()
    for live in reversed(counts.recent):
        conversation, response = live.conversation, live.response
        word, style = describe_answer(conversation, response.answer)
        text.append(f"{word:>5} ", style=style)
        text.append(f"{conversation_name(conversation)}: ", style="cyan")
        if conversation.turns:
            text.append(clean_text(conversation.turns[response.turn].text)[:200])
        reply = clean_text(response.raw[:400]).strip()[:160] or "(empty)"
        text.append(f" · {reply}", style="italic")
        if response.error:
            text.append(f" ({clean_text(response.error)[:160]})", style="red")
        text.append("\n")
    return text


def render_errors(counts: LiveCounts) -> Text:
    """The latest metamorphic errors, newest first."""
    if not counts.recent_errors:
        return Text("(none so far)", style="dim")
    text = Text()
    for live in reversed(counts.recent_errors):
        verdict = live.verdict
        text.append(f"✗ {oracle_name(verdict.oracle)}: ", style="bold red")
        text.append(clean_text(live.question)[:200])
        text.append(f" · {verdict_brief(verdict)}\n", style="dim")
    return text


def format_duration(seconds: float) -> str:
    """`0:03:12` (hours, minutes, seconds)."""
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
