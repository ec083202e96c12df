"""Results: one stored session explored through the store's views, a page at a time.

Opened from a session id. The screen opens the session (the stored report as the header,
run.session.session_report, and the tree's first levels), holds the tabs and the keys. Each
tab is its own widget with its own workers (widgets/graph_pane.py, gap_pane.py,
error_list_pane.py, templates_pane.py, kinds_pane.py, compare_pane.py), sharing one protocol
(widgets/session_pane.py): composed empty, built once with `build(opened)` when first shown
(the Graph tab as soon as the session is open), focused on its `FOCUS`. The graph tree reads
a node's children when it is
opened, the detail pane one node's relations when it is selected, the Errors tab and the gap
lists a page of rows when it is drawn, and `n` / `p` one error (store.error_list). Nothing
holds or walks the whole session, so a 100,000-relation session opens as fast as a
10-relation one. Compare and Ensemble load the sessions they compare when their tab is shown;
the screen keeps what crosses tabs (a row chosen in a list is selected in the graph, the
stored sessions are listed once for Compare, Ensemble and `o`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Input, Static, TabbedContent

from kontest_tui.errors import KontestError
from kontest_tui.report.compare import ComparableSessions
from kontest_tui.report.explain import ExplanationCard
from kontest_tui.run.api import (
    Progress,
    ReportJSON,
    SessionSpec,
    check_model,
    model_presets,
    stored_spec,
)
from kontest_tui.store.search import NodeMatch
from kontest_tui.store.view_records import ErrorRow, RelationDetail, SessionHeader
from kontest_tui.tui.commands import GoToProvider
from kontest_tui.tui.export import deliver_files, export_stored_session
from kontest_tui.tui.sessions import (
    OpenedResults,
    find_comparable_sessions,
    find_nodes,
    open_results,
    open_store,
)
from kontest_tui.tui.widgets.compare_pane import ComparePane, EnsemblePane
from kontest_tui.tui.widgets.counts import ReportCounts
from kontest_tui.tui.widgets.error_list_pane import ErrorListPane
from kontest_tui.tui.widgets.find_bar import FindBar
from kontest_tui.tui.widgets.gap_pane import GapPane
from kontest_tui.tui.widgets.graph_pane import GraphPane
from kontest_tui.tui.widgets.key_footer import KeyFooter
from kontest_tui.tui.widgets.kinds_pane import KindsPane
from kontest_tui.tui.widgets.paged_table import PagedTable
from kontest_tui.tui.widgets.relation_tree import RelationTree
from kontest_tui.tui.widgets.session_pane import SessionPane
from kontest_tui.tui.widgets.templates_pane import TemplatesPane
from kontest_tui.tui.workers import SessionWorkFailed, WorkerFailures


class ResultsScreen(WorkerFailures, Screen[None]):
    """One finished (or stopped) session, explored through the store's views."""

    AUTO_FOCUS = "#relation-tree"  # focus it once: each focus change recomposes the footer
    COMMANDS = {GoToProvider}  # the palette goes to a node by label or id
    # The footer shows the keys that matter, as many as fit (widgets/key_footer.py): help
    # always, then the keys last in FOOTER_DROPS; the others (p, the tab keys, escape) are
    # in the help (f1) and the palette, and the tabs take the mouse.
    FOOTER_DROPS = (
        "results_copy",
        "results_other_model",
        "results_templates",
        "results_export",
        "results_probe",
        "results_find",
        "results_confirm",
        "results_errors_only",
        "results_save_card",
        "results_next_error",
    )
    BINDINGS = [
        Binding(
            "n",
            "step_error(1)",
            "Next error",
            id="results_next_error",
            priority=True,
            tooltip="The next error of the Errors tab's list (the clearest first), "
            "selected in the graph with its card on top of the right pane",
        ),
        Binding(
            "p",
            "step_error(-1)",
            "Prev error",
            id="results_previous_error",
            priority=True,
            show=False,
            tooltip="The previous error of the Errors tab's list",
        ),
        Binding(
            "s",
            "save_card",
            "Save",
            id="results_save_card",
            priority=True,
            tooltip="Save the card of the error shown as Markdown, SVG and HTML in the exports "
            "folder (in a browser: downloaded)",
        ),
        Binding(
            "slash",
            "find",
            "Find",
            id="results_find",
            priority=True,
            tooltip="Find a node by label, alias or id: the graph opens on it and the Errors "
            "tab lists its relations' errors; n / p walk the matches, escape clears",
        ),
        Binding(
            "f",
            "errors_only",
            "Errors only",
            id="results_errors_only",
            priority=True,
            tooltip="Show only the nodes with errors and the way to them (again: everything)",
        ),
        Binding(
            "r",
            "confirm_errors",
            "Confirm",
            id="results_confirm",
            priority=True,
            tooltip="Ask every error again (other phrasings; new samples at a temperature "
            "above 0) and mark each confirmed, mixed or not reproduced: confirmed ones come "
            "first, the Errors tab's Status column and filter show it",
        ),
        Binding(
            "R",
            "confirm_errors(True)",
            "Confirm this",
            id="results_confirm_one",
            priority=True,
            show=False,
            tooltip="Ask the error whose card is shown again (its status shows on the card)",
        ),
        Binding(
            "a",
            "probe",
            "Ask",
            id="results_probe",
            priority=True,
            tooltip="Ask the model about the selected relation now, in your own words (probe)",
        ),
        Binding(
            "o",
            "another_model",
            "Other model",
            id="results_other_model",
            priority=True,
            tooltip="Run the same session (scope, templates, kinds, options) with another "
            "model, then compare the two",
        ),
        Binding(
            "w",
            "export",
            "Export",
            id="results_export",
            priority=True,
            tooltip="Write the session explained (HTML, Markdown), its report (JSON, CSV) and "
            "its probes to the exports folder (in a browser: downloaded)",
        ),
        Binding(
            "y",
            "copy",
            "Copy",
            id="results_copy",
            priority=True,
            tooltip="Copy the card of the error shown (as text) to the clipboard, else the "
            "selected relation's first question",
        ),
        Binding(
            "W",
            "wrap_errors",
            "Wrap rows",
            id="results_wrap",
            priority=True,
            show=False,
            tooltip="Errors tab: wrap each row to the table's width (again: one line each, "
            "scrolling sideways)",
        ),
        Binding(
            "e",
            "edit_templates",
            "Templates",
            id="results_templates",
            priority=True,
            tooltip="Edit templates and re-run a new one",
        ),
        Binding(
            "t",
            "show_tab('tab-graph')",
            "Graph",
            id="results_graph",
            priority=True,
            show=False,
            tooltip="The model's knowledge graph",
        ),
        Binding(
            "g",
            "show_tab('tab-gap')",
            "Gap",
            id="results_gap",
            priority=True,
            show=False,
            tooltip="Knowledge gap per template",
        ),
        Binding(
            "x",
            "show_tab('tab-errors')",
            "Errors",
            id="results_errors",
            priority=True,
            show=False,
            tooltip="Every error, clearest first (or in the graph's order), filtered by kind",
        ),
        Binding(
            "c",
            "show_tab('tab-compare')",
            "Compare",
            id="results_compare",
            priority=True,
            show=False,
            tooltip="This session and another stored one on the same KG, side by side",
        ),
        Binding(
            "m",
            "show_tab('tab-ensemble')",
            "Ensemble",
            id="results_ensemble",
            priority=True,
            show=False,
            tooltip="Weighted ensemble vs majority vote over stored sessions on the same KG",
        ),
        Binding(
            "k",
            "show_tab('tab-kinds')",
            "Kinds",
            id="results_kinds",
            priority=True,
            show=False,
            tooltip="FactChecker, logic rules and variants of this session",
        ),
        Binding(
            "v",
            "show_tab('tab-templates')",
            "Templates",
            id="results_evidence",
            priority=True,
            show=False,
            tooltip="Per template and per varied word: what went wrong with its questions, "
            "worst first (and, for a session asked again, what changed)",
        ),
        Binding(
            "escape",
            "leave",
            "Home",
            id="results_home",
            show=False,
            tooltip="Clear the find (when there is one), else back to the start screen",
        ),
    ]

    class ResultsOpened(Message):
        """The stored report and the tree's roots were read."""

        def __init__(self, opened: OpenedResults) -> None:
            super().__init__()
            self.opened = opened

    class SessionsListed(Message):
        """The stored sessions on the same KG were looked up."""

        def __init__(self, sessions: ComparableSessions) -> None:
            super().__init__()
            self.sessions = sessions

    class SessionExported(Message):
        """The session's report and picture were written."""

        def __init__(self, paths: list[Path]) -> None:
            super().__init__()
            self.paths = paths

    def __init__(
        self,
        session_id: str,
        db: str | None = None,
        compare_with: str | None = None,
        tab: str | None = None,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self._db = db
        self.compare_with = compare_with  # a session to open Compare on (same scope, other model)
        self.open_tab = tab  # a tab to open on (Templates, for a session asked again)
        self.opened: OpenedResults | None = None  # what opening the session read
        self.header: SessionHeader | None = None
        self.report: ReportJSON | None = None
        self.ready = False  # the report and the roots are shown (tests and the benchmark wait)
        self.error_count = 0
        self.oracles: list[str] = []
        self.built_panes: set[str] = set()
        self.sessions: ComparableSessions | None = None  # stored sessions on the same KG
        self.confirming = False  # errors being asked again (r / R)

    @property
    def db(self) -> str | None:
        return self._db if self._db is not None else getattr(self.app, "db_path", None)

    @property
    def has_kinds(self) -> bool:
        return self.header is not None and tuple(self.header.kinds) != ("kontest",)

    @property
    def template_ids(self) -> list[str]:
        return list(self.header.template_ids) if self.header else []

    @property
    def gap_group(self) -> str | None:
        """The group the Gap tab lists (None before it was shown)."""
        return self.query_one(GapPane).gap_group

    # What the Graph tab shows, read (and `error_index` set) by the keys and the tests.

    @property
    def error_index(self) -> int | None:
        """Where n / p stand in the error list."""
        return self.query_one(GraphPane).error_index

    @error_index.setter
    def error_index(self, index: int | None) -> None:
        self.query_one(GraphPane).error_index = index

    @property
    def current_error(self) -> ErrorRow | None:
        return self.query_one(GraphPane).current_error

    @property
    def shown_card(self) -> ExplanationCard | None:
        return self.query_one(GraphPane).shown_card

    @property
    def shown_details(self) -> list[RelationDetail]:
        return self.query_one(GraphPane).shown_details

    def select_way(self, way: tuple[str, ...], error: ErrorRow | None = None) -> None:
        """Open the way to a node in the graph and select it."""
        self.query_one(GraphPane).select_way(way, error)

    def compose(self) -> ComposeResult:
        yield Header()
        yield ReportCounts("Reading the stored report…", id="result-counts", classes="counts")
        with TabbedContent(id="result-tabs"):
            db, session_id = self.db, self.session_id
            yield GraphPane("Graph", db=db, session_id=session_id, id="tab-graph")
            # The other panes are built when first shown, so the graph opens at once.
            yield GapPane("Gap", db=db, session_id=session_id, id="tab-gap")
            yield ErrorListPane("Errors", db=db, session_id=session_id, id="tab-errors")
            yield TemplatesPane("Templates", db=db, session_id=session_id, id="tab-templates")
            yield KindsPane("Kinds", db=db, session_id=session_id, id="tab-kinds")
            yield ComparePane(
                "Compare",
                db=db,
                session_id=session_id,
                compare_with=self.compare_with,
                id="tab-compare",
            )
            yield EnsemblePane("Ensemble", db=db, session_id=session_id, id="tab-ensemble")
        yield FindBar(db=self.db, session_id=self.session_id, id="find-bar")
        footer = KeyFooter()
        footer.show_command_palette = False  # ctrl+p still opens it (and f1 says so): the
        yield footer  # room goes to the keys (help must fit in 80 columns)

    # -- opening ---------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.sub_title = f"session {self.session_id}"
        self.open_worker(self.db, self.session_id)

    @work(thread=True, exclusive=True, group="results-open", exit_on_error=False)
    def open_worker(self, db: str | None, session_id: str) -> None:
        self.post_message(self.ResultsOpened(open_results(db, session_id)))

    @on(ResultsOpened)
    async def results_opened(self, event: ResultsOpened) -> None:
        opened = event.opened
        self.opened = opened
        self.header = opened.header
        self.report = opened.report
        self.error_count = opened.errors
        self.oracles = opened.oracles
        self.restore_sub_title()
        if not self.has_kinds:
            tabs = self.query_one("#result-tabs", TabbedContent)
            await tabs.remove_pane("tab-kinds")
        self.refresh_bindings()
        self.query_one("#result-counts", ReportCounts).show_report(self.report)
        graph = self.query_one(GraphPane)
        await graph.build(opened)
        self.built_panes.add("tab-graph")
        self.ready = True
        if opened.place is not None and self.compare_with is None:
            graph.restore_place(opened.place)
        if self.compare_with is not None:
            # Not the tree's focus first: TabbedContent follows the focus to its pane, and
            # a focus given after the switch would take the user back to the Graph tab.
            self.action_show_tab("tab-compare")
        elif self.open_tab is not None:
            self.action_show_tab(self.open_tab)
        else:
            self.query_one("#relation-tree", RelationTree).focus()

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "results-confirm":
            self.confirming = False
            self.restore_sub_title()
        if group == "results-open":
            self.query_one("#result-counts", ReportCounts).update(
                Text(f"Could not open session {self.session_id}: {error}", style="italic")
            )

    # -- probing the selected relation ------------------------------------------------------

    @property
    def selected_relation_id(self) -> str | None:
        """The relation selected (GraphPane.selected_relation_id)."""
        return self.query_one(GraphPane).selected_relation_id

    def action_probe(self) -> None:
        """Ask the model about the selected relation now (`selected_relation_id`)."""
        from kontest_tui.tui.screens.probe import ProbeScreen

        relation_id = self.selected_relation_id
        if relation_id is None:
            self.notify("Select a node below a root first.", markup=False)
            return
        self.app.push_screen(ProbeScreen(self.db, self.session_id, relation_id))

    # -- confirming errors: asked again, each marked confirmed, mixed or not reproduced ------

    class ConfirmProgress(Message):
        """Answers received of those the confirmation asks."""

        def __init__(self, done: int, total: int) -> None:
            super().__init__()
            self.done = done
            self.total = total

    class ErrorsConfirmed(Message):
        """The errors were asked again and their statuses stored (`summary` in words); the
        card's error as it now stands in the list (None: no card shown)."""

        def __init__(self, summary: str, error: ErrorRow | None) -> None:
            super().__init__()
            self.summary = summary
            self.error = error

    def action_confirm_errors(self, only_shown: bool = False) -> None:
        """`r`: every error of the session asked again (run.api.confirm_errors); `R`: the
        error whose card is shown. A worker asks; the Errors tab and the card are read again
        when it is done."""
        if self.confirming:
            self.notify("Errors are being asked again already.", markup=False)
            return
        graph = self.query_one(GraphPane)
        chosen: tuple[int, ...] = ()
        if only_shown:
            if graph.card_error is None:
                self.notify("Show an error's card first (n, or Enter in the Errors tab).")
                return
            chosen = (graph.card_error,)
        elif not self.error_count:
            self.notify("This session has no errors to confirm.", markup=False)
            return
        self.confirming = True
        self.sub_title = "asking the errors again…"
        self.notify(
            "Asking the error again…" if chosen else f"Asking {self.error_count} errors again…",
            markup=False,
        )
        self.confirm_worker(chosen, graph.card_error)

    @work(thread=True, exclusive=True, group="results-confirm", exit_on_error=False)
    def confirm_worker(self, chosen: tuple[int, ...], shown: int | None) -> None:
        import asyncio
        import time

        from kontest_tui.report.confirmation import summary_line
        from kontest_tui.run.api import ExecutorEvents, confirm_errors

        last = [0.0]

        def progress(counts: Progress) -> None:
            now = time.monotonic()
            if now - last[0] > 0.2 or counts.finished >= counts.total:
                last[0] = now
                self.post_message(self.ConfirmProgress(counts.finished, counts.total))

        store = open_store(self.db)
        try:
            outcome = asyncio.run(
                confirm_errors(
                    store,
                    self.session_id,
                    verdict_ids=chosen,
                    events=ExecutorEvents(on_progress=progress),
                )
            )
            error = store.error_list.error_of(self.session_id, shown) if shown else None
        finally:
            store.close()
        line = summary_line(outcome.confirmations, outcome.calls, outcome.seconds, outcome.draws)
        self.post_message(self.ErrorsConfirmed(line, error))

    @on(ConfirmProgress)
    def confirm_progress(self, event: ConfirmProgress) -> None:
        self.sub_title = f"asking the errors again: {event.done}/{event.total} answers"

    @on(ErrorsConfirmed)
    def errors_confirmed(self, event: ErrorsConfirmed) -> None:
        """The statuses stored: the Errors tab listed again (confirmed errors first), the
        card read again with its status, n / p going on from its new place."""
        self.confirming = False
        self.restore_sub_title()
        self.notify(event.summary, title="Confirmed", markup=False, timeout=10)
        if "tab-errors" in self.built_panes:
            self.query_one(ErrorListPane).refresh_list()
        graph = self.query_one(GraphPane)
        if event.error is not None:
            graph.current_error = event.error
            graph.error_index = event.error.index
        else:
            graph.error_index = None
        if graph.shown_node is not None:
            graph.show_detail(graph.shown_node)

    def restore_sub_title(self) -> None:
        if self.header is not None:
            self.sub_title = f"{self.header.model} on {self.header.kg_title or self.header.kg_name}"

    # -- same scope, another model ----------------------------------------------------------

    class AnotherModelReady(Message):
        """This session's spec with another model, checked: ready to run."""

        def __init__(self, spec: SessionSpec) -> None:
            super().__init__()
            self.spec = spec

    def action_another_model(self) -> None:
        """Ask for a model spec, then run this session's spec with it and compare the two."""
        from kontest_tui.tui.screens.model_choice import ModelChoiceScreen

        current = self.header.model if self.header else ""

        def chosen(spec: str | None) -> None:
            if spec:
                self.notify(f"Checking {spec}…", markup=False)
                self.another_model_worker(spec)

        used = [choice.model for choice in self.sessions.offered] if self.sessions else []
        presets = model_presets()
        self.app.push_screen(ModelChoiceScreen(current, presets, used), chosen)

    @work(thread=True, exclusive=True, group="another-model", exit_on_error=False)
    def another_model_worker(self, model: str) -> None:
        """The stored spec (same KG snapshot, scope, templates, kinds, options, seed) with
        `model`; a model that does not parse or answer is one notification."""
        store = open_store(self.db)
        try:
            spec = replace(stored_spec(store, self.session_id), model=model)
        finally:
            store.close()
        problem, _said = check_model(spec)
        if problem is not None:
            problem.raise_error()
        self.post_message(self.AnotherModelReady(spec))

    @on(AnotherModelReady)
    def another_model_ready(self, event: AnotherModelReady) -> None:
        start = getattr(self.app, "start_run", None)
        if start is not None:
            start(event.spec, compare_with=self.session_id)

    # -- the graph's keys: the card, finding errors -----------------------------------------

    def action_save_card(self) -> None:
        self.query_one(GraphPane).save_card()

    def action_step_error(self, offset: int) -> None:
        """Next/previous error of the Errors tab's list (its order and filter), selected in
        the graph with the way to it opened; after a find, outside the Errors tab, the
        next/previous node it matched."""
        active = self.query_one("#result-tabs", TabbedContent).active
        if self.found and active != "tab-errors":
            match = self.query_one(FindBar).step(offset)
            self.query_one(GraphPane).post_message(GraphPane.WayFound(match.way))
            return
        errors = self.query_one(ErrorListPane)
        graph = self.query_one(GraphPane)
        graph.step_worker(graph.error_index, offset, errors.where, errors.error_order)

    def action_errors_only(self) -> None:
        if self.query_one("#result-tabs", TabbedContent).active != "tab-graph":
            self.action_show_tab("tab-graph")
        self.query_one(GraphPane).toggle_errors_only()

    # -- find: a node by label, alias or id ------------------------------------------------

    @property
    def found(self) -> list[NodeMatch]:
        """The nodes the find matched, best first ([] without a find)."""
        return self.query_one(FindBar).matches

    def action_find(self) -> None:
        self.query_one(FindBar).open()

    @on(FindBar.Found)
    def nodes_found(self, event: FindBar.Found) -> None:
        """The first match selected in the graph (unless the Errors tab is shown), and the
        Errors tab listing the errors on relations of the best matches."""
        self.query_one(ErrorListPane).find(event.best, event.names)
        if self.query_one("#result-tabs", TabbedContent).active == "tab-errors":
            self.focus_pane("tab-errors")
        else:
            self.query_one(GraphPane).post_message(GraphPane.WayFound(event.matches[0].way))

    @on(FindBar.Cleared)
    def find_cleared(self) -> None:
        """n / p walk the errors again, the Errors tab lists them all."""
        self.query_one(ErrorListPane).find((), "")
        self.focus_pane(self.query_one("#result-tabs", TabbedContent).active)

    def action_leave(self) -> None:
        """Escape: the find cleared (its field closed) when there is one, else back to the
        start screen."""
        bar = self.query_one(FindBar)
        if bar.matches or bar.display:
            bar.clear()
        else:
            self.app.action_go_home()  # type: ignore[attr-defined]

    def find_nodes_now(self, text: str) -> list[NodeMatch]:
        """The nodes matching `text` (store.search; blocking: the palette calls it in a
        thread)."""
        return find_nodes(self.db, self.session_id, text)

    def go_to(self, match: NodeMatch) -> None:
        """The palette's "go to": the node selected in the graph (n / p still walk the
        errors)."""
        self.query_one(GraphPane).post_message(GraphPane.WayFound(match.way))

    # -- copy and wrap ---------------------------------------------------------------------

    def action_copy(self) -> None:
        """Copy the card of the error shown as text, else the selected relation's question."""
        self.query_one(GraphPane).copy_shown()

    def action_wrap_errors(self) -> None:
        table = self.query("#error-table")
        if not table:
            self.notify("The Errors tab (x) shows the rows to wrap.", markup=False)
            return
        paged = table.first(PagedTable)
        paged.set_wrap(not paged.wrap)

    @on(GraphPane.WayFound)
    def way_found(self, event: GraphPane.WayFound) -> None:
        """A node to select (an error's, a gap's): the graph shown, the node selected."""
        if self.query_one("#result-tabs", TabbedContent).active != "tab-graph":
            self.action_show_tab("tab-graph")
        self.select_way(event.way, event.error)

    # -- tabs -------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The Kinds key exists only for sessions that asked other test kinds; while the
        find field has the focus, the letter keys type into it."""
        if action != "leave" and isinstance(self.focused, Input):
            return False
        if action == "show_tab" and parameters == ("tab-kinds",):
            return self.has_kinds
        return True

    def action_show_tab(self, tab: str) -> None:
        """Switch tab and focus what is in it (focus left in a hidden pane would switch back)."""
        tabs = self.query_one("#result-tabs", TabbedContent)
        tabs.query_one("ContentTabs").focus()
        tabs.active = tab
        if tab in self.built_panes or tab == "tab-graph":
            self.focus_pane(tab)
        # otherwise tab_shown builds the pane, then focuses it

    def focus_pane(self, tab: str) -> None:
        """Focus the main widget of a tab (the tabs themselves when it has none)."""
        pane = next(iter(self.query(f"#{tab}").results(SessionPane)), None)
        found = self.query(pane.FOCUS) if pane is not None and pane.FOCUS else None
        if found:
            found.first().focus()

    @on(TabbedContent.TabActivated, "#result-tabs")
    async def tab_shown(self, event: TabbedContent.TabActivated) -> None:
        """Tabs are built when first shown."""
        if event.pane.id and self.ready:
            await self.build_pane(event.pane.id)

    async def build_pane(self, pane_id: str) -> None:
        """Build a tab once (SessionPane.build, every tab's one signature); a tab that
        offers the stored sessions gets them (listed once for all)."""
        if pane_id in self.built_panes or self.opened is None:
            return
        self.built_panes.add(pane_id)
        pane = self.query_one(f"#{pane_id}", SessionPane)
        await pane.build(self.opened)
        if pane.LISTS_SESSIONS:
            if self.sessions is None:
                self.list_sessions()
            else:
                self.show_sessions()
        if self.query_one("#result-tabs", TabbedContent).active == pane_id:
            self.focus_pane(pane_id)

    # -- rows chosen in the Errors and Gap tabs: selected in the graph ---------------------

    @on(ErrorListPane.ErrorChosen)
    def error_chosen(self, event: ErrorListPane.ErrorChosen) -> None:
        graph = self.query_one(GraphPane)
        graph.children_loaded(graph.ChildrenLoaded({}, event.way, event.error))

    @on(ErrorListPane.OrderChanged)
    def error_order_changed(self) -> None:
        self.error_index = None  # n / p start again in the new list

    @on(GapPane.GapChosen)
    def gap_chosen(self, event: GapPane.GapChosen) -> None:
        graph = self.query_one(GraphPane)
        graph.children_loaded(graph.ChildrenLoaded({}, event.way))

    # -- export and templates ---------------------------------------------------------------

    def action_export(self) -> None:
        self.notify("Exporting…", markup=False)
        self.export_worker()

    @work(thread=True, exclusive=True, group="results-export", exit_on_error=False)
    def export_worker(self) -> None:
        try:
            paths = export_stored_session(self.db, self.session_id)
        except (KontestError, OSError) as error:
            self.post_message(SessionWorkFailed("export", str(error), "Export failed"))
            return
        self.post_message(self.SessionExported(paths))

    @on(SessionExported)
    def session_exported(self, event: SessionExported) -> None:
        if deliver_files(self.app, event.paths, "Export"):
            return
        folder = event.paths[0].parent
        names = ", ".join(path.name for path in event.paths)
        self.notify(f"Wrote {names} to {folder}", title="Export", markup=False, timeout=10)

    def action_edit_templates(self) -> None:
        """The template editor on this session (it reads the session's templates and first
        relations itself, and asks a new template in it)."""
        from kontest_tui.tui.screens.curation import TemplateEditorScreen

        self.app.push_screen(TemplateEditorScreen(self.session_id, db=self.db))

    def on_screen_resume(self) -> None:
        """Back from the template editor: a session that got a template's answers meanwhile
        is shown again from the start, with them."""
        extended: set[str] = getattr(self.app, "extended_sessions", set())
        if self.session_id in extended:
            extended.discard(self.session_id)
            self.app.switch_screen(ResultsScreen(self.session_id, self._db))

    # -- compare and ensemble over stored sessions on the same KG ---------------------------

    def list_sessions(self) -> None:
        self.list_sessions_worker(self.header.kg_names if self.header else ())

    @work(thread=True, exclusive=True, group="results-sessions", exit_on_error=False)
    def list_sessions_worker(self, kg_names: tuple[str, ...]) -> None:
        try:
            found = find_comparable_sessions(self.db, kg_names, self.session_id)
        except KontestError as error:
            self.post_message(SessionWorkFailed("sessions", str(error), error.title))
            return
        self.post_message(self.SessionsListed(found))

    @on(SessionsListed)
    def sessions_listed(self, event: SessionsListed) -> None:
        self.sessions = event.sessions
        self.show_sessions()

    def show_sessions(self) -> None:
        """Offer the stored sessions in the built tabs that list them (Compare: the newest
        is shown)."""
        if self.sessions is None or self.header is None:
            return
        for pane in self.query(SessionPane):
            if pane.LISTS_SESSIONS and pane.id in self.built_panes:
                pane.show_sessions(self.sessions, self.header)

    @on(SessionWorkFailed)
    def session_work_failed(self, event: SessionWorkFailed) -> None:
        self.notify(event.text, title=event.title, severity="error", markup=False)
        targets = {"compare": ["#compare-view"], "sessions": ["#compare-note", "#ensemble-note"]}
        for target in targets.get(event.target, []):
            for widget in self.query(target):
                if isinstance(widget, Static):
                    widget.update(Text(f"{event.title}: {event.text}", style="italic"))
