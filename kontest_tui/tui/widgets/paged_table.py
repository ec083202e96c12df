"""A table that holds only the pages of rows it has been shown, asking for the others.

Textual's DataTable keeps every row as widgets' data (100k rows take seconds to add); this
one is a `ScrollView` drawing lines (the Line API, as toolong's log view and
textual-fastdatatable's backends do): it knows the row count, keeps the pages it was given,
and posts `PageMissed(page)` for a page it must draw and does not hold. The screen reads that
page in a worker and hands it over with `add_page`. Rows are tuples of cells (plain str or
rich Text: never markup).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

Cell = str | Text
Row = tuple[Cell, ...]
PAGE = 50  # rows per page asked for (a few screens of rows)


class _RowMessage(Message):
    """A row of a PagedTable (`index`), for `@on(..., "#id")` (its `control`)."""

    def __init__(self, table: PagedTable, index: int) -> None:
        super().__init__()
        self.table = table
        self.index = index

    @property
    def control(self) -> PagedTable:
        return self.table


class PageLoaded(Message):
    """A page of a paged table's rows was read (by the pane that owns the table)."""

    def __init__(self, table_id: str, generation: int, page: int, rows: list[Row]) -> None:
        super().__init__()
        self.table_id = table_id
        self.generation = generation
        self.page = page
        self.rows = rows


class ListCounted(Message):
    """A list (errors of a filter, a gap group) was counted: its table starts again."""

    def __init__(self, table_id: str, count: int, key: tuple[str, ...]) -> None:
        super().__init__()
        self.table_id = table_id
        self.count = count
        self.key = key


