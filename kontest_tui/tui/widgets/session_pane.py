"""The base of the results screen's tabs: a TabPane over one stored session.

It knows the store file and the session its workers read, and turns a worker that failed
into one notification (tui.workers.WorkerFailures: a worker's state change does not bubble
up to the screen). Every tab shares one protocol: the screen composes the tabs
empty and calls `build(opened)` once, when a tab is first shown (the Graph tab at once), with
what opening the session read (tui.sessions.OpenedResults); the tab mounts its widgets and
starts its own workers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.widgets import TabPane

from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.report.compare import ComparableSessions
    from kontest_tui.store.view_records import SessionHeader
    from kontest_tui.tui.sessions import OpenedResults


class SessionPane(WorkerFailures, TabPane):
    """A tab of the results screen whose workers read `session_id` in the store `db`, built
    once from the opened session (module docstring)."""

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

    FOCUS: ClassVar[str] = ""  # the widget focused when the tab is shown (a CSS selector)
    # Whether the tab offers the stored sessions on the same KG (listed once by the screen
    # for every tab that does, and for `o`): `show_sessions` then receives them.
    LISTS_SESSIONS: ClassVar[bool] = False

    async def build(self, opened: OpenedResults) -> None:
        """Mount the tab's widgets and fill them (called once, when first shown)."""
        raise NotImplementedError

    def show_sessions(self, sessions: ComparableSessions, header: SessionHeader) -> None:
        """Offer the stored sessions on the same KG (a tab that LISTS_SESSIONS)."""
