"""The results' Templates tab: the curation evidence per template and per varied word, and,
for a session asked again after a template or a synonym list changed, what changed.

A `TabPane` built when first shown. Its rows are the stored report's `curation` section
(oracles.evidence: questions, invalid answers, refusals, cut answers, errors taken part in,
flips against the original, gap), in the order chosen (report.evidence.ORDERS; the worst
first), shown by two PagedTables served a page at a time from that list. A session with a
parent (run.rerun) gets the delta above them, read in a worker (run.api.session_delta: the
errors gone and new, each measure before and after).
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Select, Static

from kontest_tui.report.delta import compact_rate_lines, delta_lines, error_line
from kontest_tui.report.evidence import ORDERS, EvidenceJSON, evidence_cells, sort_rows
from kontest_tui.run.api import DeltaJSON, session_delta
from kontest_tui.tui.sessions import OpenedResults, open_store
from kontest_tui.tui.widgets.paged_table import PAGE, PagedTable
from kontest_tui.tui.widgets.session_pane import SessionPane

# (title, least width): the word table's least widths add up to 72 with the gaps, so every
# count shows at 80 columns; the names share the room left.
COUNT_COLUMNS = (
    ("Asked", 6),
    ("Invalid", 7),
    ("Refused", 7),
    ("Cut", 4),
    ("Errors", 6),
    ("Flips", 8),
    ("Gap", 5),
)
TEMPLATE_COLUMNS = (("Template", 16), *COUNT_COLUMNS)
WORD_COLUMNS = (("Word", 10), ("Replaced by", 10), *COUNT_COLUMNS)
CHANGES_SHOWN = 5  # errors gone and new listed in the tab (`kontest rerun` lists 20)


class TemplatesPane(SessionPane):
    """The Templates tab (see the module docstring)."""

    FOCUS = "#evidence-templates"

    class DeltaRead(Message):
        """The session's delta against its parent was read (None: it has no parent)."""

        def __init__(self, delta: DeltaJSON | None) -> None:
            super().__init__()
            self.delta = delta

    def __init__(
        self,
        title: str,
        *,
        db: str | None,
        session_id: str,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(title, db=db, session_id=session_id, id=id)
        self.order = "worst"
        self.texts: dict[str, str] = {}  # template id -> its text
        self.templates: list[EvidenceJSON] = []  # in the order shown
        self.words: list[EvidenceJSON] = []
        self.delta: DeltaJSON | None = None  # shown once read (tests and the benchmark wait)
        self.delta_read = False

    async def build(self, opened: OpenedResults) -> None:
        """Mount the tab's widgets, list the rows of the stored report and read the delta
        (the first time it is shown)."""
        section = opened.report.get("curation")
        self.texts = dict(opened.header.template_texts)
        self.templates = list(section["templates"]) if section else []
        self.words = list(section["words"]) if section else []
        orders = [(meaning, name) for name, (meaning, _, _) in ORDERS.items()]
        await self.mount_all(
            [
                VerticalScroll(Static("", id="evidence-delta"), id="evidence-delta-box"),
                Horizontal(
                    Select[str](
                        orders,
                        id="evidence-order",
                        value=self.order,
                        allow_blank=False,
                        compact=True,  # one line: the tables keep the room at 80x24
                    ),
                    Static(self.summary(), id="evidence-summary", markup=False),
                    id="evidence-choices",
                ),
                PagedTable(
                    TEMPLATE_COLUMNS, grow=("Template",), id="evidence-templates", classes="pane"
                ),
                PagedTable(
                    WORD_COLUMNS, grow=("Word", "Replaced by"), id="evidence-words", classes="pane"
                ),
            ]
        )
        self.query_one("#evidence-delta-box").display = False
        if not self.words:  # no covering-array variants: the templates take the room
            self.query_one("#evidence-words").display = False
            self.query_one("#evidence-templates").add_class("alone")
        self.show_rows()
        self.delta_worker()

    def summary(self) -> str:
        if not self.templates:
            return "No question was asked in a template's phrasing in this session."
        if not self.words:
            return f"{len(self.templates)} templates (no covering-array variants: no varied word)"
        return (
            f"{len(self.templates)} templates, {len(self.words)} varied words "
            "(a variant's word replaced by a synonym or an alias)"
        )

    def show_rows(self) -> None:
        """Both tables again from their first row, in the order chosen."""
        self.templates = sort_rows(self.templates, self.order)
        self.words = sort_rows(self.words, self.order)
        for table_id, rows in (
            ("evidence-templates", self.templates),
            ("evidence-words", self.words),
        ):
            self.query_one(f"#{table_id}", PagedTable).reset(len(rows))

    @on(PagedTable.PageMissed)
    def page_missed(self, event: PagedTable.PageMissed) -> None:
        """A page to draw: served from the rows held (a report's section, never large)."""
        event.stop()
        rows = self.templates if event.table.id == "evidence-templates" else self.words
        texts = self.texts if rows is self.templates else None
        start = event.page * PAGE
        event.table.add_page(
            event.page,
            [evidence_cells(row, texts) for row in rows[start : start + PAGE]],
            event.table.generation,
        )

    @on(Select.Changed, "#evidence-order")
    def order_changed(self, event: Select.Changed) -> None:
        order = str(event.value)
        if order != self.order and order in ORDERS:
            self.order = order
            self.show_rows()

    @work(thread=True, exclusive=True, group="results-delta", exit_on_error=False)
    def delta_worker(self) -> None:
        """The delta against the session's parent (none without one)."""
        with open_store(self.db) as store:
            parent = store.sessions.get(self.session_id)["parent"]
            delta = session_delta(store, self.session_id).to_json() if parent else None
        self.post_message(self.DeltaRead(delta))

    @on(DeltaRead)
    def delta_shown(self, event: DeltaRead) -> None:
        self.delta = event.delta
        self.delta_read = True
        if event.delta is None:
            return
        self.query_one("#evidence-delta-box").display = True
        self.query_one("#evidence-delta", Static).update(render_delta(event.delta))

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "results-delta":
            self.delta_read = True
            self.query_one("#evidence-delta-box").display = True
            self.query_one("#evidence-delta", Static).update(
                Text(f"What changed could not be read: {error}", style="italic")
            )


def render_delta(delta: DeltaJSON) -> Text:
    """The delta as the tab shows it: its head, each measure before and after, the first
    errors gone and new (report.delta's lines: `kontest rerun` prints the same)."""
    text = Text("\n".join(delta_lines(delta)), style="bold")
    text.append("\n" + "\n".join(compact_rate_lines(delta)) + "\n")
    for title, count, rows in (
        ("Errors gone", delta["errors"]["gone"], delta["gone"]),
        ("Errors new", delta["errors"]["new"], delta["new"]),
    ):
        if not rows:
            continue
        shown = rows[:CHANGES_SHOWN]
        text.append(f"{title} ({len(shown)} of {count:,}):\n", style="bold")
        text.append("".join(f"  {error_line(row)}\n" for row in shown))
    return text
