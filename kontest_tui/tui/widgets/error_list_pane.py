"""The results' Errors tab: every error of the session, a page at a time.

A `TabPane` built when first shown: filters (oracle, template, whether the answers compared
are all a yes or a no, the confirmation status or weak errors, and the relations a find
matched), an order (clearest first, the
graph's, by relation, by template; a click on a column's header chooses it too) and a
PagedTable whose count and pages its own workers read from store.error_list. The `#` column
is as wide as the last row's number and Detail as wide as its longest text (or rows wrap:
`set_wrap`). Choosing a row posts `ErrorChosen` with the way to the error's node; the results
screen selects it in the graph. A new filter or order posts `OrderChanged` (`n` / `p` start
again).
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import on, work
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Select, Static

from kontest_tui.report.words import oracle_name
from kontest_tui.run.api import report_section
from kontest_tui.store.view_records import (
    CLEAREST,
    RELATION,
    TEMPLATE,
    TREE,
    ErrorFilter,
    ErrorRow,
)
from kontest_tui.tui.results_text import ERRORS_STATUS_HINT, error_cells
from kontest_tui.tui.sessions import OpenedResults, open_views
from kontest_tui.tui.widgets.paged_table import PAGE, ListCounted, PagedTable, PageLoaded, Row
from kontest_tui.tui.widgets.session_pane import SessionPane

ALL = "all"
# (title, least width): 76 in all with the gaps, what the Errors pane has at 80 columns (wider
# least widths cut the Detail column to `De`); Relation and Detail share any room left,
# `#` grows with the number of rows and Detail with its longest text (the table scrolls
# sideways, or wraps).
ERROR_COLUMNS = (
    ("#", 2),
    ("Test", 20),
    ("Relation", 20),
    ("Tmpl", 5),
    ("Answers", 7),
    ("Status", 6),
    ("Detail", 14),
)
ORDER_CHOICES = (
    ("clearest first", CLEAREST),
    ("graph order", TREE),
    ("by relation", RELATION),
    ("by template", TEMPLATE),
)
# The order a click on a column's header chooses.
COLUMN_ORDERS = {0: CLEAREST, 1: CLEAREST, 2: RELATION, 3: TEMPLATE}
ANSWER_CHOICES = (("any answers", ALL), ("yes/no answers", "clear"), ("an unclear one", "unclear"))
# The confirmation status filter (run.api.confirm_errors; `r` asks the errors again), and
# the errors whose compared answers are all low-margin.
NOT_ASKED = "none"
WEAK = "weak"
STATUS_CHOICES = (
    ("any status", ALL),
    ("confirmed", "confirmed"),
    ("mixed", "mixed"),
    ("not reproduced", "not_reproduced"),
    ("undecided", "undecided"),
    ("not asked again", NOT_ASKED),
    ("weak", WEAK),
)
NO_MARGINS_HINT = "No margins: the server gave no log-probabilities, so no error is marked weak"


class ErrorListPane(SessionPane):
    """The Errors tab: the session's errors, filtered and in the order chosen."""

    FOCUS = "#error-table"

    class ErrorChosen(Message):
        """An error row was chosen: its node (at the end of `way`) is to be selected."""

        def __init__(self, way: tuple[str, ...], error: ErrorRow) -> None:
            super().__init__()
            self.way = way
            self.error = error

    class OrderChanged(Message):
        """The filter or the order of the list changed."""

    class ListShown(Message):
        """The list was counted for a filter (`count`: its errors)."""

        def __init__(self, where: ErrorFilter, count: int) -> None:
            super().__init__()
            self.where = where
            self.count = count

    def __init__(
        self,
        title: str,
        *,
        db: str | None,
        session_id: str,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(title, db=db, session_id=session_id, id=id)
        self.where = ErrorFilter()  # which errors are listed
        self.found_names = ""  # what the relation filter matched, in words
        self.error_order = CLEAREST
        self.built = False
        self.shown_count: int | None = None  # the errors of the list shown

    async def build(self, opened: OpenedResults) -> None:
        """Mount the tab's widgets and list the errors (the first time it is shown); a
        session whose answers have no margin at all says so once above the table."""
        oracles, templates = opened.oracles, list(opened.header.template_ids)
        margins_section = report_section(opened.report, "margins")
        margins = not (margins_section or {}).get("note")  # a note: no margin at all
        await self.mount_all(
            [
                Horizontal(
                    _choice(
                        [("all errors", ALL), *((oracle_name(name), name) for name in oracles)],
                        "error-filter",
                    ),
                    _choice(
                        [
                            ("any template", ALL),
                            *((f"asked {template}", template) for template in templates),
                        ],
                        "error-template",
                    ),
                    _choice(list(ANSWER_CHOICES), "error-answers"),
                    _choice(list(STATUS_CHOICES), "error-status"),
                    _choice(list(ORDER_CHOICES), "error-order", CLEAREST),
                    id="error-choices",
                ),
                Static("", id="error-found", classes="hint", markup=False),
                Static(NO_MARGINS_HINT, id="error-margins", classes="hint", markup=False),
                Static(ERRORS_STATUS_HINT, id="error-status-hint", classes="hint", markup=False),
                PagedTable(
                    ERROR_COLUMNS,
                    grow=("Relation", "Detail"),
                    fit=("Answers", "Status", "Detail"),
                    shrink=("Test", "Relation", "Detail"),
                    number_column=True,
                    id="error-table",
                    classes="pane",
                ),
            ]
        )
        self.query_one("#error-margins", Static).display = not margins
        self.built = True
        self.show_found()
        self.list_errors()

    def refresh_list(self) -> None:
        """The list read again (its errors were asked again: statuses and order changed)."""
        self.shown_count = None
        self.list_errors()

    def list_errors(self) -> None:
        """The Errors tab's list again (filter or order changed)."""
        if self.built:
            self.count_worker(self.where)

    @work(thread=True, exclusive=True, group="results-count", exit_on_error=False)
    def count_worker(self, where: ErrorFilter) -> None:
        with open_views(self.db, self.session_id) as store:
            count = store.error_list.count_errors(self.session_id, where=where)
        self.post_message(ListCounted("error-table", count, (repr(where), self.error_order)))
        self.post_message(self.ListShown(where, count))

    @on(ListCounted)
    def list_counted(self, event: ListCounted) -> None:
        if event.key == (repr(self.where), self.error_order):  # not an older list's count
            self.query_one("#error-table", PagedTable).reset(event.count)

    @on(ListShown)
    def list_shown(self, event: ListShown) -> None:
        if event.where == self.where:
            self.shown_count = event.count
            self.show_found()

    @on(PagedTable.PageMissed, "#error-table")
    def page_missed(self, event: PagedTable.PageMissed) -> None:
        table = event.table
        self.page_worker(table.generation, event.page, self.where, self.error_order)

    @work(thread=True, group="results-pages", exit_on_error=False)
    def page_worker(self, generation: int, page: int, where: ErrorFilter, order: str) -> None:
        with open_views(self.db, self.session_id) as store:
            rows: list[Row] = [
                error_cells(row)
                for row in store.error_list.errors(
                    self.session_id, offset=page * PAGE, limit=PAGE, order=order, where=where
                )
            ]
        self.post_message(PageLoaded("error-table", generation, page, rows))

    @on(PageLoaded)
    def page_loaded(self, event: PageLoaded) -> None:
        self.query_one("#error-table", PagedTable).add_page(
            event.page, event.rows, event.generation
        )

    def change(self, where: ErrorFilter | None = None, order: str | None = None) -> None:
        """List the errors `where` keeps, in `order` (each unchanged when None)."""
        where = where if where is not None else self.where
        order = order if order is not None else self.error_order
        if where == self.where and order == self.error_order:
            return
        self.where, self.error_order = where, order
        self.shown_count = None
        self.post_message(self.OrderChanged())
        self.list_errors()
        self.show_found()

    def find(self, nodes: tuple[str, ...], names: str) -> None:
        """Only the errors on relations with one of `nodes` at either end (what a find
        matched, `names` in words); () lists every relation again."""
        self.found_names = names if nodes else ""
        self.change(replace(self.where, nodes=nodes))

    def show_found(self) -> None:
        """The line above the table: which relations the list holds (after a find)."""
        if not self.built:
            return
        line = self.query_one("#error-found", Static)
        line.display = bool(self.where.nodes)
        if self.where.nodes:
            count = "…" if self.shown_count is None else str(self.shown_count)
            line.update(
                Text(
                    f"relations with {self.found_names}: {count} error(s) · n/p walk them · "
                    "esc lists every relation"
                )
            )

    @on(Select.Changed, "#error-filter")
    def filter_changed(self, event: Select.Changed) -> None:
        value = str(event.value)
        self.change(replace(self.where, oracle=None if value == ALL else value))

    @on(Select.Changed, "#error-template")
    def template_changed(self, event: Select.Changed) -> None:
        value = str(event.value)
        self.change(replace(self.where, template=None if value == ALL else value))

    @on(Select.Changed, "#error-answers")
    def answers_changed(self, event: Select.Changed) -> None:
        value = str(event.value)
        self.change(replace(self.where, clear=None if value == ALL else value == "clear"))

    @on(Select.Changed, "#error-status")
    def status_changed(self, event: Select.Changed) -> None:
        value = str(event.value)
        status = None if value in (ALL, WEAK) else "" if value == NOT_ASKED else value
        self.change(replace(self.where, status=status, weak=True if value == WEAK else None))

    @on(Select.Changed, "#error-order")
    def order_changed(self, event: Select.Changed) -> None:
        self.change(order=str(event.value))

    @on(PagedTable.HeaderClicked, "#error-table")
    def header_clicked(self, event: PagedTable.HeaderClicked) -> None:
        """A click on `#`, Test, Relation or Tmpl sorts by it (the order choice follows)."""
        order = COLUMN_ORDERS.get(event.index)
        if order is not None:
            self.query_one("#error-order", Select).value = order

    @on(PagedTable.RowSelected, "#error-table")
    def error_row_chosen(self, event: PagedTable.RowSelected) -> None:
        """Enter on an error: the graph with its relation selected; `n` goes on from it."""
        self.choose_worker(event.index, self.where, self.error_order)

    @work(thread=True, exclusive=True, group="results-step", exit_on_error=False)
    def choose_worker(self, index: int, where: ErrorFilter, order: str) -> None:
        with open_views(self.db, self.session_id) as store:
            row = store.error_list.error_at(self.session_id, index, order=order, where=where)
        if row is not None:
            self.post_message(self.ErrorChosen(row.way, row))


def _choice(options: list[tuple[str, str]], id: str, value: str = ALL) -> Select[str]:
    """One of the Errors tab's compact choices above its table."""
    return Select[str](options, id=id, value=value, allow_blank=False, compact=True)
