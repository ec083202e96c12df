"""The Compare tab's tables for two or more ticked sessions: what `kontest compare` prints.

The widget lists the stored sessions it is offered (the results screen offers this session
and the others on the same KG), and for every set of two or more ticked ones reads them from
the store and asks the engine for the comparison (`report.stored_compare.comparison_entries`,
`report.compare.build_comparison`, `report.compare.render_comparison`): the tables are those
of `kontest compare SESSION... --format text`, number for number. It computes nothing itself.
Sessions on another KG or scope are refused by the engine; the reasons (one line per
difference, with each session's value) are notified and shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import ScrollableContainer, Vertical
from textual.message import Message
from textual.widgets import SelectionList, Static
from textual.worker import get_current_worker

from kontest_tui.errors import KontestError
from kontest_tui.paths import default_db_path
from kontest_tui.report.compare import CompareJSON, render_comparison
from kontest_tui.report.stored_compare import stored_comparison
from kontest_tui.store import Store
from kontest_tui.tui.widgets.ticks import TickList

TICK_TWO = "Tick two or more sessions (space) for the tables of `kontest compare`."


def compare_stored(db: str | Path | None, session_ids: Sequence[str]) -> tuple[CompareJSON, str]:
    """The compare JSON of these stored sessions and its text tables (run in a worker)."""
    with Store(Path(db) if db else default_db_path()) as store:
        # Settings that differ are shown above the tables, as --allow-differences does.
        data = stored_comparison(store, session_ids, allow_differences=True)
    return data, render_comparison(data, "text")


class CompareTables(Vertical):
    """Tick sessions; two or more show the tables of `kontest compare` for them."""

    DEFAULT_CSS = """
    CompareTables { height: auto; }
    CompareTables.-tables { height: 2fr; }
    CompareTables #compare-tables-scroll { display: none; }
    CompareTables.-tables #compare-tables-scroll { display: block; }
    CompareTables #compare-ticks { height: auto; max-height: 6; }
    CompareTables #compare-tables-note { color: $text-muted; padding: 0 1; height: auto; }
    CompareTables #compare-tables-scroll { height: 1fr; }
    CompareTables #compare-tables-view { width: auto; padding: 0 1; }
    """

    class Built(Message):
        """The ticked sessions were compared (the compare JSON and its text)."""

        def __init__(self, session_ids: tuple[str, ...], data: CompareJSON, text: str) -> None:
            super().__init__()
            self.session_ids = session_ids
            self.data = data
            self.text = text

    class Refused(Message):
        """The engine would not compare the ticked sessions (another KG or scope, ...)."""

        def __init__(self, session_ids: tuple[str, ...], reason: str, title: str) -> None:
            super().__init__()
            self.session_ids = session_ids
            self.reason = reason
            self.title = title

    def __init__(self, db: str | Path | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.db = db
        self.offered: tuple[tuple[str, str], ...] = ()  # (label, session id) listed
        self.asked: tuple[str, ...] = ()  # the sessions last compared (or being compared)
        self.data: CompareJSON | None = None  # the compare JSON shown (tests read it)

    def compose(self) -> ComposeResult:
        yield TickList[str](id="compare-ticks")
        yield Static(TICK_TWO, id="compare-tables-note", markup=False)
        with ScrollableContainer(id="compare-tables-scroll"):
            yield Static("", id="compare-tables-view", markup=False)

    def offer(self, choices: Sequence[tuple[str, str]]) -> None:
        """(label, session id) per session to offer, none ticked (the same offer again keeps
        the ticks: the results screen offers again when another tab is first shown)."""
        if tuple(choices) == self.offered:
            return
        self.offered = tuple(choices)
        ticks = self.query_one("#compare-ticks", SelectionList)
        ticks.clear_options()
        ticks.add_options([(label, session_id, False) for label, session_id in choices])
        if choices:
            ticks.highlighted = 0
        self.asked = ()

    @on(SelectionList.SelectedChanged, "#compare-ticks")
    def ticked(self) -> None:
        chosen = tuple(
            str(value) for value in self.query_one("#compare-ticks", SelectionList).selected
        )
        if chosen == self.asked:
            return
        self.asked = chosen
        self.data = None
        view = self.query_one("#compare-tables-view", Static)
        note = self.query_one("#compare-tables-note", Static)
        if len(chosen) < 2:
            note.update(TICK_TWO)
            view.update("")
            self.remove_class("-tables")  # the pair above takes the room (no empty table)
            return
        note.update(Text(f"Comparing {len(chosen)} sessions…", style="italic"))
        self.compare_worker(chosen)

    @work(thread=True, exclusive=True, group="compare-tables", exit_on_error=False)
    def compare_worker(self, chosen: tuple[str, ...]) -> None:
        worker = get_current_worker()
        try:
            data, text = compare_stored(self.db, chosen)
        except KontestError as error:
            # one line per difference, as `kontest compare` prints them
            lines = getattr(error, "lines", None) or [str(error)]
            self.post_message(self.Refused(chosen, "\n".join(lines), error.title))
            return
        except Exception as error:  # an engine bug must not crash the results
            self.post_message(
                self.Refused(chosen, f"{type(error).__name__}: {error}", "Compare failed")
            )
            return
        if not worker.is_cancelled:
            self.post_message(self.Built(chosen, data, text))

    @on(Built)
    def built(self, event: Built) -> None:
        if event.session_ids != self.asked:
            return  # the ticks changed meanwhile
        self.data = event.data
        self.query_one("#compare-tables-note", Static).update(
            f"{len(event.session_ids)} sessions, as `kontest compare "
            f"{' '.join(event.session_ids)}` prints them."
        )
        self.query_one("#compare-tables-view", Static).update(Text(event.text))
        self.add_class("-tables")  # two thirds of the tab's height

    @on(Refused)
    def refused(self, event: Refused) -> None:
        if event.session_ids != self.asked:
            return
        self.notify(event.reason, title=event.title, severity="warning", markup=False)
        self.query_one("#compare-tables-note", Static).update(
            Text(f"Not compared: {event.reason}", style="italic")
        )
        self.query_one("#compare-tables-view", Static).update("")
        self.remove_class("-tables")
