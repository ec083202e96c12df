"""Running a session from the explorer: pause / resume / cancel / abort from the UI thread,
the run itself through the engine's session API (run.api), and asking one extra template.

Runs happen in the event loop of a worker thread; nothing here touches a widget.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kontest_tui.generate.templates import Template
from kontest_tui.run.api import (
    Executor,
    LiveTally,
    ReportJSON,
    SessionSpec,
    extend_session,
    kontest_per_relation,
    resume_session,
    start_session,
)
from kontest_tui.tui.sessions import open_store


class RunControl:
    """Pause / resume / cancel / abort for a run that executes in another thread's loop.

    The executor and the run's task are attached from the run thread; every control call is
    handed to that loop with `call_soon_threadsafe`, so the UI thread never touches them.
    `cancel` stops asking and lets the engine evaluate the answers so far; `abort` (the
    explorer quitting, its terminal gone) cancels the run's task: the answers so far stay
    stored and the session is marked cancelled at once, without evaluating.
    """

    def __init__(self) -> None:
        self.executor: Executor | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[object] | None = None
        self._paused = False
        self._cancelled = False
        self._aborted = False
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

    def _forward(self, method: str) -> None:
        with self._lock:
            executor, loop = self.executor, self.loop
            if executor is not None and loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(getattr(executor, method))

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

    def abort(self) -> None:
        """Stop the run now (see the class docstring)."""
        with self._lock:
            self._aborted = True
            task, loop = self.task, self.loop
            if task is not None and loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(task.cancel)


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a run ended: its session, status (done | cancelled | failed) and report."""

    session_id: str
    status: str
    report: ReportJSON


async def run_live(
    spec: SessionSpec | None,
    tally: LiveTally,
    control: RunControl,
    *,
    resume: str | None = None,
    db: str | Path | None = None,
    on_started: Callable[[str, str], None] | None = None,
) -> RunEnd:
    """Run a new session (`spec`) or go on with a stored one (`resume`) through run.api,
    feeding `tally`; call it in the loop of a worker thread. `on_started` gets the session's
    id and a line naming it before the first question. The report is the engine's final
    evaluation, made in this thread."""
    control.attach_task()
    store = open_store(db)

    def created(session_id: str) -> None:
        row = store.sessions.get(session_id)
        tally.per_relation = kontest_per_relation(len(row.get("template_ids") or ()))
        if on_started is not None:
            on_started(
                session_id,
                f"{row['model']} on {row['kg_name']}: {row['relations']:,} relations, "
                f"{row['conversations']:,} conversations, {row['planned']:,} model calls",
            )

    try:
        events = tally.events()
        if resume is not None:
            outcome = await resume_session(
                store, resume, events=events, on_created=created, on_executor=control.attach
            )
        else:
            assert spec is not None
            outcome = await start_session(
                store, spec, events=events, on_created=created, on_executor=control.attach
            )
    finally:
        store.close()
    tally.finish()
    return RunEnd(outcome.session_id, outcome.status, outcome.evaluation.to_json())


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
