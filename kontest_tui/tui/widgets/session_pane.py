"""The base of the results screen's tabs: a TabPane over one stored session.

It knows the store file and the session its workers read, and turns a worker that failed
into one notification (tui.workers.WorkerFailures: a worker's state change does not bubble
up to the screen).
"""

from __future__ import annotations

from textual.widgets import TabPane

from kontest_tui.tui.workers import WorkerFailures


class SessionPane(WorkerFailures, TabPane):
    """A tab of the results screen whose workers read `session_id` in the store `db`."""

    def __init__(
        self,
        title: str,
        *,
        db: str | None,
        session_id: str,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(title, id=id)
        self.db = db
        self.session_id = session_id
