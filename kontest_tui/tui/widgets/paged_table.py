"""A table that holds only the pages of rows it has been shown, asking for the others.

Textual's DataTable keeps every row as widgets' data (100k rows take seconds to add); this
one is a `ScrollView` drawing lines (the Line API, as toolong's log view and
textual-fastdatatable's backends do): it knows the row count, keeps the pages it was given,
and posts `PageMissed(page)` for a page it must draw and does not hold. The screen reads that
page in a worker and hands it over with `add_page`. Rows are tuples of cells (plain str or
rich Text: never markup).

Nothing is cut that the reader needs: a `fit` column is as wide as its longest cell held (the
table scrolls sideways), the first column as wide as the last row's number, and `wrap` turns
every row into as many lines as its longest cell needs (the same for every row, so a row
is found from a line without reading the others; the `shrink` columns then give their room to
the growing ones). A click on the header posts
`HeaderClicked` (the pane sorts by that column).
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
MAX_ROW_LINES = 8  # the most lines a wrapped row takes
WRAPPED_LEAST = 14  # the least width of a `shrink` column when rows wrap


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

    class HeaderClicked(_RowMessage):
        """A click on the header of column `index`."""

    def __init__(
        self,
        columns: Sequence[tuple[str, int]],
        *,
        grow: Sequence[str] = (),
        fit: Sequence[str] = (),
        shrink: Sequence[str] = (),
        number_column: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.columns = list(columns)  # (title, least width)
        self.grow = tuple(grow)  # the titles of the columns that share the room left
        self.fit = tuple(fit)  # the titles of the columns as wide as their longest cell
        self.narrow = tuple(shrink)  # the titles of the columns narrower when rows wrap
        self.number_column = number_column  # the first column numbers the rows (1 ..)
        self.wrap = False  # rows wrapped to the table's width
        self.row_lines = 1  # lines per row (more when wrapped)
        self._fitted: dict[int, int] = {}  # column -> the longest cell held
        self._wrapped: dict[int, list[Strip]] = {}  # row -> its lines, drawn (wrap mode)
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
        self._fitted.clear()
        self._wrapped.clear()
        self.row_lines = 1
        self.cursor_row = min(max(cursor_row, 0), max(row_count - 1, 0))
        self._resize_virtual()
        self.scroll_to(y=0, animate=False)
        self.refresh()

    def add_page(self, page: int, rows: Sequence[Row], generation: int | None = None) -> None:
        """Hand over the rows of a page (dropped when `generation` is not the current one)."""
        if generation is not None and generation != self.generation:
            return
        self.pages[page] = list(rows)
        for row in rows:
            for index, cell in enumerate(row):
                width = cell.cell_len if isinstance(cell, Text) else Text(str(cell)).cell_len
                self._fitted[index] = max(self._fitted.get(index, 0), width)
        self._wrapped.clear()
        if self.wrap:
            self.row_lines = max(self.row_lines, *(self._lines_of(row) for row in rows), 1)
        self._resize_virtual()
        self.refresh()

    def set_wrap(self, wrap: bool) -> None:
        """Wrap rows to the table's width (True) or keep each on one line, scrolling sideways."""
        if wrap == self.wrap:
            return
        self.wrap = wrap
        self._wrapped.clear()
        self.row_lines = 1
        if wrap:
            for rows in self.pages.values():
                for row in rows:
                    self.row_lines = max(self.row_lines, self._lines_of(row))
        self._resize_virtual()
        self.scroll_to(x=0, y=self.cursor_row * self.row_lines, animate=False)
        self.refresh()

    def _lines_of(self, row: Row) -> int:
        """The lines the longest cell of `row` takes wrapped to its column (at most
        MAX_ROW_LINES)."""
        widths = self._widths()
        console = self.app.console
        needed = 1
        for cell, width in zip(row, widths, strict=False):
            text = cell if isinstance(cell, Text) else Text(str(cell))
            if text.cell_len > width:
                needed = max(needed, len(text.wrap(console, max(width, 1))))
        return min(needed, MAX_ROW_LINES)

    def _resize_virtual(self) -> None:
        self.virtual_size = Size(self._total_width(), self.row_count * self.row_lines + 1)

    def row(self, index: int) -> Row | None:
        """A held row (None when its page is not held)."""
        held = self.pages.get(index // PAGE)
        offset = index % PAGE
        return held[offset] if held is not None and offset < len(held) else None

    # -- drawing ----------------------------------------------------------------------------

    def _least_widths(self) -> list[int]:
        """Each column's least width: the one given; the row numbers' (the last row's
        digits); a `fit` column's longest cell held, unless rows wrap."""
        widths = [width for _, width in self.columns]
        if self.number_column and widths:
            widths[0] = max(widths[0], len(str(self.row_count)), 1)
        for index, (title, _) in enumerate(self.columns):
            if self.wrap and title in self.narrow:
                widths[index] = min(widths[index], WRAPPED_LEAST)
            elif not self.wrap and title in self.fit:
                widths[index] = max(widths[index], self._fitted.get(index, 0))
        return widths

    def _widths(self) -> list[int]:
        """Each column's width: its least width, and the room left over shared by the
        `grow` columns (the last column when none is named)."""
        widths = self._least_widths()
        spare = self.view_width - (sum(widths) + len(widths) - 1)
        growing = [index for index, (title, _) in enumerate(self.columns) if title in self.grow]
        growing = growing or [len(widths) - 1]
        if spare > 0 and widths:
            share, rest = divmod(spare, len(growing))
            for order, index in enumerate(growing):
                widths[index] += share + (1 if order < rest else 0)
        return widths

    @property
    def view_width(self) -> int:
        """The columns rows are drawn in (the vertical scrollbar's left out)."""
        return self.scrollable_content_region.width

    def _total_width(self) -> int:
        if self.wrap:
            return max(self.view_width, 1)
        widths = self._least_widths()
        return sum(widths) + len(widths) - 1

    def _line(self, cells: Sequence[Cell], style: Style) -> Strip:
        text = Text(no_wrap=True, overflow="ellipsis")
        for index, (cell, width) in enumerate(zip(cells, self._widths(), strict=False)):
            piece = cell.copy() if isinstance(cell, Text) else Text(str(cell))
            piece.truncate(width, overflow="ellipsis", pad=True)
            if index:
                text.append(" ")
            text.append_text(piece)
        return self._crop(text, style)

    def _crop(self, text: Text, style: Style) -> Strip:
        segments = list(text.render(self.app.console))
        strip = Strip(segments).apply_style(style)
        scroll_x = int(self.scroll_offset.x)
        return strip.crop_extend(scroll_x, scroll_x + self.size.width, style)

    def _wrapped_lines(self, index: int, row: Row) -> list[Strip]:
        """Row `index` wrapped to its columns, `row_lines` lines (unstyled; kept until the
        pages or the width change)."""
        if index not in self._wrapped:
            console = self.app.console
            widths = self._widths()
            columns: list[list[Text]] = []
            for cell, width in zip(row, widths, strict=False):
                text = cell.copy() if isinstance(cell, Text) else Text(str(cell))
                parts = list(text.wrap(console, max(width, 1)))[: self.row_lines]
                if len(text.wrap(console, max(width, 1))) > self.row_lines and parts:
                    parts[-1].truncate(max(width - 1, 0))
                    parts[-1].append("…")
                columns.append(parts)
            lines = []
            for number in range(self.row_lines):
                line = Text(no_wrap=True)
                for column, (parts, width) in enumerate(zip(columns, widths, strict=False)):
                    piece = parts[number].copy() if number < len(parts) else Text()
                    piece.rstrip()
                    piece.truncate(width, pad=True)
                    if column:
                        line.append(" ")
                    line.append_text(piece)
                lines.append(Strip(list(line.render(console))))
            self._wrapped[index] = lines
        return self._wrapped[index]

    def render_line(self, y: int) -> Strip:
        if y == 0:
            header = self.get_component_rich_style("paged-table--header")
            return self._line([title for title, _ in self.columns], header)
        line = int(self.scroll_offset.y) + y - 1
        index, part = divmod(line, self.row_lines)
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
            return self._line(["…" if not part else ""], style)
        if self.wrap:
            strip = self._wrapped_lines(index, row)[part].apply_style(style)
            return strip.crop_extend(0, self.view_width, style)
        return self._line(row, style)

    def on_resize(self) -> None:
        self._wrapped.clear()
        if self.wrap:
            self.row_lines = max(
                [1, *(self._lines_of(row) for rows in self.pages.values() for row in rows)]
            )
        self._resize_virtual()

    # -- the cursor -------------------------------------------------------------------------

    def move_cursor(self, index: int) -> None:
        """Put the cursor on row `index` (kept in view) and say so."""
        if not self.row_count:
            return
        index = min(max(index, 0), self.row_count - 1)
        self.cursor_row = index
        visible = max(self.size.height - 1, 1)
        top = int(self.scroll_offset.y)
        first, last = index * self.row_lines, (index + 1) * self.row_lines - 1
        if first < top:
            self.scroll_to(y=first, animate=False)
        elif last >= top + visible:
            self.scroll_to(y=last - visible + 1, animate=False)
        self.refresh()
        self.post_message(self.RowHighlighted(self, index))

    def action_move(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_move_page(self, step: int) -> None:
        rows = max((self.size.height - 2) // self.row_lines, 1)
        self.move_cursor(self.cursor_row + step * rows)

    def action_move_to(self, index: int) -> None:
        self.move_cursor(index if index >= 0 else self.row_count - 1)

    def action_choose(self) -> None:
        if self.row_count:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def column_at(self, x: int) -> int | None:
        """The column under screen column `x` of the table (None: between or past them)."""
        start = -int(self.scroll_offset.x)
        for index, width in enumerate(self._widths()):
            if start <= x < start + width:
                return index
            start += width + 1
        return None

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            column = self.column_at(event.x)
            if column is not None:
                self.post_message(self.HeaderClicked(self, column))
            return
        if event.y >= 1:
            index = (int(self.scroll_offset.y) + event.y - 1) // self.row_lines
            if index < self.row_count:
                self.move_cursor(index)
                if event.chain >= 2:
                    self.post_message(self.RowSelected(self, index))


__all__ = ["PAGE", "PagedTable", "Row"]
