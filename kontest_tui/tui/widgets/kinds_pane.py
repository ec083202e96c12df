"""The results' Kinds tab: the sections the stored report holds for the test kinds other
than KONTEST (widgets/kind_sections.py), shown for a session that asked them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import VerticalScroll

from kontest_tui.tui.widgets.kind_sections import KindSections
from kontest_tui.tui.widgets.session_pane import SessionPane

if TYPE_CHECKING:
    from kontest_tui.tui.sessions import OpenedResults


class KindsPane(SessionPane):
    """The Kinds tab: each other kind's section of the stored report."""

    FOCUS = "#kinds-scroll"

    async def build(self, opened: OpenedResults) -> None:
        """Mount the sections and show the stored report's (the first time it is shown)."""
        await self.mount(VerticalScroll(KindSections("", id="kinds-view"), id="kinds-scroll"))
        self.query_one("#kinds-view", KindSections).show_report(opened.report)
