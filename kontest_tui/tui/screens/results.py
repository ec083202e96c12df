"""Results: the model's knowledge graph with errors, detail, gap bars, error table, compare, ensemble.

Everything shown comes from the session's Evaluation (oracles.evaluate) and its answers;
this screen only arranges it. A session that asked other test kinds (variants, FactChecker,
logic rules) gets a Kinds tab with their report sections; a KONTEST-only one looks as before.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import (
    DataTable,
    Header,
    OptionList,
    Select,
    SelectionList,
    Static,
    TabbedContent,
    TabPane,
)
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Answer, Verdict
from kontest_tui.errors import KontestError
from kontest_tui.kg.names import NodeNames
from kontest_tui.oracles.coverage import INTERSECTION
from kontest_tui.oracles.ontological import error_path
from kontest_tui.report.compare import ComparableSessions, SessionComparison, compare_sessions
from kontest_tui.tui.export import export_session
from kontest_tui.tui.plan import SessionResult, evaluated
from kontest_tui.tui.sessions import (
    describe_ensemble,
    find_comparable_sessions,
    load_session_result,
)
from kontest_tui.tui.views import (
    KIND_ORACLES,
    RelationView,
    build_relation_views,
    conversation_label,
    fill_conversation_views,
    gap_relations,
    is_kontest,
    report_of,
    verdicts_of,
)
from kontest_tui.tui.widgets.compare_tables import CompareTables
from kontest_tui.tui.widgets.counts import ReportCounts, report_oracles
from kontest_tui.tui.widgets.gap_bars import GapBars
from kontest_tui.tui.widgets.key_footer import KeyFooter
from kontest_tui.tui.widgets.kind_sections import KindSections
from kontest_tui.tui.widgets.relation_tree import (
    ANSWER_STYLES,
    RelationTree,
    describe_answer,
)
from kontest_tui.tui.widgets.session_compare import SessionCompare
from kontest_tui.tui.workers import WorkerFailures

ALL = "all"
LOOKING = "Looking for stored sessions on the same KG…"
THIS = "this"  # the ensemble list's value for the session on screen
ENSEMBLE_PRESELECT = 4  # stored sessions ticked at first (newest), besides this one
RAW_CHARS = 2000  # how much of one raw answer the detail pane shows


def describe_answer_word(answer: Answer | None) -> tuple[str, str]:
    """yes/no/?/idk/· and its style, for an atomic answer."""
    return ANSWER_STYLES.get(answer, ANSWER_STYLES[None])


def describe_verdict(verdict: Verdict, names: NodeNames) -> Text:
    """One error verdict as a line: oracle, template, answers, and what it means (by label)."""
    text = Text()
    path = error_path(verdict)
    if len(path) >= 3:
        text.append("✗ ontological", style="bold red")
        text.append(f" ({verdict.template_id}): missing edge ")
        text.append(f"{names.name(path[0])} → {names.name(path[-1])}", style="bold red reverse")
        text.append(" (answered no), implied by the yes-path ")
        text.append(" → ".join(names.name(node_id) for node_id in path), style="bold")
        return text
    style = {"ontological": "bold red"}.get(
        verdict.oracle,
        "bold yellow" if verdict.oracle in KIND_ORACLES else "bold magenta",
    )
    text.append(f"✗ {verdict.oracle}", style=style)
    if verdict.template_id:
        text.append(f" ({verdict.template_id})")
    text.append(" answers " + "/".join(answer.value for answer in verdict.answers))
    if verdict.detail:
        text.append(f": {clean_text(verdict.detail)}")
    return text


def order_views(views: list[RelationView], parent_id: str | None) -> list[RelationView]:
    """The relation from the tree parent first, then the others by path length."""
    return sorted(
        views,
        key=lambda view: (view.relation.parent != parent_id, len(view.relation.path)),
    )


def render_relation_detail(
    result: SessionResult,
    views: list[RelationView],
    names: NodeNames | None = None,
    parent_id: str | None = None,
) -> Text:
    """Every relation into a node: first each one's answers and error verdicts (the
    relation from the tree parent on top), then each conversation's turns."""
    names = names or NodeNames(result.plan.kg)
    text = Text()
    if not views:
        return Text("A root entity: no relation ends here. Move to a child node.", style="italic")
    ordered = order_views(views, parent_id)
    for view in ordered:
        relation = view.relation
        text.append(names.relation(relation), style="bold")
        text.append(f"  [{relation.type}]  ", style="dim")
        for template_id, answer in view.answers.items():
            word, style = describe_answer_word(answer)
            text.append(f"{template_id}:", style="dim")
            text.append(word + " ", style=style)
        text.append("\n")
        if relation.between:
            text.append(
                "  via " + " > ".join(names.name(node) for node in relation.path) + "\n",
                style="dim",
            )
        if not view.errors:
            text.append("  no errors\n", style="green")
        for verdict in view.errors:
            text.append("  ")
            text.append_text(describe_verdict(verdict, names))
            text.append("\n")
    text.append("\nTranscripts\n", style="bold underline")
    for view in ordered:
        text.append(names.relation(view.relation), style="bold")
        text.append(f"  {view.relation.id}\n", style="dim")
        for conversation_view in view.conversations:
            conversation = conversation_view.conversation
            text.append(f"  {conversation_label(conversation)}", style="cyan")
            expected = (conversation.meta or {}).get("expected_text")
            if expected is not None and not is_kontest(conversation):
                text.append(f"  expected: {expected}", style="dim")
            text.append("\n")
            for turn in conversation_view.turns:
                text.append("    Q: ", style="dim")
                text.append(turn.question + "\n")
                text.append("    A: ", style="dim")
                word, style = describe_answer(conversation, turn.answer)
                if turn.raw is None:
                    text.append("(no answer yet)", style="dim")
                else:
                    text.append(clean_text(turn.raw[:RAW_CHARS]))
                    if len(turn.raw) > RAW_CHARS:
                        text.append(
                            f" … ({len(turn.raw) - RAW_CHARS} more characters)", style="dim"
                        )
                text.append(f"  → {word}\n", style=style)
        text.append("\n")
    return text


