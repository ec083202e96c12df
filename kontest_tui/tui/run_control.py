"""Running a session from the explorer: pause / resume / cancel / abort from the UI thread,
the run itself through the engine's session API (run.api), and asking one extra template.

Runs happen in the event loop of a worker thread; nothing here touches a widget.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kontest_tui.errors import KontestError
from kontest_tui.generate.templates import Template
from kontest_tui.run.api import (
    DeltaJSON,
    Executor,
    ExecutorEvents,
    LiveTally,
    ReportJSON,
    SessionSpec,
    WithheldKey,
    extend_session,
    kontest_per_relation,
    mark_interrupted,
    rerun_session,
    resume_session,
    session_delta,
    start_session,
    withheld_key_of,
)
from kontest_tui.tui.sessions import open_store


class RunControl:
    """Pause / resume / cancel / abort for a run that executes in another thread's loop.

    The executor and the run's task are attached from the run thread; every control call is
    handed to that loop with `call_soon_threadsafe`, so the UI thread never touches them.
    `cancel` stops asking and lets the engine evaluate the answers so far; `abort` (the
    explorer quitting, its terminal gone) cancels the run's task: the answers so far stay
    stored and the session is marked cancelled at once, without evaluating. A run that has
    every answer already (it is evaluating and storing) is not cancelled by `abort`: it is
    `finishing`, and the closing explorer waits for it (tui.app, FINISH_GRACE_S), so a
    session answered to the end is stored evaluated and done.
    """

    def __init__(self) -> None:
        self.executor: Executor | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[object] | None = None
        self._paused = False
        self._cancelled = False
        self._aborted = False
        self._over = False  # the run ended: controls on their way do nothing
        self.session_id: str | None = None  # once stored (set from the run's thread)
        self._lock = threading.Lock()

    def attach(self, executor: Executor) -> None:
        """Called in the run's loop before it starts."""
        with self._lock:
            self.executor = executor
            self.loop = asyncio.get_running_loop()
            if self._paused:
                executor.pause()
            if self._cancelled:
                executor.cancel()

    def attach_task(self) -> None:
        """Called in the run's task when it starts (what `abort` cancels)."""
        with self._lock:
            self.loop = asyncio.get_running_loop()
            self.task = asyncio.current_task()
            if self._aborted and self.task is not None:
                self.task.cancel()

    def detach(self) -> None:
        """Called in the run's loop when the run is over (before its store closes): a pause
        or resume still on its way to the loop does nothing (the executor stays, its
        progress read by the live screen)."""
        with self._lock:
            self._over = True

    def _forward(self, method: str) -> None:
        with self._lock:
            executor, loop = self.executor, self.loop
            if executor is not None and loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self._call, executor, method)

    def _call(self, executor: Executor, method: str) -> None:
        """In the run's loop: `executor.method()` unless the run ended meanwhile."""
        if not self._over:
            getattr(executor, method)()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def cancelled(self) -> bool:
        return self._cancelled or self._aborted

    def pause(self) -> None:
        self._paused = True
        self._forward("pause")

    def resume(self) -> None:
        self._paused = False
        self._forward("resume")

    def cancel(self) -> None:
        self._cancelled = True
        self._forward("cancel")

    @property
    def cut_off(self) -> str | None:
        """The session of a run aborted before it could wind down (still going), or None."""
        with self._lock:
            return self.session_id if self._aborted and not self._over else None

    @property
    def asked_all(self) -> bool:
        """Every turn of the run has its answer (none failed): what is left is evaluating
        and storing."""
        executor = self.executor
        if executor is None:
            return False
        progress = executor.progress
        return progress.total > 0 and progress.finished >= progress.total and not progress.failed

    @property
    def finishing(self) -> bool:
        """Aborted with every answer in: left to evaluate and store (see `abort`)."""
        with self._lock:
            return self._aborted and not self._over and self.asked_all

    def abort(self) -> None:
        """Stop the run now, unless it has every answer (see the class docstring)."""
        with self._lock:
            self._aborted = True
            if self.asked_all:
                return  # evaluating and storing: cut now, it would be left unevaluated
            task, loop = self.task, self.loop
            if task is not None and loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(task.cancel)


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a run ended: its session, status (done | cancelled | failed) and report; for a
    session asked again, what changed against the session it was asked from."""

    session_id: str
    status: str
    report: ReportJSON
    delta: DeltaJSON | None = None


async def run_live(
    spec: SessionSpec | None,
    tally: LiveTally,
    control: RunControl,
    *,
    resume: str | None = None,
    rerun: str | None = None,
    db: str | Path | None = None,
    on_started: Callable[[str, str, str], None] | None = None,
    on_failing: Callable[[int, str], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    on_key_withheld: Callable[[WithheldKey], None] | None = None,
) -> RunEnd:
    """Run a new session (`spec`), go on with a stored one (`resume`) or ask a stored one
    again, only what changed since (`rerun`: run.api.rerun_session) through run.api,
    feeding `tally`; call it in the loop of a worker thread. `on_started` gets the session's
    id, its name (`sim on places`) and a line naming it before the first question. The
    report is the engine's final evaluation, made in this thread. `on_failing` is the
    executor's event for turns failing in a row (the model looks unreachable, or answers
    again); `on_notice` a line to tell once (a base model asked in chat mode);
    `on_key_withheld` hears, before a resume, that the API key is not sent to the
    session's stored URL."""
    control.attach_task()
    control.session_id = resume
    store = open_store(db)
    if resume is not None and on_key_withheld is not None:
        withheld = withheld_key_of(store, resume)
        if withheld is not None:
            on_key_withheld(withheld)

    def created(session_id: str) -> None:
        control.session_id = session_id
        row = store.sessions.get(session_id)
        tally.per_relation = kontest_per_relation(len(row.get("template_ids") or ()))
        if on_started is not None:
            header = store.sessions.header(session_id)
            name = f"{row['model']} on {header.kg_title or header.kg_name}"
            on_started(
                session_id,
                name,
                f"{name}: {row['relations']:,} relations, "
                f"{row['conversations']:,} conversations, {row['planned']:,} model calls",
            )

    try:
        events = tally.events(ExecutorEvents(on_failing=on_failing, on_notice=on_notice))
        if resume is not None:
            outcome = await resume_session(
                store, resume, events=events, on_created=created, on_executor=control.attach
            )
        elif rerun is not None:
            outcome = await rerun_session(
                store, rerun, events=events, on_created=created, on_executor=control.attach
            )
        else:
            assert spec is not None
            outcome = await start_session(
                store, spec, events=events, on_created=created, on_executor=control.attach
            )
        delta = None
        if rerun is not None and outcome.status != "cancelled":
            # What changed, read here in the run's thread: shown the moment the run ends.
            with contextlib.suppress(KontestError):
                delta = session_delta(store, outcome.session_id).to_json()
    finally:
        control.detach()
        store.close()
    tally.finish()
    return RunEnd(outcome.session_id, outcome.status, outcome.evaluation.to_json(), delta)


async def ask_extra_template(
    session_id: str, template: Template, db: str | Path | None
) -> ReportJSON:
    """Ask `template`'s atomic questions in the stored session (run.api.extend_session: the
    answers are stored, its report, gap and ensemble include them); its new report."""
    store = open_store(db)
    try:
        outcome = await extend_session(store, session_id, template)
    finally:
        store.close()
    return outcome.evaluation.to_json()


def leave_cancelled(controls: Sequence[RunControl], db: str | Path | None) -> None:
    """The explorer ends with runs still winding down in their threads: mark their sessions
    cancelled, as a run stopped in time marks itself (a session cut off while it was being
    prepared or evaluated would otherwise stay `running` until resumed). Never
    raises: the process ends after this whatever happens."""
    cut = [session_id for control in controls if (session_id := control.cut_off) is not None]
    if not cut:
        return
    with contextlib.suppress(Exception):
        store = open_store(db)
        try:
            for session_id in cut:
                mark_interrupted(store, session_id, "interrupted: the explorer closed")
        finally:
            store.close()
