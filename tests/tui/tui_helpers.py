"""Helpers for the explorer's tests: wait on screens and conditions, read widget text."""

from __future__ import annotations

import contextlib
import time

from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen


async def wait_for_screen(pilot: Pilot, screen_type: type[Screen], timeout: float = 60.0) -> Screen:
    """Let the app work until `screen_type` is on top (workers run meanwhile)."""
    app: App = pilot.app
    deadline = time.monotonic() + timeout
    while not isinstance(app.screen, screen_type) or not getattr(app.screen, "ready", True):
        assert time.monotonic() < deadline, f"{screen_type.__name__} never came (at {app.screen!r})"
        await pilot.pause(0.05)
    await pilot.pause()
    return app.screen


async def wait_until(
    pilot: Pilot, condition, timeout: float = 60.0, what: str = "condition"
) -> None:
    """Let the app work until `condition()` is true."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def wait_for_workers(pilot: Pilot) -> None:
    """Wait until no worker of the app is pending or running (a worker cancelled by a newer
    one of its exclusive group counts as done, unlike `workers.wait_for_complete`)."""
    from textual.worker import WorkerCancelled, WorkerFailed, WorkerState

    app: App = pilot.app
    while busy := [
        worker
        for worker in app.workers
        if worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
    ]:
        for worker in busy:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()
    await pilot.pause()


def widget_text(widget) -> str:
    """What a Static shows, as plain text."""
    return str(widget.render())