class ResultsScreen(WorkerFailures, Screen[None]):
    """One finished (or stopped) session, explored."""

    AUTO_FOCUS = "#relation-tree"  # focus it once: each focus change recomposes the footer
    BINDINGS = [
        Binding(
            "t",
            "show_tab('tab-graph')",
            "Graph",
            id="results_graph",
            priority=True,
            tooltip="The model's knowledge graph",
        ),
        Binding(
            "g",
            "show_tab('tab-gap')",
            "Gap",
            id="results_gap",
            priority=True,
            tooltip="Knowledge gap per template",
        ),
        Binding(
            "x",
            "show_tab('tab-errors')",
            "Errors",
            id="results_errors",
            priority=True,
            tooltip="Error table",
        ),
        Binding(
            "c",
            "show_tab('tab-compare')",
            "Compare",
            id="results_compare",
            priority=True,
            tooltip="This session and another stored one on the same KG, side by side",
        ),
        Binding(
            "m",
            "show_tab('tab-ensemble')",
            "Ensemble",
            id="results_ensemble",
            priority=True,
            tooltip="Weighted ensemble vs majority vote over stored sessions on the same KG",
        ),
        Binding(
            "k",
            "show_tab('tab-kinds')",
            "Kinds",
            id="results_kinds",
            priority=True,
            tooltip="FactChecker, logic rules and variants of this session",
        ),
        Binding(
            "n",
            "step_error(1)",
            "Next error",
            id="results_next_error",
            priority=True,
            tooltip="Expand the way to the next node with errors and select it",
        ),
        Binding(
            "p",
            "step_error(-1)",
            "Prev error",
            id="results_previous_error",
            priority=True,
            tooltip="Expand the way to the previous node with errors and select it",
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
            "w",
            "export",
            "Export",
            id="results_export",
            priority=True,
            tooltip="Write the report (JSON, Markdown, CSV) and the KG picture (HTML)",
        ),
        Binding(
            "e",
            "app.edit_templates",
            "Templates",
            id="results_templates",
            priority=True,
            tooltip="Edit templates and re-run a new one",
        ),
        Binding(
            "escape", "app.go_home", "Home", id="results_home", tooltip="Back to the start screen"
        ),
    ]

    class SessionsListed(Message):
        """The stored sessions on the same KG were looked up."""

        def __init__(self, sessions: ComparableSessions) -> None:
            super().__init__()
            self.sessions = sessions

    class ComparisonBuilt(Message):
        """This session and a stored one were compared."""

        def __init__(
            self, session_id: str, other: SessionResult, comparison: SessionComparison
        ) -> None:
            super().__init__()
            self.session_id = session_id
            self.other = other
            self.comparison = comparison

    class EnsembleBuilt(Message):
        """The ensemble over the ticked sessions was cross-validated and rendered."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class SessionExported(Message):
        """The session's report and picture were written."""

        def __init__(self, paths: list[Path]) -> None:
            super().__init__()
            self.paths = paths

    class SessionWorkFailed(Message):
        """Listing, loading or comparing stored sessions failed (shown where it was asked)."""

        def __init__(self, target: str, text: str, title: str) -> None:
            super().__init__()
            self.target = target  # the Static that shows the failure
            self.text = text
            self.title = title

    def __init__(self, result: SessionResult) -> None:
        super().__init__()
        # The session's records (hundreds of thousands of objects) live as long as this
        # screen: keep them out of the collector's full scans while it is up, so opening it
        # does not pay one (~60 ms at 12,000 answers). Unfrozen when the screen goes.
        gc.freeze()
        self.result = result
        self.views: dict[str, RelationView] = {}
        self.by_child: dict[str, list[RelationView]] = {}
        self.report: dict[str, Any] = {}
        self.ready = False  # every view filled (tests and the benchmark wait on it)
        self.error_filter: str | None = None  # what the error table shows (None: not filled)
        self.built_panes: set[str] = set()
        self.names = NodeNames(result.plan.kg)
        self.error_rows: list[str] = []  # the error table's rows: relation id of each
        self.has_kinds = tuple(result.plan.kinds) != ("kontest",)  # other test kinds asked
        self.sessions: ComparableSessions | None = None  # stored sessions on the same KG
        self.loaded: dict[str, SessionResult] = {}  # stored sessions loaded (by id)
        self.ensemble_asked: tuple[str, ...] | None = None  # the sessions last ensembled

    def compose(self) -> ComposeResult:
        yield Header()
        yield ReportCounts("", id="result-counts", classes="counts")
        with TabbedContent(id="result-tabs"):
            with TabPane("Graph", id="tab-graph"), Horizontal():
                yield RelationTree(id="relation-tree")
                with VerticalScroll(id="relation-detail", classes="pane"):
                    yield Static("Select a node.", id="detail-text", markup=False)
            # The other panes are built when first shown, so the graph opens at once.
            yield TabPane("Gap", id="tab-gap")
            yield TabPane("Errors", id="tab-errors")
            if self.has_kinds:
                yield TabPane("Kinds", id="tab-kinds")
            yield TabPane("Compare", id="tab-compare")
            yield TabPane("Ensemble", id="tab-ensemble")
        yield KeyFooter()

    def compose_pane(self, pane_id: str) -> list[Widget]:
        """The widgets of a tab, made the first time it is shown."""
        if pane_id == "tab-gap":
            return [
                GapBars("", id="gap-view"),
                OptionList(id="gap-list", classes="pane"),
            ]
        if pane_id == "tab-errors":
            table: DataTable = DataTable(id="error-table", cursor_type="row", zebra_stripes=True)
            table.add_columns("Oracle", "Relation", "Template", "Answers", "Detail")
            return [
                Select[str](
                    [("all errors", ALL), *((name, name) for name in report_oracles(self.report))],
                    id="error-filter",
                    value=ALL,
                    allow_blank=False,
                ),
                table,
            ]
        if pane_id == "tab-compare":
            return [
                Select[str](
                    [],
                    id="compare-select",
                    prompt=f"a stored session on {self.kg_names()[0]}",
                    allow_blank=True,
                ),
                Static(LOOKING, id="compare-note", classes="note", markup=False),
                VerticalScroll(
                    SessionCompare("", id="compare-view", markup=False),
                    id="compare-scroll",
                    classes="pane",
                ),
                CompareTables(self.db, id="compare-tables"),
            ]
        if pane_id == "tab-ensemble":
            return [
                SelectionList[str](id="ensemble-select", classes="pane"),
                Static(LOOKING, id="ensemble-note", classes="note", markup=False),
                VerticalScroll(Static("", id="ensemble-view", markup=False), id="ensemble-scroll"),
            ]
        if pane_id == "tab-kinds":
            return [VerticalScroll(KindSections("", id="kinds-view"), id="kinds-scroll")]
        return []

    async def build_pane(self, pane_id: str) -> None:
        """Mount and fill a tab's widgets once."""
        if pane_id in self.built_panes:
            return
        self.built_panes.add(pane_id)
        widgets = self.compose_pane(pane_id)
        if widgets:
            await self.query_one(f"#{pane_id}", TabPane).mount_all(widgets)
        if pane_id == "tab-gap":
            self.query_one("#gap-view", GapBars).show_report(self.report)
            self.fill_gap_list()
        elif pane_id == "tab-errors":
            self.fill_error_table(ALL)
        elif pane_id in ("tab-compare", "tab-ensemble"):
            if self.sessions is None:
                self.list_sessions()
            else:
                self.show_sessions()
        elif pane_id == "tab-kinds":
            self.query_one("#kinds-view", KindSections).show_report(self.report)
        if self.query_one("#result-tabs", TabbedContent).active == pane_id:
            self.focus_pane(pane_id)

    def on_unmount(self) -> None:
        gc.unfreeze()

    def on_screen_resume(self) -> None:
        """Back from the template editor: a session that got a template's answers meanwhile
        is shown again from the start, with them."""
        extended: dict[str, SessionResult] = getattr(self.app, "extended_results", {})
        newer = extended.pop(self.result.session_id or "", None)
        if newer is not None and newer is not self.result:
            self.app.switch_screen(ResultsScreen(newer))

    def on_mount(self) -> None:
        self.sub_title = f"{self.result.plan.model_spec} on {self.result.plan.kg.name}"
        self.show_result()

    def show_result(self) -> None:
        """Fill the counts and the graph from the session's evaluation (other tabs on demand)."""
        self.views = build_relation_views(self.result)
        self.by_child = {}
        for view in self.views.values():
            self.by_child.setdefault(view.relation.child, []).append(view)
        self.report = report_of(self.result.evaluation)
        self.query_one("#result-counts", ReportCounts).show_report(self.report)
        tree = self.query_one("#relation-tree", RelationTree)
        tree.show_graph(
            self.result.plan.kg, self.views, self.result.plan.template_ids, names=self.names
        )
        tree.focus()
        if tree.root.children:
            tree.move_cursor(tree.root.children[0])
        self.ready = True

    @on(RelationTree.NodeSelected)
    def node_selected(self, event: RelationTree.NodeSelected) -> None:
        views = self.by_child.get(event.node_id, [])
        fill_conversation_views(self.result, views)
        detail = render_relation_detail(self.result, views, self.names, event.parent_id)
        self.query_one("#detail-text", Static).update(detail)
        self.query_one("#relation-detail", VerticalScroll).scroll_home(animate=False)

    # -- export ---------------------------------------------------------------------------

    def action_export(self) -> None:
        self.notify("Exporting…", markup=False)
        self.export_worker(self.result)

    @work(thread=True, exclusive=True, group="results-export", exit_on_error=False)
    def export_worker(self, result: SessionResult) -> None:
        try:
            paths = export_session(result)
        except (KontestError, OSError) as error:
            self.post_message(self.SessionWorkFailed("export", str(error), "Export failed"))
            return
        self.post_message(self.SessionExported(paths))

    @on(SessionExported)
    def session_exported(self, event: SessionExported) -> None:
        folder = event.paths[0].parent
        names = ", ".join(path.name for path in event.paths)
        self.notify(f"Wrote {names} to {folder}", title="Export", markup=False, timeout=10)

    # -- finding errors in the graph -------------------------------------------------------

    def action_step_error(self, offset: int) -> None:
        """Next/previous node with errors: shown in the graph tab, expanded and selected."""
        tree = self.query_one("#relation-tree", RelationTree)
        if self.query_one("#result-tabs", TabbedContent).active != "tab-graph":
            self.action_show_tab("tab-graph")
        if tree.step_error(offset) is None:
            self.notify("No errors in this session.", markup=False)
            return
        tree.focus()

    def action_errors_only(self) -> None:
        tree = self.query_one("#relation-tree", RelationTree)
        if self.query_one("#result-tabs", TabbedContent).active != "tab-graph":
            self.action_show_tab("tab-graph")
        shown = tree.toggle_errors_only()
        if shown and tree.error_paths:
            tree.reveal(tree.error_paths[0])
        elif tree.root.children:
            tree.move_cursor(tree.root.children[0])
        self.notify(
            f"Errors only: {len(tree.error_paths)} node(s) with errors"
            if shown
            else "The whole graph",
            markup=False,
        )

    def show_relation(self, relation_id: str) -> None:
        """The graph tab with a relation's child selected (under the relation's parent)."""
        view = self.views.get(relation_id)
        if view is None:
            return
        tree = self.query_one("#relation-tree", RelationTree)
        self.action_show_tab("tab-graph")
        relation = view.relation
        path = tree.path_to(relation.child, relation.parent)
        if path is None and tree.errors_only:
            tree.toggle_errors_only()
            path = tree.path_to(relation.child, relation.parent)
        if path is not None:
            tree.reveal(path)
            tree.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The Kinds key exists only for sessions that asked other test kinds."""
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
        target = {
            "tab-graph": "#relation-tree",
            "tab-errors": "#error-table",
            "tab-gap": "#gap-list",
            "tab-compare": "#compare-select",
            "tab-ensemble": "#ensemble-select",
            "tab-kinds": "#kinds-scroll",
        }.get(tab)
        found = self.query(target) if target else None
        if found:
            found.first().focus()

    # -- error table ----------------------------------------------------------------------

    @on(Select.Changed, "#error-filter")
    def filter_changed(self, event: Select.Changed) -> None:
        if self.error_filter is not None:
            self.fill_error_table(str(event.value))

    @on(TabbedContent.TabActivated, "#result-tabs")
    async def tab_shown(self, event: TabbedContent.TabActivated) -> None:
        """Tabs are built when first shown (the error table can hold thousands of rows)."""
        if event.pane.id:
            await self.build_pane(event.pane.id)

    def fill_error_table(self, oracle: str) -> None:
        if oracle == self.error_filter:
            return
        self.error_filter = oracle
        table = self.query_one("#error-table", DataTable)
        table.clear()
        self.error_rows = []
        for verdict in verdicts_of(self.result.evaluation):
            if not verdict.error or (oracle != ALL and verdict.oracle != oracle):
                continue
            view = self.views.get(verdict.relation_id)
            name = self.names.relation(view.relation) if view else verdict.relation_id
            path = error_path(verdict)
            detail = (
                "yes-path " + " → ".join(self.names.name(node_id) for node_id in path)
                if path
                else clean_text(verdict.detail)
            )
            table.add_row(
                verdict.oracle,
                Text(name),
                verdict.template_id or "",
                "/".join(answer.value for answer in verdict.answers),
                Text(detail),
            )
            self.error_rows.append(verdict.relation_id)

    def fill_gap_list(self) -> None:
        """The relations in each template's gap and in the intersection; enter selects one."""
        gap_list = self.query_one("#gap-list", OptionList)
        gap_list.clear_options()
        options: list[Option] = []
        for group, relation_ids in gap_relations(self.result).items():
            title = (
                "intersection (no template answered yes)"
                if group == INTERSECTION
                else f"gap {group} (not answered yes under {group})"
            )
            options.append(
                Option(Text(f"{title}: {len(relation_ids)}", style="bold"), disabled=True)
            )
            for relation_id in relation_ids:
                view = self.views.get(relation_id)
                name = self.names.relation(view.relation) if view else relation_id
                options.append(Option(Text(f"  {name}"), id=f"{group}\t{relation_id}"))
        gap_list.add_options(options)

    @on(OptionList.OptionSelected, "#gap-list")
    def gap_relation_chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.show_relation(event.option.id.split("\t", 1)[1])

    @on(DataTable.RowSelected, "#error-table")
    def error_row_chosen(self, event: DataTable.RowSelected) -> None:
        """Enter on an error: the graph with its relation selected."""
        if 0 <= event.cursor_row < len(self.error_rows):
            self.show_relation(self.error_rows[event.cursor_row])

    # -- compare and ensemble over stored sessions on the same KG --------------------------

    @property
    def db(self) -> str | None:
        return getattr(self.app, "db_path", None)

    def kg_names(self) -> list[str]:
        """The names a stored session on this KG has (the source it was loaded from)."""
        plan = self.result.plan
        return list(dict.fromkeys(name for name in (plan.kg_source, plan.kg.name) if name))

    def list_sessions(self) -> None:
        relation_ids = frozenset(relation.id for relation in self.result.plan.relations)
        self.list_sessions_worker(relation_ids)

    @work(thread=True, exclusive=True, group="results-sessions", exit_on_error=False)
    def list_sessions_worker(self, relation_ids: frozenset[str]) -> None:
        try:
            found = find_comparable_sessions(
                self.db, self.kg_names(), relation_ids, exclude=self.result.session_id
            )
        except KontestError as error:
            self.post_message(self.SessionWorkFailed("sessions", str(error), error.title))
            return
        self.post_message(self.SessionsListed(found))

    @on(SessionsListed)
    def sessions_listed(self, event: SessionsListed) -> None:
        self.sessions = event.sessions
        self.show_sessions()

    def describe_left_out(self) -> str:
        left_out = self.sessions.left_out if self.sessions else []
        return ("Not offered: " + "; ".join(left_out) + ".") if left_out else ""

    def show_sessions(self) -> None:
        """Offer the stored sessions in the built panes (compare: the newest is shown)."""
        if self.sessions is None:
            return
        offered = self.sessions.offered
        total = len(self.result.plan.relations)
        name = self.kg_names()[0]
        left_out = self.describe_left_out()
        if "tab-compare" in self.built_panes and self.query("#compare-select"):
            select = self.query_one("#compare-select", Select)
            if offered:
                note = f"{len(offered)} stored session{'s' if len(offered) != 1 else ''} on {name}."
                select.set_options([(choice.describe(total), choice.id) for choice in offered])
                select.value = offered[0].id
            else:
                note = (
                    f"No other stored session on {name} to compare with: run another model "
                    "on it (escape, n, then Run)."
                )
                self.query_one("#compare-view", SessionCompare).update("")
            self.query_one("#compare-note", Static).update(" ".join((note, left_out)).strip())
            this = self.result.session_id
            self.query_one(CompareTables).offer(
                [
                    *([(f"this session · {self.result.plan.model_spec}", this)] if this else []),
                    *((choice.describe(total), choice.id) for choice in offered),
                ]
            )
        if "tab-ensemble" in self.built_panes and self.query("#ensemble-select"):
            choices = self.query_one("#ensemble-select", SelectionList)
            choices.clear_options()
            choices.add_option((f"this session · {self.result.plan.model_spec}", THIS, True))
            choices.add_options(
                (choice.describe(total), choice.id, index < ENSEMBLE_PRESELECT)
                for index, choice in enumerate(offered)
            )
            if offered:
                note = "Tick two or more sessions (space); the ensemble follows the ticks."
            else:
                note = (
                    f"The ensemble needs two or more sessions on {name}: no other stored one "
                    "has answers to its relations. Run another model on it (escape, n, then Run)."
                )
            self.query_one("#ensemble-note", Static).update(" ".join((note, left_out)).strip())
            self.ensemble_ticked()

    def load_stored(self, session_id: str) -> SessionResult:
        """A stored session's result, loaded once (call it in a worker thread)."""
        result = self.loaded.get(session_id)
        if result is None:
            result = load_session_result(self.db, session_id)
            self.loaded[session_id] = result
        return result

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
            other = self.load_stored(session_id)
            comparison = compare_sessions(evaluated(self.result), evaluated(other))
        except KontestError as error:
            self.post_message(self.SessionWorkFailed("compare", str(error), error.title))
            return
        except Exception as error:  # an engine bug must not crash the results
            self.post_message(self.SessionWorkFailed("compare", str(error), "Compare failed"))
            return
        if not worker.is_cancelled:
            self.post_message(self.ComparisonBuilt(session_id, other, comparison))

    @on(ComparisonBuilt)
    def comparison_built(self, event: ComparisonBuilt) -> None:
        if self.query_one("#compare-select", Select).value != event.session_id:
            return  # another session was chosen meanwhile
        this = self.result.plan.model_spec
        if self.result.session_id:
            this += f" · {self.result.session_id}"
        other = f"{event.other.plan.model_spec} · {event.session_id}"
        self.query_one("#compare-view", SessionCompare).show_comparison(
            event.comparison, self.result.plan.kg, this, other
        )

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
        view.update(
            Text(f"Cross-validating the ensemble of {len(chosen)} sessions…", style="italic")
        )
        self.ensemble_worker(chosen)

    @work(thread=True, exclusive=True, group="results-ensemble", exit_on_error=False)
    def ensemble_worker(self, chosen: tuple[str, ...]) -> None:
        worker = get_current_worker()
        try:
            results = [
                self.result if value == THIS else self.load_stored(value) for value in chosen
            ]
            text = describe_ensemble(results)
        except KontestError as error:
            text = f"Ensemble: {error}"
        except Exception as error:  # an engine bug must not crash the results
            text = f"Ensemble failed: {error}"
        if not worker.is_cancelled:
            self.post_message(self.EnsembleBuilt(text))

    @on(EnsembleBuilt)
    def ensemble_built(self, event: EnsembleBuilt) -> None:
        self.query_one("#ensemble-view", Static).update(Text(event.text))

    @on(SessionWorkFailed)
    def session_work_failed(self, event: SessionWorkFailed) -> None:
        self.notify(event.text, title=event.title, severity="error", markup=False)
        targets = {"compare": ["#compare-view"], "sessions": ["#compare-note", "#ensemble-note"]}
        for target in targets.get(event.target, []):
            for widget in self.query(target):
                if isinstance(widget, Static):
                    widget.update(Text(f"{event.title}: {event.text}", style="italic"))
