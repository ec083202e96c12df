"""The results' Errors tab: every error of the session, a page at a time.

A `TabPane` built when first shown: a filter (by oracle), an order (clearest first or the
graph's) and a PagedTable whose count and pages its own workers read from store.error_list.
Choosing a row posts `ErrorChosen` with the way to the error's node; the results screen
selects it in the graph. A new filter or order posts `OrderChanged` (`n` / `p` start again).
"""

from __future__ import annotations

from textual import on, work
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Select

from kontest_tui.report.words import oracle_name
from kontest_tui.store.view_records import CLEAREST, TREE, ErrorRow
from kontest_tui.tui.results_text import error_cells
from kontest_tui.tui.sessions import open_views
from kontest_tui.tui.widgets.paged_table import PAGE, ListCounted, PagedTable, PageLoaded, Row
from kontest_tui.tui.widgets.session_pane import SessionPane

ALL = "all"
# (title, least width): 76 in all with the gaps, what the Errors pane has at 80 columns (the
# Detail column was cut to `De`, QA finding 10); Relation and Detail share any room left.
ERROR_COLUMNS = (
    ("#", 4),
    ("Test", 20),
    ("Relation", 22),
    ("Tmpl", 5),
    ("Answers", 10),
    ("Detail", 14),
)
ORDER_CHOICES = (("clearest first", CLEAREST), ("graph order", TREE))


class ErrorListPane(SessionPane):
    """The Errors tab: the session's errors, filtered by oracle, in the order chosen."""

    class ErrorChosen(Message):
        """An error row was chosen: its node (at the end of `way`) is to be selected."""

        def __init__(self, way: tuple[str, ...], error: ErrorRow) -> None:
            super().__init__()
            self.way = way
            self.error = error

    class OrderChanged(Message):
        """The filter or the order of the list changed."""

    def __init__(
        self,
        title: str,
        *,
        db: str | None,
        session_id: str,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(title, db=db, session_id=session_id, id=id)
        self.error_filter: str | None = None  # the oracle listed (None: all)
        self.error_order = CLEAREST

    async def build(self, oracles: list[str]) -> None:
        """Mount the tab's widgets and list the errors (the first time it is shown)."""
        await self.mount_all(
            [
                Horizontal(
                    Select[str](
                        [
                            ("all errors", ALL),
                            *((oracle_name(name), name) for name in oracles),
                        ],
                        id="error-filter",
                        value=ALL,
                        allow_blank=False,
                    ),
                    Select[str](
                        list(ORDER_CHOICES), id="error-order", value=CLEAREST, allow_blank=False
                    ),
                    id="error-choices",
                ),
                PagedTable(
                    ERROR_COLUMNS, grow=("Relation", "Detail"), id="error-table", classes="pane"
                ),
            ]
        )
        self.list_errors()

    def list_errors(self) -> None:
        """The Errors tab's list again (filter or order changed)."""
        self.count_worker((self.error_filter or ALL, self.error_order))

    @work(thread=True, exclusive=True, group="results-count", exit_on_error=False)
    def count_worker(self, key: tuple[str, ...]) -> None:
        with open_views(self.db, self.session_id) as store:
            oracle = key[0] if key[0] != ALL else None
            count = store.error_list.count_errors(self.session_id, oracle)
        self.post_message(ListCounted("error-table", count, key))

    @on(ListCounted)
    def list_counted(self, event: ListCounted) -> None:
        self.query_one("#error-table", PagedTable).reset(event.count)

    @on(PagedTable.PageMissed, "#error-table")
    def page_missed(self, event: PagedTable.PageMissed) -> None:
        table = event.table
        key = (self.error_filter or ALL, self.error_order)
        self.page_worker(table.generation, event.page, key)

    @work(thread=True, group="results-pages", exit_on_error=False)
    def page_worker(self, generation: int, page: int, key: tuple[str, ...]) -> None:
        with open_views(self.db, self.session_id) as store:
            oracle = key[0] if key[0] != ALL else None
            rows: list[Row] = [
                error_cells(row)
                for row in store.error_list.errors(
                    self.session_id, offset=page * PAGE, limit=PAGE, oracle=oracle, order=key[1]
                )
            ]
        self.post_message(PageLoaded("error-table", generation, page, rows))

    @on(PageLoaded)
    def page_loaded(self, event: PageLoaded) -> None:
        self.query_one("#error-table", PagedTable).add_page(
            event.page, event.rows, event.generation
        )

    @on(Select.Changed, "#error-filter")
    def filter_changed(self, event: Select.Changed) -> None:
        value = str(event.value)
        oracle = None if value == ALL else value
        if oracle != self.error_filter:
            self.error_filter = oracle
            self.post_message(self.OrderChanged())
            self.list_errors()

    @on(Select.Changed, "#error-order")
    def order_changed(self, event: Select.Changed) -> None:
        order = str(event.value)
        if order != self.error_order:
            self.error_order = order
            self.post_message(self.OrderChanged())
            self.list_errors()

    @on(PagedTable.RowSelected, "#error-table")
    def error_row_chosen(self, event: PagedTable.RowSelected) -> None:
        """Enter on an error: the graph with its relation selected; `n` goes on from it."""
        self.choose_worker(event.index, self.error_filter, self.error_order)

    @work(thread=True, exclusive=True, group="results-step", exit_on_error=False)
    def choose_worker(self, index: int, oracle: str | None, order: str) -> None:
        with open_views(self.db, self.session_id) as store:
            row = store.error_list.error_at(self.session_id, index, oracle=oracle, order=order)
        if row is not None:
            self.post_message(self.ErrorChosen(row.way, row))
