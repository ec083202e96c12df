"""Helpers for the explorer's tests: wait on screens and conditions, read widget text."""

from __future__ import annotations

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


def widget_text(widget) -> str:
    """What a Static shows, as plain text."""
    return str(widget.render())
