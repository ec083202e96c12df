"""`kontest run`: ask a model every conversation of a KG, or go on with a stored session.

A thin parser over the session API (`run.api`): the options become typed records
(cli.run_options), a new session is `prepare`d and started with `start_session`, a stored
one resumed with `resume_session`; batch mode is `batch_phase`. A run shows a one-line progress
bar on stderr and prints the text report at the end; Ctrl-C (or SIGTERM, SIGHUP) leaves the
store consistent and exits 130 (143, 129).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import click

from kontest_tui.cli.db import db_arg, open_store, resume_command
from kontest_tui.cli.option_groups import grouped
from kontest_tui.cli.output import echo_out
from kontest_tui.cli.run_options import ResumeChoice, RunRequest, run_options
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.templates import TemplateSet, load_template_set
from kontest_tui.run.api import (
    ExecutorEvents,
    Progress,
    SessionOutcome,
    SessionSpec,
    add_template,
    failed_message,
    prepare,
    resume_session,
    session_report,
    start_session,
)
from kontest_tui.safe_text import escape_unsafe
from kontest_tui.store.database import Store

Going = Callable[[], Coroutine[Any, Any, SessionOutcome]]
LACKING_SHOWN = 10  # lines a replay's recording lacks, shown after its failed turns
EXIT_CODES = {"interrupted": 130, "terminated": 143, "hung up": 129}

# -- progress bar ----------------------------------------------------------------------------


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def format_progress(progress: Progress, width: int = 20) -> str:
    """One line: bar, done/total, errors by type, invalid, retries, rate, ETA."""
    total = max(progress.total, 1)
    filled = int(width * progress.finished / total)
    errors = " ".join(f"{name}x{count}" for name, count in sorted(progress.errors.items()))
    parts = [
        f"[{'#' * filled}{'.' * (width - filled)}] {progress.finished}/{progress.total}",
        f"errors {errors or '0'}",
        f"invalid {progress.invalid}",
        f"retries {progress.retries}",
    ]
    if progress.cached:
        parts.append(f"cached {progress.cached}")
    parts.append(f"{progress.rate:.1f}/s")
    parts.append(f"ETA {_clock(progress.eta)}")
    return " | ".join(parts)


class ProgressLine:
    """Redraws the progress line on a terminal (at most 10 times a second); elsewhere prints
    a line at every tenth of the work."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last = 0.0
        self._step = -1
        self._width = 0

    def update(self, progress: Progress) -> None:
        now = time.monotonic()
        if self.tty:
            if now - self._last < 0.1 and progress.finished < progress.total:
                return
            self._last = now
            line = format_progress(progress)
            self.stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
            self.stream.flush()
            return
        step = progress.finished * 10 // max(progress.total, 1)
        if step != self._step:
            self._step = step
            self.stream.write(format_progress(progress) + "\n")
            self.stream.flush()

    def close(self) -> None:
        """End the line being redrawn (a message then prints on a line of its own)."""
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


# -- kontest run -----------------------------------------------------------------------------


REPLAY_HELP = """\b
Replay file (--model replay:FILE.jsonl): one JSON object a line, each answering
one turn, matched on the user turns so far (its kind's lines first):
  {"kind": "atomic", "messages": ["Does Ireland have a Kinawley?"],
   "answer": "No."}
  {"kind": "sequential", "messages": ["Q1", "Q2"], "answer": "Yes"}
     (the answer to Q2 asked after Q1)
  {"query": "Is there a Kinawley in Ireland?", "answer": "Yes"}
     (one turn, any kind)
  {"kind": "atomic", "messages": ["Q"], "answer": "", "error": "timeout"}
     (a turn that failed: replayed, it fails again)
A question recorded several times answers in file order. A turn with no
unused line fails ("not in the recording"); it is never answered from another
line. `kontest export --format jsonl` writes such a file.
"""


