"""The results' Graph tab: the session's graph as a tree, and the node selected in detail.

A `TabPane` over a RelationTree (children read when a node is opened) and the detail of the
selected node (the relations into it, headed by the card of its error). Its own workers read
store.tree, store.details and store.error_list (`n` / `p` and errors only go through
`step_worker` and `roots_worker`; errors only keeps the node selected, or the nearest one
above it still shown). A node to select that was found (by `n`, a find, or a row chosen in
another tab) is posted as `WayFound`: the results screen shows this tab, then `select_way`.
Where the reader is (the node, the error shown, errors only) is kept in the store
(store.places) once the selection settles, so the session's results reopen there.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import get_current_worker

from kontest_tui.domain.records import Verdict
from kontest_tui.errors import KontestError
from kontest_tui.report.explain import ExplanationCard
from kontest_tui.report.explain_render import card_text, card_to_rich, write_card_files
from kontest_tui.report.explain_store import explain_verdict
from kontest_tui.report.legend import TREE_LEGEND
from kontest_tui.store.error_list import ErrorList
from kontest_tui.store.places import Place
from kontest_tui.store.view_records import CLEAREST, ErrorFilter, ErrorRow, RelationDetail, TreeNode
from kontest_tui.tui.export import deliver_files, export_folder
from kontest_tui.tui.results_text import first_question, order_details, render_relation_detail
from kontest_tui.tui.sessions import OpenedPlace, OpenedResults, open_views
from kontest_tui.tui.widgets.relation_tree import RelationTree
from kontest_tui.tui.widgets.session_pane import SessionPane
from kontest_tui.tui.workers import SessionWorkFailed

PLACE_SETTLES_S = 0.5  # a selection kept this long is stored as the session's place


def choose_card_error(
    error_list: ErrorList,
    session_id: str,
    details: list[RelationDetail],
    current: ErrorRow | None,
) -> tuple[int, Verdict] | None:
    """The error whose card heads a node's detail: the one `n` / `p` / the Errors tab chose
    when it is among the node's, else the node's clearest (its first in the clearest-first
    list of store.error_list); None when the node has no error."""
    errors = [
        (verdict_id, verdict)
        for detail in details
        for verdict_id, verdict in zip(detail.error_ids, detail.errors, strict=False)
    ]
    if not errors:
        return None
    if current is not None:
        for verdict_id, verdict in errors:
            if verdict_id == current.verdict_id:
                return verdict_id, verdict
    ranked = []
    for verdict_id, verdict in errors:
        index = error_list.error_index(session_id, verdict_id, order=CLEAREST)
        ranked.append((index if index is not None else 1 << 62, verdict_id, verdict))
    _, verdict_id, verdict = min(ranked, key=lambda item: (item[0], item[1]))
    return verdict_id, verdict


class GraphPane(SessionPane):
    """The Graph tab: the tree of the session's graph and the selected node's detail."""

    FOCUS = "#relation-tree"

    class ChildrenLoaded(Message):
        """Children of some nodes were read; `way` and `error`: a node to select (an error's)."""

        def __init__(
            self,
            children: dict[str, list[TreeNode]],
            way: tuple[str, ...] = (),
            error: ErrorRow | None = None,
            *,
            closest: bool = False,
        ) -> None:
            super().__init__()
            self.children = children
            self.way = way
            self.error = error
            self.closest = closest  # select the nearest node shown on `way`

    class RootsLoaded(Message):
        """The tree's roots were read again (errors only, or everything); `keep`: the way to
        the node to select again."""

        def __init__(
            self, roots: list[TreeNode], errors_only: bool, keep: tuple[str, ...] = ()
        ) -> None:
            super().__init__()
            self.roots = roots
            self.errors_only = errors_only
            self.keep = keep

    class DetailLoaded(Message):
        """The relations into a node were read, and the card of its error (if any)."""

        def __init__(
            self,
            row: TreeNode,
            details: list[RelationDetail],
            card: ExplanationCard | None = None,
            card_error: int | None = None,
        ) -> None:
            super().__init__()
            self.row = row
            self.details = details
            self.card = card
            self.card_error = card_error  # the verdict id the card explains

    class CardSaved(Message):
        """An error's card was written as Markdown, SVG and HTML."""

        def __init__(self, paths: list[Path]) -> None:
            super().__init__()
            self.paths = paths

    class NoErrorFound(Message):
        """`n` / `p` found no error in the list."""

    class WayFound(Message):
        """A node to select was found (`way`: the ids from a root to it; `error`: its error)."""

        def __init__(self, way: tuple[str, ...], error: ErrorRow | None = None) -> None:
            super().__init__()
            self.way = way
            self.error = error

    def __init__(
        self,
        title: str,
        *,
        db: str | None,
        session_id: str,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(title, db=db, session_id=session_id, id=id)
        self.template_ids: list[str] = []
        self.error_count = 0
        self.error_index: int | None = None  # where n / p stand in the error list
        self.current_error: ErrorRow | None = None
        self.shown_card: ExplanationCard | None = None  # the card heading the detail pane
        self.shown_details: list[RelationDetail] = []  # the relations into the node shown
        self.shown_node: TreeNode | None = None
        self.card_error: int | None = None  # the verdict id of the card shown
        self.keep_places = True  # store where the reader is (off until the place is restored)
        self._place_timer: Timer | None = None
        self._place_pending: Place | None = None

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="tree-box"):
                yield RelationTree(id="relation-tree")
                yield Static(tree_legend(False), id="tree-legend", classes="hint", markup=False)
            with VerticalScroll(id="relation-detail", classes="pane"):
                yield Static("Select a node.", id="detail-text", markup=False)

    async def build(self, opened: OpenedResults) -> None:
        """The opened session's roots (and the levels that start open), the first selected
        (the Graph tab is built as soon as the session is opened)."""
        self.template_ids = list(opened.header.template_ids)
        self.error_count = opened.errors
        tree = self.query_one("#relation-tree", RelationTree)
        tree.show_roots(opened.roots, self.template_ids, children=opened.children)
        if tree.root.children:
            tree.move_cursor(tree.root.children[0])

    @on(RelationTree.ChildrenMissed)
    def children_missed(self, event: RelationTree.ChildrenMissed) -> None:
        tree = self.query_one("#relation-tree", RelationTree)
        self.children_worker((event.node_id,), tree.errors_only)

    @work(thread=True, group="results-children", exit_on_error=False)
    def children_worker(
        self,
        parents: tuple[str, ...],
        errors_only: bool,
        way: tuple[str, ...] = (),
        error: ErrorRow | None = None,
        *,
        closest: bool = False,
    ) -> None:
        with open_views(self.db, self.session_id) as store:
            children = {
                parent: store.tree.children(self.session_id, parent, errors_only=errors_only)
                for parent in parents
            }
        self.post_message(self.ChildrenLoaded(children, way, error, closest=closest))

    @on(ChildrenLoaded)
    def children_loaded(self, event: ChildrenLoaded) -> None:
        tree = self.query_one("#relation-tree", RelationTree)
        for parent, rows in event.children.items():
            tree.add_children(parent, rows)
        if event.error is not None:
            self.error_index = event.error.index  # n / p go on from here
        if event.way and event.closest:
            self.select_way(event.way, event.error, closest=True)
        elif event.way:
            self.post_message(self.WayFound(event.way, event.error))
        elif event.error is not None:
            self.notify("This error's relation is not in the graph.", markup=False)

    def select_way(
        self, way: tuple[str, ...], error: ErrorRow | None = None, *, closest: bool = False
    ) -> None:
        """Open the way to a node and select it (reading the levels not read yet first);
        `closest`: the nearest node above it when it is not shown (errors only)."""
        tree = self.query_one("#relation-tree", RelationTree)
        self.current_error = error
        missing = tree.missing(way)
        if missing and not closest:
            self.children_worker(tuple(missing), tree.errors_only, way, error)
            return
        if missing:
            self.children_worker(tuple(missing), tree.errors_only, way, error, closest=True)
            return
        if tree.reveal(way, closest=closest) is None and tree.errors_only:
            self.notify("Not among the nodes shown: press f for the whole graph.", markup=False)
        tree.focus()
        if error is not None and self.shown_node is not None and self.shown_node.node == way[-1]:
            self.show_detail(self.shown_node)  # the same node: mark the error now

    @on(RelationTree.NodeSelected)
    def node_selected(self, event: RelationTree.NodeSelected) -> None:
        self.shown_node = event.row
        self.show_detail(event.row)

    def show_detail(self, row: TreeNode) -> None:
        self.detail_worker(row)

    @work(thread=True, exclusive=True, group="results-detail", exit_on_error=False)
    def detail_worker(self, row: TreeNode) -> None:
        current = self.current_error
        with open_views(self.db, self.session_id) as store:
            details = store.details.relations_into(self.session_id, row.node)
            chosen = choose_card_error(store.error_list, self.session_id, details, current)
            card = None
            if chosen is not None and not get_current_worker().is_cancelled:
                card = explain_verdict(store, self.session_id, chosen[1])
        if not get_current_worker().is_cancelled:
            self.post_message(self.DetailLoaded(row, details, card, chosen[0] if chosen else None))

    @on(DetailLoaded)
    def detail_loaded(self, event: DetailLoaded) -> None:
        if self.shown_node is not None and self.shown_node.node != event.row.node:
            return  # another node was selected meanwhile
        current = event.card_error
        self.shown_card = event.card
        self.shown_details = event.details
        self.card_error = current
        tree = self.query_one("#relation-tree", RelationTree)
        self.keep_place(Place(event.row.node, current, tree.errors_only))
        detail = Text()
        if event.card is not None:
            detail.append_text(card_to_rich(event.card, source=False))
            detail.append("─" * 40 + "\n\n", style="dim")
        detail.append_text(
            render_relation_detail(
                event.details, self.template_ids, event.row.parent or None, current, event.row
            )
        )
        self.query_one("#detail-text", Static).update(detail)
        self.query_one("#relation-detail", VerticalScroll).scroll_home(animate=False)

    @property
    def selected_relation_id(self) -> str | None:
        """The relation selected: the error's when the card shows one, else the relation
        from the node's parent in the tree (None: no node below a root is selected)."""
        details, node = self.shown_details, self.shown_node
        if node is None or not details:
            return None
        shown = {detail.relation.id for detail in details}
        current = self.current_error
        if current is not None and current.relation is not None and current.relation.id in shown:
            return current.relation.id
        return order_details(details, node.parent or None)[0].relation.id

    # -- the card of the error shown: save and share ----------------------------------------

    def copy_shown(self) -> None:
        """The `y` key: the card shown as text to the clipboard, else the selected relation's
        first question."""
        if self.shown_card is not None:
            self.app.copy_to_clipboard(card_text(self.shown_card))
            self.notify("Copied the card of the error shown to the clipboard.", markup=False)
            return
        node = self.shown_node
        parent = node.parent or None if node is not None else None
        question = first_question(order_details(self.shown_details, parent))
        if question is None:
            self.notify("Select a node below a root first.", markup=False)
            return
        self.app.copy_to_clipboard(question)
        self.notify(f"Copied {question!r} to the clipboard.", markup=False)

    def save_card(self) -> None:
        """Save the card of the error shown (the `s` key)."""
        card = self.shown_card
        if card is None:
            self.notify("No error shown: press n for the clearest error, then s.", markup=False)
            return
        index = self.error_index + 1 if self.error_index is not None else None
        stem = f"kontest-{self.session_id}-" + (f"error-{index}" if index else "card")
        self.save_card_worker(card, stem)

    @work(thread=True, exclusive=True, group="results-card", exit_on_error=False)
    def save_card_worker(self, card: ExplanationCard, stem: str) -> None:
        try:
            paths = write_card_files(card, export_folder(), stem)
        except OSError as error:
            self.post_message(SessionWorkFailed("card", str(error), "Saving the card failed"))
            return
        self.post_message(self.CardSaved(paths))

    @on(CardSaved)
    def card_saved(self, event: CardSaved) -> None:
        if deliver_files(self.app, event.paths, "Card"):
            return
        folder = event.paths[0].parent
        names = ", ".join(path.name for path in event.paths)
        self.notify(f"Saved {names} in {folder}", title="Card", markup=False, timeout=10)

    # -- finding errors: n / p and errors only ---------------------------------------------

    @work(thread=True, exclusive=True, group="results-step", exit_on_error=False)
    def step_worker(self, index: int | None, step: int, where: ErrorFilter, order: str) -> None:
        with open_views(self.db, self.session_id) as store:
            row = store.error_list.step_error(
                self.session_id, index, step, order=order, where=where
            )
        if row is None:
            self.post_message(self.NoErrorFound())
        else:
            self.post_message(self.ChildrenLoaded({}, row.way, row))

    @on(NoErrorFound)
    def no_error_found(self) -> None:
        self.notify("No errors in this session.", markup=False)

    def toggle_errors_only(self) -> None:
        """`f`: only the nodes with errors (again: every node), the node selected kept."""
        tree = self.query_one("#relation-tree", RelationTree)
        self.roots_worker(not tree.errors_only, tree.selected_way())

    @work(thread=True, exclusive=True, group="results-roots", exit_on_error=False)
    def roots_worker(self, errors_only: bool, keep: tuple[str, ...] = ()) -> None:
        with open_views(self.db, self.session_id) as store:
            roots = store.tree.children(self.session_id, None, errors_only=errors_only)
        self.post_message(self.RootsLoaded(roots, errors_only, keep))

    @on(RootsLoaded)
    def roots_loaded(self, event: RootsLoaded) -> None:
        tree = self.query_one("#relation-tree", RelationTree)
        tree.show_roots(event.roots, self.template_ids, errors_only=event.errors_only)
        self.query_one("#tree-legend", Static).update(tree_legend(event.errors_only))
        if event.keep:
            self.select_way(event.keep, self.current_error, closest=True)
        elif tree.root.children:
            tree.move_cursor(tree.root.children[0])
        nodes = sum(1 for row in event.roots if row.subtree.error_total)
        self.notify(
            f"Errors only: {self.error_count} error(s) under {nodes} root(s)"
            if event.errors_only
            else "The whole graph",
            markup=False,
        )
        tree.focus()

    # -- where the reader is: kept in the store -------------------------------------------

    def restore_place(self, place: OpenedPlace) -> None:
        """Go back where the session's results were left: its node selected (the way to it
        opened), the card of the error shown then, errors only when it was on."""
        if place.error is not None:
            self.error_index = place.error.index  # n / p go on from there
        self.current_error = place.error
        if place.errors_only:
            self.roots_worker(True, place.way)
        else:
            self.select_way(place.way, place.error)

    def keep_place(self, place: Place) -> None:
        """Store `place` once it has not changed for PLACE_SETTLES_S (n held down, a
        scroll through the tree: only where it stops is written)."""
        if not self.keep_places:
            return
        self._place_pending = place
        if self._place_timer is not None:
            self._place_timer.stop()
        self._place_timer = self.set_timer(PLACE_SETTLES_S, self.store_place)

    def store_place(self) -> None:
        place, self._place_pending = self._place_pending, None
        if place is not None:
            self.place_worker(place)

    @work(thread=True, exclusive=True, group="results-place", exit_on_error=False)
    def place_worker(self, place: Place) -> None:
        with open_views(self.db, self.session_id) as store:
            store.places.save(self.session_id, place)

    def on_unmount(self) -> None:
        """A place not stored yet (the screen closed within PLACE_SETTLES_S) is stored now."""
        place, self._place_pending = self._place_pending, None
        if place is not None:
            try:
                with open_views(self.db, self.session_id) as store:
                    store.places.save(self.session_id, place)
            except KontestError:
                pass  # a place is a convenience: a locked or read-only file keeps none


def tree_legend(errors_only: bool) -> str:
    """The line under the tree: what it shows (f switches) and what its marks mean."""
    mode = "errors only (f: all nodes)" if errors_only else "all nodes (f: errors only)"
    return f"{mode} · {TREE_LEGEND}"