class PagedTable(ScrollView, can_focus=True):
    """Rows 0 .. row_count - 1 under a fixed header row; pages filled on demand."""

    COMPONENT_CLASSES = {"paged-table--header", "paged-table--cursor", "paged-table--odd"}
    DEFAULT_CSS = """
    PagedTable { height: 1fr; }
    PagedTable > .paged-table--header { text-style: bold; background: $panel; }
    PagedTable > .paged-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    PagedTable:blur > .paged-table--cursor { background: $block-cursor-blurred-background; }
    PagedTable > .paged-table--odd { background: $surface-lighten-1 10%; }
    """
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "move_page(-1)", "Page up", show=False),
        Binding("pagedown", "move_page(1)", "Page down", show=False),
        Binding("home", "move_to(0)", "First", show=False),
        Binding("end", "move_to(-1)", "Last", show=False),
        Binding("enter", "choose", "Choose", show=False),
    ]

    class PageMissed(Message):
        """Row page `page` (rows page * PAGE ..) must be drawn and is not held."""

        def __init__(self, table: PagedTable, page: int) -> None:
            super().__init__()
            self.table = table
            self.page = page

        @property
        def control(self) -> PagedTable:
            return self.table

    class RowHighlighted(_RowMessage):
        """The cursor moved to row `index`."""

    class RowSelected(_RowMessage):
        """Enter (or a click) on row `index`."""

    def __init__(
        self,
        columns: Sequence[tuple[str, int]],
        *,
        grow: Sequence[str] = (),
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.columns = list(columns)  # (title, least width)
        self.grow = tuple(grow)  # the titles of the columns that share the room left
        self.row_count = 0
        self.cursor_row = 0
        self.pages: dict[int, list[Row]] = {}
        self.asked: set[int] = set()
        self.generation = 0  # bumped by reset: a page for an older generation is dropped

    # -- data in ----------------------------------------------------------------------------

    def reset(self, row_count: int, cursor_row: int = 0) -> None:
        """Forget every page: the table now has `row_count` rows (asked for as drawn)."""
        self.generation += 1
        self.row_count = row_count
        self.pages.clear()
        self.asked.clear()
        self.cursor_row = min(max(cursor_row, 0), max(row_count - 1, 0))
        self.virtual_size = Size(self._total_width(), row_count + 1)
        self.scroll_to(y=0, animate=False)
        self.refresh()

    def add_page(self, page: int, rows: Sequence[Row], generation: int | None = None) -> None:
        """Hand over the rows of a page (dropped when `generation` is not the current one)."""
        if generation is not None and generation != self.generation:
            return
        self.pages[page] = list(rows)
        self.refresh()

    def row(self, index: int) -> Row | None:
        """A held row (None when its page is not held)."""
        held = self.pages.get(index // PAGE)
        offset = index % PAGE
        return held[offset] if held is not None and offset < len(held) else None

    # -- drawing ----------------------------------------------------------------------------

    def _widths(self) -> list[int]:
        """Each column's width: the minimum given, and the room left over shared by the
        `grow` columns (the last column when none is named)."""
        widths = [width for _, width in self.columns]
        spare = self.size.width - (sum(widths) + len(widths) - 1)
        growing = [index for index, (title, _) in enumerate(self.columns) if title in self.grow]
        growing = growing or [len(widths) - 1]
        if spare > 0 and widths:
            share, rest = divmod(spare, len(growing))
            for order, index in enumerate(growing):
                widths[index] += share + (1 if order < rest else 0)
        return widths

    def _total_width(self) -> int:
        return sum(width for _, width in self.columns) + len(self.columns) - 1

    def _line(self, cells: Sequence[Cell], style: Style) -> Strip:
        text = Text(no_wrap=True, overflow="ellipsis")
        for index, (cell, width) in enumerate(zip(cells, self._widths(), strict=False)):
            piece = cell.copy() if isinstance(cell, Text) else Text(str(cell))
            piece.truncate(width, overflow="ellipsis", pad=True)
            if index:
                text.append(" ")
            text.append_text(piece)
        segments = list(text.render(self.app.console))
        strip = Strip(segments).apply_style(style)
        scroll_x = int(self.scroll_offset.x)
        return strip.crop_extend(scroll_x, scroll_x + self.size.width, style)

    def render_line(self, y: int) -> Strip:
        if y == 0:
            header = self.get_component_rich_style("paged-table--header")
            return self._line([title for title, _ in self.columns], header)
        index = int(self.scroll_offset.y) + y - 1
        if index >= self.row_count:
            return Strip.blank(self.size.width)
        style = self.rich_style
        if index == self.cursor_row:
            style = style + self.get_component_rich_style("paged-table--cursor")
        elif index % 2:
            style = style + self.get_component_rich_style("paged-table--odd")
        row = self.row(index)
        if row is None:
            page = index // PAGE
            if page not in self.asked:
                self.asked.add(page)
                self.post_message(self.PageMissed(self, page))
            return self._line(["…"], style)
        return self._line(row, style)

    def on_resize(self) -> None:
        self.virtual_size = Size(self._total_width(), self.row_count + 1)

    # -- the cursor -------------------------------------------------------------------------

    def move_cursor(self, index: int) -> None:
        """Put the cursor on row `index` (kept in view) and say so."""
        if not self.row_count:
            return
        index = min(max(index, 0), self.row_count - 1)
        self.cursor_row = index
        visible = max(self.size.height - 1, 1)
        top = int(self.scroll_offset.y)
        if index < top:
            self.scroll_to(y=index, animate=False)
        elif index >= top + visible:
            self.scroll_to(y=index - visible + 1, animate=False)
        self.refresh()
        self.post_message(self.RowHighlighted(self, index))

    def action_move(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_move_page(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step * max(self.size.height - 2, 1))

    def action_move_to(self, index: int) -> None:
        self.move_cursor(index if index >= 0 else self.row_count - 1)

    def action_choose(self) -> None:
        if self.row_count:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            index = int(self.scroll_offset.y) + event.y - 1
            if index < self.row_count:
                self.move_cursor(index)
                if event.chain >= 2:
                    self.post_message(self.RowSelected(self, index))


__all__ = ["PAGE", "PagedTable", "Row"]