@click.command("run", epilog=REPLAY_HELP)
@run_options
@click.pass_context
@grouped(request=RunRequest)
def run_command(ctx: click.Context, db: str | None, quiet: bool, request: RunRequest) -> None:
    """Ask a model every conversation of a KG (or resume a session) and print the report."""
    request.check()
    store = open_store(ctx, db)
    try:
        CommandRun(ctx, db_arg(ctx, db), store, None if quiet else ProgressLine()).go(request)
    finally:
        store.close_after(failed=sys.exc_info()[0] is not None)


class CommandRun:
    """One `kontest run`: the session it starts or resumes, told on stderr as it goes."""

    def __init__(
        self, ctx: click.Context, db: str | None, store: Store, bar: ProgressLine | None
    ) -> None:
        self.ctx, self.db, self.store, self.bar = ctx, db, store, bar
        self.events = ExecutorEvents(
            on_progress=bar.update if bar is not None else None,
            on_failing=self.failing,
            on_notice=self.notice,
        )
        self.session_id: str | None = None  # once the session is stored
        self.confirm = False  # ask the errors again at the end (--confirm)
        self.stopped_by = "interrupted"  # what cancelled the run (a signal renames it)

    def go(self, request: RunRequest) -> None:
        """Start or resume the session (or do one step of batch mode) and print its report."""
        self.confirm = request.confirm
        resume = request.resume
        if resume.add_template_id is not None:
            if not resume.resume:
                raise InvalidInputError("--add-template needs --resume SESSION (the session's id)")
            _add_template(self.store, resume.resume, resume.add_template_id, request)
        if resume.resume is not None:
            going = self.resumed(request, resume)
        else:
            going = self.started(request)
        if going is not None:
            self.finish(self.run(going))

    def resumed(self, request: RunRequest, resume: ResumeChoice) -> Going | None:
        """Going on with a stored session (None: a batch step, already done)."""
        store, wanted = self.store, resume.resume or None
        if resume.batching:
            session_id = store.sessions.resolve(wanted, unfinished=True)
            self.batch_phase(session_id, resume.batch_in, resume.batch_out)
            return None
        model = request.model.model_spec
        if model is None:  # the session's stored URL: is the key sent there?
            from kontest_tui.run.api import withheld_key

            stored = store.sessions.get(
                store.sessions.resolve(wanted, unfinished=not resume.retry_errors)
            )["model"]
            note = withheld_key(stored)
            if note is not None:
                click.echo(f"kontest: note: {note}", err=True)
        return lambda: resume_session(
            store,
            wanted,
            model=model,
            retry_errors=resume.retry_errors,
            config=request.executor.config(request.seed),
            events=self.events,
            on_created=self.created,
        )

    def started(self, request: RunRequest) -> Going | None:
        """A new session (None: batch mode, its requests written)."""
        spec = self.prepared(request)
        if request.resume.batching:
            from kontest_tui.run.api import create_batch_session

            created = create_batch_session(self.store, spec)  # a batch engine's model, or none
            self.announce(created)
            self.batch_phase(created, None, request.resume.batch_out)
            return None
        return lambda: start_session(self.store, spec, events=self.events, on_created=self.created)

    def prepared(self, request: RunRequest) -> SessionSpec:
        """The new session's spec through the explorer's door: resolve (load, scope, read the
        questions file) and check; the first problem is the one line a bad input gets."""
        preparation = prepare(request.session_spec(), detail=False)
        for problem in preparation.spec.problems:  # lines the questions file skipped
            click.echo(f"kontest: skipped {problem}", err=True)
        if preparation.problems:
            preparation.problems[0].raise_error()
        template_set = preparation.spec.template_set
        assert isinstance(template_set, TemplateSet)
        return replace(
            preparation.spec, options=request.model.chat_options(template_set.temperature)
        )

    def created(self, session_id: str) -> None:
        """The session API's on_created: keep the id (for the interrupt message), name it."""
        self.session_id = session_id
        self.announce(session_id)

    def failing(self, turns: int, error: str) -> None:
        """The executor's on_failing: one line when the model stops answering (turns in a
        row failed after their retries), one when it answers again."""
        self._close_bar()
        if not turns:
            click.echo("kontest: note: the model answers again", err=True)
            return
        resume = (
            resume_command(self.session_id, self.db) if self.session_id is not None else "--resume"
        )
        click.echo(
            f"kontest: warning: the model stopped answering: {turns} turns in a row failed "
            f"({error}); still asking (ctrl-c stops; {resume} asks the failed turns again)",
            err=True,
        )

    def notice(self, message: str) -> None:
        """The run's on_notice: one line, once (e.g. a base model asked in chat mode)."""
        self._close_bar()
        click.echo(f"kontest: warning: {message}", err=True)

    def announce(self, session_id: str) -> None:
        model = self.store.sessions.get(session_id)["model"]
        click.echo(f"session {session_id}: model {model}", err=True)

    def run(self, going: Going) -> SessionOutcome:
        """Run the session; an interrupt says how to resume and exits 130 (143, 129)."""
        try:
            return asyncio.run(self._cancellable(going))
        except (KeyboardInterrupt, asyncio.CancelledError):
            self._close_bar()
            what = self.stopped_by
            if self.session_id is not None:
                click.echo(
                    f"kontest: {what}; resume with {resume_command(self.session_id, self.db)}",
                    err=True,
                )
            else:
                click.echo(f"kontest: {what} before the session started", err=True)
            self.ctx.exit(EXIT_CODES.get(what, 130))

    async def _cancellable(self, going: Going) -> SessionOutcome:
        """Start or resume the session (the API checks the model first, one line on failure,
        before any session is stored), SIGTERM cancelling it as Ctrl-C does."""
        self._cancel_on_signals()
        return await going()

    def _cancel_on_signals(self) -> None:
        """SIGTERM, and SIGHUP (the terminal or SSH session gone), stop the run as Ctrl-C does
        (the session is marked cancelled, its lease given back, the answers so far stay
        stored); `stopped_by` records which for the message and the exit code."""
        task = asyncio.current_task()
        if task is None:
            return

        def stop(what: str) -> None:
            self.stopped_by = what
            task.cancel()

        loop = asyncio.get_running_loop()
        for number, what in ((signal.SIGTERM, "terminated"), (signal.SIGHUP, "hung up")):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError, AttributeError):
                loop.add_signal_handler(number, stop, what)

    def _close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def finish(self, outcome: SessionOutcome) -> None:
        """The session's one-line outcome and its text report; exit 1 when turns failed."""
        from kontest_tui.report.explain_store import render_named_report

        session_id = self.session_id
        assert session_id is not None  # the session API stored it before running
        self._close_bar()
        progress = outcome.result.progress
        click.echo(
            f"session {session_id} {outcome.status}: {progress.finished}/{progress.total} turns, "
            f"{progress.failed} failed, {progress.retries} retries",
            err=True,
        )
        if self.confirm:
            self.confirm_errors(session_id)
        shown = (  # a streamed run's verdicts are in the store, not in its outcome
            session_report(self.store, session_id)
            if outcome.evaluation.streamed
            else outcome.evaluation
        )
        echo_out(render_named_report(self.store, session_id, shown), nl=False)
        failed = outcome.evaluation.failed
        from kontest_tui.run.api import recording_of

        recording = recording_of(str(self.store.sessions.get(session_id)["model"]))
        if failed and recording is not None:
            self.exit_replay_failed(session_id, recording, failed)
        self.exit_if_failed(failed, f"ask them again with: {resume_command(session_id, self.db)}")

    def confirm_errors(self, session_id: str) -> None:
        """--confirm: the run's errors asked again (run.confirm), one line on stderr; the
        report printed next shows each one's status."""
        from kontest_tui.report.confirmation import summary_line
        from kontest_tui.run.api import confirm_errors

        if not self.store.verdicts.count_errors(session_id):
            click.echo(f"session {session_id}: no errors to confirm", err=True)
            return
        click.echo(f"session {session_id}: asking its errors again", err=True)
        events = ExecutorEvents(on_progress=self.bar.update if self.bar is not None else None)
        outcome = asyncio.run(confirm_errors(self.store, session_id, events=events))
        self._close_bar()
        line = summary_line(outcome.confirmations, outcome.calls, outcome.seconds, outcome.draws)
        click.echo(f"session {session_id}: {line[0].lower()}{line[1:]}", err=True)

    def exit_replay_failed(self, session_id: str, path: Path, failed: int) -> None:
        """A replay's failed turns: a resume would fail them the same way, so say which
        lines the recording lacks (JSON lines to add an "answer" to) and which turns it
        holds as failed, then exit 1."""
        from kontest_tui.errors import KontestError
        from kontest_tui.run.api import replay_failures_of

        try:
            found = replay_failures_of(self.store, session_id, path)
        except KontestError as error:
            click.echo(f"kontest: error: {failed_message(failed)} (no answer); {error}", err=True)
            self.ctx.exit(1)
        if found.lacking:  # the lines first: the error stays the last line
            shown = found.lacking[:LACKING_SHOWN]
            more = (
                f"; the first {len(shown)} of {len(found.lacking)}"
                if found.lacking[len(shown) :]
                else ""
            )
            click.echo(
                f'kontest: the lines {path} lacks{more} (add each with its "answer", then '
                f"{resume_command(session_id, self.db)} asks those turns):",
                err=True,
            )
            for line in shown:
                click.echo(escape_unsafe(json.dumps(line, ensure_ascii=False)), err=True)
        parts = []
        if found.lacking:
            parts.append(f"{path} has no line for {len(found.lacking)} of their questions")
        if found.recorded:
            parts.append(f"{found.recorded} failed in the recording too (its lines with an error)")
        if found.other:
            parts.append(f"{found.other} failed otherwise")
        click.echo(
            f"kontest: error: {failed_message(failed)} (no answer): {'; '.join(parts)}; "
            "a resume with the same file fails them the same way",
            err=True,
        )
        self.ctx.exit(1)

    def batch_phase(self, session_id: str, batch_in: str | None, batch_out: str | None) -> None:
        """One step of batch mode (run.api.batch_phase), told on stderr; the report at the
        end."""
        from kontest_tui.run.api import batch_phase

        phase = batch_phase(
            self.store,
            session_id,
            Path(batch_in) if batch_in is not None else None,
            Path(batch_out) if batch_out is not None else None,
        )
        resume = resume_command(session_id, self.db)
        if phase.ingested is not None:
            ingested = phase.ingested
            ignored = (
                f" ({ingested.ignored} lines for no pending turn ignored)"
                if ingested.ignored
                else ""
            )
            click.echo(
                f"session {session_id}: stored {ingested.answered} answers and "
                f"{ingested.failed} failed turns from {batch_in}{ignored}",
                err=True,
            )
        if phase.written is not None:
            click.echo(
                f"session {session_id}: wrote {phase.requests} requests ({phase.turns} turns) "
                f"to {phase.written}; run them on a batch engine, then: {resume} --batch-in "
                "RESULTS.jsonl",
                err=True,
            )
            if phase.note is not None:
                click.echo(f"kontest: note: {phase.note}", err=True)
            return
        assert phase.evaluation is not None
        from kontest_tui.report.explain_store import render_named_report

        failed = phase.evaluation.failed
        click.echo(f"session {session_id} {'failed' if failed else 'done'}", err=True)
        echo_out(render_named_report(self.store, session_id, phase.evaluation), nl=False)
        self.exit_if_failed(failed, f"request them again with: {resume} --batch-out DIR")

    def exit_if_failed(self, failed: int, again: str) -> None:
        """Turns with no answer: one error line saying how to ask them again, exit 1."""
        if failed:
            click.echo(f"kontest: error: {failed_message(failed)} (no answer); {again}", err=True)
            self.ctx.exit(1)


def _add_template(store: Store, session_id: str, template_id: str, request: RunRequest) -> None:
    """Store one more template's questions in a session (run.api.add_template); the resume
    that follows asks them."""
    session = store.sessions.get(store.sessions.resolve(session_id))
    domain = str(session["templates_json"].get("domain") or "")
    # default: the session's own set (paper or natural) as it is now, your copy if you saved one
    chosen = request.graph.templates or str(session["templates_json"].get("name") or domain)
    template = load_template_set(chosen, domain).get(template_id)
    add_template(store, session["id"], template)
