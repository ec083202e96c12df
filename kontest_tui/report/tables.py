"""The one table writer of the reports: aligned text, GitHub Markdown and CSV.

A table is a header and rows of strings; `Table` adds its title. Text tables left-align the
first column and right-align the others (numbers), Markdown tables right-align the columns
of numbers with their `---:` rulers, CSV rows are written by the csv module. `report.render` (one session) and
`report.compare_many` (many sessions) lay out every table through these functions.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

Row = Sequence[str]
Table = tuple[str, tuple[str, ...], list[tuple[str, ...]]]  # (title, header, rows)


def escape_markdown(text: str) -> str:
    """A cell's text safe inside a Markdown table (pipes, backslashes, line breaks)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def text_table(header: Row, rows: Sequence[Row]) -> str:
    """Aligned columns two spaces apart, a ruler under the header; ends with a newline."""
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Row) -> str:
        first = cells[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    ruler = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), ruler, *(line(row) for row in rows)]) + "\n"


def _numeric(cell: str) -> bool:
    """A cell that reads as a number, a count or a rate ("12", "3/30 10.0% [..]", "-")."""
    return not cell or cell[0].isdigit() or cell in ("-", "n/a") or cell.startswith("-")


def markdown_table(header: Row, rows: Iterable[Row]) -> str:
    """A GitHub-flavoured Markdown table: the first column and columns of text (a question, an
    answer) left-aligned, columns of numbers right-aligned; ends with a newline."""
    listed = list(rows)
    rulers = ["---"] + [
        "---:" if all(_numeric(row[i]) for row in listed) else "---" for i in range(1, len(header))
    ]
    lines = [
        "| " + " | ".join(escape_markdown(h) for h in header) + " |",
        "|" + "|".join(rulers) + "|",
    ]
    lines += ["| " + " | ".join(escape_markdown(cell) for cell in row) + " |" for row in listed]
    return "\n".join(lines) + "\n"


def csv_table(header: Row, rows: Iterable[Row]) -> str:
    """The header and rows as CSV text (newline-terminated lines)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def csv_tables(tables: Iterable[Table]) -> str:
    """Several tables in one CSV: each a `table,...header` row, then its rows with the
    table's title in the first column."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for title, header, rows in tables:
        writer.writerow(["table", *header])
        writer.writerows([title, *row] for row in rows)
    return buffer.getvalue()
