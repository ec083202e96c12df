"""The results' Compare and Ensemble tabs: this session beside stored ones on the same KG.

Each tab is its own `TabPane`: built when first shown (`build`), offered the stored sessions
the results screen looked up (`show_sessions`), and running its own workers through
tui.sessions (compare_pair, describe_ensemble). A failure is posted as `SessionWorkFailed`,
which the screen shows where it was asked.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Select, SelectionList, Static
from textual.worker import get_current_worker

from kontest_tui.errors import KontestError
from kontest_tui.report.compare import ComparableSessions, StoredSessionChoice
from kontest_tui.store.view_records import SessionHeader
from kontest_tui.tui.sessions import (
    OpenedResults,
    PairCompared,
    compare_pair,
    describe_ensemble,
)
from kontest_tui.tui.widgets.compare_tables import CompareTables
from kontest_tui.tui.widgets.session_compare import SessionCompare
from kontest_tui.tui.widgets.session_pane import SessionPane
from kontest_tui.tui.widgets.ticks import TickList
from kontest_tui.tui.workers import SessionWorkFailed

LOOKING = "Looking for stored sessions on the same KG…"
THIS = "this"  # the ensemble list's value for the session on screen
ENSEMBLE_PRESELECT = 4  # stored sessions ticked at first (newest), besides this one


def describe_left_out(sessions: ComparableSessions | None) -> str:
    """The line naming the stored sessions not offered (and why); "" when none."""
    left_out = sessions.left_out if sessions else []
    return ("Not offered: " + "; ".join(left_out) + ".") if left_out else ""


class ComparePane(SessionPane):
    """The Compare tab: this session and one stored session chosen, side by side."""

    FOCUS = "#compare-select"
    LISTS_SESSIONS = True

    class ComparisonBuilt(Message):
        """This session and a stored one were compared."""

        def __init__(self, session_id: str, compared: PairCompared) -> None:
            super().__init__()
            self.session_id = session_id
            self.compared = compared

    def __init__(
        self,
        title: str,
        *,
        db: str | None,
        session_id: str,
        compare_with: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(title, db=db, session_id=session_id, id=id)
        self.compare_with = compare_with  # a session to open Compare on (same scope, other model)

    async def build(self, opened: OpenedResults) -> None:
        """Mount the tab's widgets (the first time it is shown)."""
        header = opened.header
        name = header.kg_names[0] if header.kg_names else "this KG"
        await self.mount_all(
            [
                Select[str](
                    [], id="compare-select", prompt=f"a stored session on {name}", allow_blank=True
                ),
                Static(LOOKING, id="compare-note", classes="note", markup=False),
                VerticalScroll(
                    SessionCompare("", id="compare-view", markup=False),
                    id="compare-scroll",
                    classes="pane",
                ),
                CompareTables(self.db, id="compare-tables"),
            ]
        )

    def show_sessions(self, sessions: ComparableSessions, header: SessionHeader) -> None:
        """Offer the stored sessions (the newest, or the one asked for, is shown)."""
        if not self.query("#compare-select"):
            return
        offered = sessions.offered
        total = header.relations
        self.offered = {choice.id: choice for choice in offered}
        self.total = total
        name = header.kg_names[0] if header.kg_names else "this KG"
        left_out = describe_left_out(sessions)
        this_line = f"this session · {header.model}"
        select = self.query_one("#compare-select", Select)
        if offered:
            note = f"{len(offered)} stored session{'s' if len(offered) != 1 else ''} on {name}."
            select.set_options(  # names of sessions, models and KGs: text, never markup
                [(Content(choice.describe(total)), choice.id) for choice in offered]
            )
            wanted = [choice.id for choice in offered if choice.id == self.compare_with]
            select.value = wanted[0] if wanted else offered[0].id
        else:
            note = (
                f"No other stored session on {name} to compare with: press o to run this "
                "scope with another model."
            )
            self.query_one("#compare-view", SessionCompare).update("")
        self.query_one("#compare-note", Static).update(" ".join((note, left_out)).strip())
        self.query_one(CompareTables).offer(
            [(this_line, self.session_id), *((c.describe(total), c.id) for c in offered)]
        )

    @on(Select.Changed, "#compare-select")
    def compare_chosen(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.query_one("#compare-view", SessionCompare).update(
                Text(f"Loading session {event.value}…", style="italic")
            )
            self.compare_worker(event.value)

    @work(thread=True, exclusive=True, group="results-compare", exit_on_error=False)
    def compare_worker(self, session_id: str) -> None:
        worker = get_current_worker()
        try:
            compared = compare_pair(self.db, self.session_id, session_id)
        except KontestError as error:
            self.post_message(SessionWorkFailed("compare", str(error), error.title))
            return
        except Exception as error:  # an engine bug must not crash the results
            self.post_message(SessionWorkFailed("compare", str(error), "Compare failed"))
            return
        if not worker.is_cancelled:
            self.post_message(self.ComparisonBuilt(session_id, compared))

    @on(ComparisonBuilt)
    def comparison_built(self, event: ComparisonBuilt) -> None:
        if self.query_one("#compare-select", Select).value != event.session_id:
            return  # another session was chosen meanwhile
        comparison = event.compared.comparison
        self.query_one("#compare-view", SessionCompare).show_comparison(
            comparison,
            event.compared.names,
            f"{comparison.left.get('model', '')} · {self.session_id}",
            f"{comparison.right.get('model', '')} · {event.session_id}",
        )


class EnsemblePane(SessionPane):
    """The Ensemble tab: weighted ensemble vs majority vote over the ticked sessions."""

    FOCUS = "#ensemble-select"
    LISTS_SESSIONS = True

    class EnsembleBuilt(Message):
        """The ensemble over the ticked sessions was cross-validated and rendered."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(
        self,
        title: str,
        *,
        db: str | None,
        session_id: str,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(title, db=db, session_id=session_id, id=id)
        self.ensemble_asked: tuple[str, ...] | None = None  # the sessions last ensembled
        self.offered: dict[str, StoredSessionChoice] = {}  # the sessions offered, by id
        self.total = 0  # this session's relations

    async def build(self, opened: OpenedResults) -> None:
        """Mount the tab's widgets (the first time it is shown)."""
        await self.mount_all(
            [
                TickList[str](id="ensemble-select", classes="pane"),
                Static(LOOKING, id="ensemble-note", classes="note", markup=False),
                VerticalScroll(Static("", id="ensemble-view", markup=False), id="ensemble-scroll"),
            ]
        )

    def show_sessions(self, sessions: ComparableSessions, header: SessionHeader) -> None:
        """Offer the stored sessions to tick (the newest of the same scope ticked)."""
        if not self.query("#ensemble-select"):
            return
        offered = sessions.offered
        total = header.relations
        self.offered = {choice.id: choice for choice in offered}
        self.total = total
        name = header.kg_names[0] if header.kg_names else "this KG"
        left_out = describe_left_out(sessions)
        this_line = f"this session · {header.model}"
        choices = self.query_one("#ensemble-select", SelectionList)
        choices.clear_options()
        choices.add_option((this_line, THIS, True))
        # Only sessions of the same scope start ticked: one that asked other relations is
        # one Compare refuses; it can still be ticked by hand.
        same_scope = [c for c in offered if c.shared == c.relations == total]
        ticked = {c.id for c in same_scope[:ENSEMBLE_PRESELECT]}
        choices.add_options(
            (choice.describe(total), choice.id, choice.id in ticked) for choice in offered
        )
        if offered:
            note = "Tick two or more sessions (space); the ensemble follows the ticks."
        else:
            note = (
                f"The ensemble needs two or more sessions on {name}: no other stored one "
                "has answers to its relations. Press o to run this scope with another model."
            )
        self.query_one("#ensemble-note", Static).update(" ".join((note, left_out)).strip())
        self.ensemble_ticked()

    @on(SelectionList.SelectedChanged, "#ensemble-select")
    def ensemble_ticked(self) -> None:
        chosen = tuple(self.query_one("#ensemble-select", SelectionList).selected)
        if chosen == self.ensemble_asked:
            return
        self.ensemble_asked = chosen
        view = self.query_one("#ensemble-view", Static)
        if len(chosen) < 2:
            view.update(Text("The ensemble needs two or more ticked sessions.", style="italic"))
            return
        other_scope = [
            choice
            for value in chosen
            if (choice := self.offered.get(value)) is not None
            and not choice.shared == choice.relations == self.total
        ]
        if other_scope:  # Compare's rule: sessions of another scope are not put together
            lines = [
                f"{choice.model} ({choice.id}) shares {choice.shared}/{self.total} relations"
                + (f" and asked {choice.relations}" if choice.relations != choice.shared else "")
                for choice in other_scope
            ]
            why = (
                "Not ensembled: another scope ("
                + "; ".join(lines)
                + "). An ensemble is over the same relations, as Compare's tables are: "
                "untick it, or run this scope with its model (o)."
            )
            view.update(Text(why, style="italic"))
            self.notify(why, title="Ensemble", severity="warning", markup=False)
            return
        view.update(
            Text(f"Cross-validating the ensemble of {len(chosen)} sessions…", style="italic")
        )
        self.ensemble_worker(chosen)

    @work(thread=True, exclusive=True, group="results-ensemble", exit_on_error=False)
    def ensemble_worker(self, chosen: tuple[str, ...]) -> None:
        worker = get_current_worker()
        try:
            ids = [self.session_id if value == THIS else value for value in chosen]
            text = describe_ensemble(self.db, ids)
        except KontestError as error:
            text = f"Ensemble: {error}"
        except Exception as error:  # an engine bug must not crash the results
            text = f"Ensemble failed: {error}"
        if not worker.is_cancelled:
            self.post_message(self.EnsembleBuilt(text))

    @on(EnsembleBuilt)
    def ensemble_built(self, event: EnsembleBuilt) -> None:
        self.query_one("#ensemble-view", Static).update(Text(event.text))
