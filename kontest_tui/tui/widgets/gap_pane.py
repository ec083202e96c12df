"""The results' Gap tab: the knowledge gap per template and the relations of each group.

A `TabPane` built when first shown: the gap bars of the stored report, a choice of group
(one template, or the intersection no template answered yes) and a PagedTable whose count
and pages its own workers read from store.gaps. Choosing a row posts `GapChosen` with the way
to the relation's node; the results screen selects it in the graph.
"""

from __future__ import annotations

from textual import on, work
from textual.message import Message
from textual.widgets import Select

from kontest_tui.report.words import quoted
from kontest_tui.store.view_records import INTERSECTION
from kontest_tui.tui.results_text import gap_cells
from kontest_tui.tui.sessions import OpenedResults, open_views
from kontest_tui.tui.widgets.gap_bars import GapBars
from kontest_tui.tui.widgets.paged_table import PAGE, ListCounted, PagedTable, PageLoaded, Row
from kontest_tui.tui.widgets.session_pane import SessionPane

GAP_COLUMNS = (("#", 6), ("Relation", 60))


class GapPane(SessionPane):
    """The Gap tab: gap bars, a group chosen, and that group's relations."""

    FOCUS = "#gap-table"

    class GapChosen(Message):
        """A gap row was chosen: its node (at the end of `way`) is to be selected."""

        def __init__(self, way: tuple[str, ...]) -> None:
            super().__init__()
            self.way = way

    def __init__(
        self,
        title: str,
        *,
        db: str | None,
        session_id: str,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(title, db=db, session_id=session_id, id=id)
        self.gap_group: str | None = None
        self.built = False

    async def build(self, opened: OpenedResults) -> None:
        """Mount the tab's widgets, draw the bars and list the first group (once)."""
        header, report = opened.header, opened.report
        template_ids = list(header.template_ids)
        texts = header.template_texts

        def template_text(template_id: str) -> str:
            """A template's text in quotes ("its text" when the session's is unreadable)."""
            return quoted(texts[template_id]) if template_id in texts else "its text"

        of_gap = template_ids if report is None else list(report["gap"]["per_template"])
        groups = [
            (
                "intersection (no template answered yes)"
                if group == INTERSECTION
                else f"{group}: not answered yes to {template_text(group)}",
                group,
            )
            for group in [*of_gap, INTERSECTION]
        ]
        await self.mount_all(
            [
                GapBars("", id="gap-view"),
                Select[str](groups, id="gap-select", allow_blank=False, value=groups[0][1]),
                PagedTable(GAP_COLUMNS, id="gap-table", classes="pane"),
            ]
        )
        self.built = True
        self.query_one("#gap-view", GapBars).show_report(report, texts)
        self.choose_gap_group(str(self.query_one("#gap-select", Select).value))

    @on(Select.Changed, "#gap-select")
    def gap_group_changed(self, event: Select.Changed) -> None:
        if self.built:
            self.choose_gap_group(str(event.value))

    def choose_gap_group(self, group: str) -> None:
        if group != self.gap_group:
            self.gap_group = group
            self.count_worker((group,))

    @work(thread=True, exclusive=True, group="results-count", exit_on_error=False)
    def count_worker(self, key: tuple[str, ...]) -> None:
        with open_views(self.db, self.session_id) as store:
            count = dict(store.gaps.gap_groups(self.session_id)).get(key[0], 0)
        self.post_message(ListCounted("gap-table", count, key))

    @on(ListCounted)
    def list_counted(self, event: ListCounted) -> None:
        self.query_one("#gap-table", PagedTable).reset(event.count)

    @on(PagedTable.PageMissed, "#gap-table")
    def page_missed(self, event: PagedTable.PageMissed) -> None:
        table = event.table
        self.page_worker(table.generation, event.page, (self.gap_group or "",))

    @work(thread=True, group="results-pages", exit_on_error=False)
    def page_worker(self, generation: int, page: int, key: tuple[str, ...]) -> None:
        with open_views(self.db, self.session_id) as store:
            rows: list[Row] = [
                gap_cells(row)
                for row in store.gaps.gap_page(
                    self.session_id, key[0], offset=page * PAGE, limit=PAGE
                )
            ]
        self.post_message(PageLoaded("gap-table", generation, page, rows))

    @on(PageLoaded)
    def page_loaded(self, event: PageLoaded) -> None:
        self.query_one("#gap-table", PagedTable).add_page(event.page, event.rows, event.generation)

    @on(PagedTable.RowSelected, "#gap-table")
    def gap_row_chosen(self, event: PagedTable.RowSelected) -> None:
        self.gap_choose_worker(self.gap_group or "", event.index)

    @work(thread=True, exclusive=True, group="results-step", exit_on_error=False)
    def gap_choose_worker(self, group: str, index: int) -> None:
        with open_views(self.db, self.session_id) as store:
            rows = store.gaps.gap_page(self.session_id, group, offset=index, limit=1)
        if rows:
            self.post_message(self.GapChosen(rows[0].way))
