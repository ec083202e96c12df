"""The start screen: recent sessions from the store's summaries (stored columns only, one
query: store.views), New session, Open a sample."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Header, Label, Select, Static

from kontest_tui.errors import KontestError
from kontest_tui.kg.io import list_samples
from kontest_tui.run.api import headline_title
from kontest_tui.store.view_records import SessionSummary
from kontest_tui.tui.sessions import list_sessions
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.tui.app import KontestApp


class StartScreen(WorkerFailures, Screen[None]):
    """Where `kontest` opens: pick up a session or start a new one."""

    class SessionsListed(Message):
        """The recent sessions were read (`note` says why there are none, if it can)."""

        def __init__(self, sessions: list[SessionSummary], note: str) -> None:
            super().__init__()
            self.sessions = sessions
            self.note = note

    class SamplesListed(Message):
        """The bundled sample KGs were listed."""

        def __init__(self, samples: list[str]) -> None:
            super().__init__()
            self.samples = samples

    BINDINGS = [
        Binding(
            "n",
            "app.new_session",
            "New session",
            id="new_session",
            tooltip="Open the new-session wizard",
        ),
        Binding(
            "s",
            "open_sample",
            "Open sample",
            id="open_sample",
            tooltip="Start a session on the chosen sample KG",
        ),
        Binding(
            "r", "refresh", "Refresh", id="refresh_sessions", tooltip="Reload the sessions list"
        ),
        Binding(
            "u",
            "resume",
            "Resume",
            id="resume_session",
            tooltip="Go on with the chosen cancelled or unfinished session (asks only what is "
            "missing, like kontest run --resume ID)",
        ),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Recent sessions", classes="title")
        yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Static("", id="sessions-note", classes="hint", markup=False)
        with Horizontal(classes="buttons"):
            yield Button("New session", id="new-session", variant="primary")
            yield Label("Sample:")
            yield Select[str]([], id="sample-select", prompt="sample", allow_blank=True)
            yield Button("Open sample", id="open-sample")
        yield Footer()

    COLUMNS = ("Session", "Model", "KG", "Date", "Status", "Error rate", "Kinds")
    shown: list[SessionSummary] = []  # the rows on screen (the same list is not shown again)

    def on_mount(self) -> None:
        self.fill_table(self.query_one("#sessions", DataTable), [])
        self.action_refresh()

    def action_refresh(self) -> None:
        self.load_sessions(cast("KontestApp", self.app).db_path)
        self.load_samples()

    def on_screen_resume(self) -> None:
        """Shown again (after a run, a results screen): the list is read again."""
        self.load_sessions(cast("KontestApp", self.app).db_path)

    def action_resume(self) -> None:
        table = self.query_one("#sessions", DataTable)
        if table.row_count == 0:
            self.notify("No session to resume.", severity="warning", markup=False)
            return
        row = table.get_row_at(table.cursor_row)
        session_id, status = str(row[0]), str(row[4])
        if status == "done":
            self.notify(
                f"Session {session_id} is done: nothing to resume.",
                severity="warning",
                markup=False,
            )
            return
        self.app.resume_stored_session(session_id)  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True, group="sessions", exit_on_error=False)
    def load_sessions(self, db: str | None) -> None:
        try:
            sessions = list_sessions(db)
        except KontestError as error:
            self.post_message(self.SessionsListed([], str(error)))
            return
        self.post_message(self.SessionsListed(sessions, ""))

    @on(SessionsListed)
    def sessions_listed(self, event: SessionsListed) -> None:
        self.show_sessions(event.sessions, event.note)

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "sessions":
            self.show_sessions([], "could not be listed (see the notification)")
        elif group == "samples":
            self.show_samples(["places", "music", "subdivisions"])

    def show_sessions(self, sessions: list[SessionSummary], note: str) -> None:
        table = self.query_one("#sessions", DataTable)
        if sessions != self.shown or not sessions:
            self.shown = list(sessions)
            self.fill_table(table, sessions)
        self.describe_sessions(sessions, note)

    def fill_table(self, table: DataTable[str | Text], sessions: list[SessionSummary]) -> None:
        """The rows, under columns as wide as what they hold (DataTable's own widths lag
        behind rows added to a table already drawn)."""
        rows = [
            (
                summary.id,
                summary.model,
                summary.kg,
                summary.date,
                summary.status,
                rate_cell(summary),
                ", ".join(summary.kinds),
            )
            for summary in sessions
        ]
        table.clear(columns=True)
        for index, title in enumerate(self.COLUMNS):
            table.add_column(title, width=max([len(title), *(len(row[index]) for row in rows)]))
        for row in rows:  # names from files and specs (id, model, KG): text, never markup
            table.add_row(*(Text(cell) for cell in row[:3]), *row[3:], key=row[0])

    def describe_sessions(self, sessions: list[SessionSummary], note: str) -> None:
        if note:
            self.query_one("#sessions-note", Static).update(f"Sessions: {note}")
        elif not sessions:
            self.query_one("#sessions-note", Static).update(
                "No sessions yet: press n for a new session or open a sample."
            )
        else:
            self.query_one("#sessions-note", Static).update(
                f"{len(sessions)} session(s). Enter opens the results; u resumes a "
                "cancelled or unfinished one."
            )

    @work(thread=True, exclusive=True, group="samples", exit_on_error=False)
    def load_samples(self) -> None:
        try:
            samples = list_samples()
        except KontestError:
            samples = ["places", "music", "subdivisions"]
        self.post_message(self.SamplesListed(samples))

    @on(SamplesListed)
    def samples_listed(self, event: SamplesListed) -> None:
        self.show_samples(event.samples)

    def show_samples(self, samples: list[str]) -> None:
        select = self.query_one("#sample-select", Select)
        select.set_options([(name, name) for name in samples])
        if samples:
            select.value = "places" if "places" in samples else samples[0]

    @on(Button.Pressed, "#new-session")
    def new_session_pressed(self) -> None:
        cast("KontestApp", self.app).action_new_session()

    @on(Button.Pressed, "#open-sample")
    def action_open_sample(self) -> None:
        value = self.query_one("#sample-select", Select).value
        sample = value if isinstance(value, str) else "places"
        cast("KontestApp", self.app).open_wizard(kg=sample)

    @on(DataTable.RowSelected, "#sessions")
    def session_chosen(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            cast("KontestApp", self.app).open_stored_session(str(event.row_key.value))


def rate_cell(summary: SessionSummary) -> str:
    """The session's rate: its KONTEST error rate, or for a session without KONTEST questions
    its own headline rate and what it is (`29.1% hallucination rate`); `-` when it was never
    evaluated. A session not done (cancelled in the explorer, evaluated on the answers it
    got; turns failed) says `so far`: its rate may change once resumed."""
    if summary.headline_measure and summary.headline_measure != "kontest":
        rate = summary.headline_rate
        title = f" {headline_title(summary.headline_measure)}"
    else:
        rate, title = summary.error_rate, ""
    if rate is None:
        return "-"
    partial = " so far" if summary.status != "done" else ""
    return f"{rate * 100:.1f}%{title}{partial}"
