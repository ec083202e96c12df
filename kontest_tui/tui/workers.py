"""One handler for every failed worker of the explorer.

Workers run with `exit_on_error=False` and post their results as messages. An error they
do not catch ends the worker in `WorkerState.ERROR`; `WorkerFailures.on_worker_state_changed`
(mixed into the app and every screen that starts workers) turns it into one notification,
`KontestError` or not, then calls `worker_failed` so the screen can put itself back in a
usable state (the live run stops saying "running", a "loading…" line says what failed).
A failure a worker catches itself is posted as `SessionWorkFailed` (the results screen shows
it where it was asked).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.message import Message
from textual.worker import Worker, WorkerState

from kontest_tui.errors import KontestError
from kontest_tui.redact import scrub

if TYPE_CHECKING:
    from textual.dom import DOMNode


class SessionWorkFailed(Message):
    """Listing, loading or comparing stored sessions failed (shown where it was asked)."""

    def __init__(self, target: str, text: str, title: str) -> None:
        super().__init__()
        self.target = target  # the Static that shows the failure
        self.text = text
        self.title = title


def describe_failure(worker: Worker[object], error: BaseException) -> tuple[str, str]:
    """(message, title) of a failed worker: the engine's own for a KontestError, else the
    exception's type and text (secrets scrubbed) under the worker's group."""
    if isinstance(error, KontestError):
        return str(error), error.title
    what = worker.group if worker.group != "default" else (worker.name or "background work")
    return scrub(f"{type(error).__name__}: {error}"), f"{what} failed"


class WorkerFailures:
    """Mixin for the app and its screens: notify any worker failure, then `worker_failed`."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is not WorkerState.ERROR:
            return
        worker = event.worker
        error = worker.error
        if error is None:  # pragma: no cover - Textual always sets it on ERROR
            return
        message, title = describe_failure(worker, error)
        cast("DOMNode", self).app.notify(message, title=title, severity="error", markup=False)
        self.worker_failed(worker.group, error)

    def worker_failed(self, group: str, error: BaseException) -> None:
        """Put the screen back in a usable state after a worker of `group` failed."""
