"""The model's knowledge graph as a tree: each KG node with its relation's answers per template.

Takes data through attributes (a KG and relation views) and posts `RelationTree.NodeSelected`
when the user moves to a node; it never calls the engine.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from kontest_tui.domain.records import Answer, Conversation
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.names import NodeNames
from kontest_tui.tui.views import RelationView

ANSWER_STYLES: dict[Answer | None, tuple[str, str]] = {
    Answer.YES: ("yes", "bold green"),
    Answer.NO: ("no", "bold red"),
    Answer.INVALID: ("?", "bold yellow"),
    Answer.REFUSAL: ("idk", "yellow"),
    None: ("·", "dim"),
}

MATCHED_ANSWERS = ("multiple_choice", "wh")  # FactChecker types whose answer is matched as text


def describe_answer(conversation: Conversation, answer: Answer | None) -> tuple[str, str]:
    """The word and style for a parsed answer: yes/no/?/idk, or for multiple-choice and WH
    questions (whose stored answer says whether the text matched) match/other."""
    question_type = (conversation.meta or {}).get("question_type")
    if question_type in MATCHED_ANSWERS and answer in (Answer.YES, Answer.NO):
        return ("match", "bold green") if answer is Answer.YES else ("other", "bold red")
    return ANSWER_STYLES.get(answer, ANSWER_STYLES[None])


def render_node_label(
    label: str,
    direct: RelationView | None,
    into: list[RelationView],
    template_ids: list[str],
    below: int = 0,
) -> Text:
    """`Ulster  t1:yes t2:no  ≠ ⚠2 ✗1 ▸5` as rich Text (labels are plain text, never markup).

    `≠` a metamorphic error, `⚠N` N ontological errors, `✗N` N errors of the other test
    kinds (variants, FactChecker, logic rules) on relations into the node; `▸N` N errors on
    relations into the nodes below it (shown while the node is collapsed).
    """
    text = Text(label)
    if direct is not None:
        text.append("  ")
        for template_id in template_ids:
            word, style = ANSWER_STYLES.get(direct.answers.get(template_id), ANSWER_STYLES[None])
            text.append(f"{template_id}:", style="dim")
            text.append(word, style=style)
            text.append(" ")
    if any(view.metamorphic_errors for view in into):
        text.append(" ≠", style="bold magenta")
    ontological = sum(len(view.ontological_errors) for view in into)
    if ontological:
        text.append(f" ⚠{ontological}", style="bold red reverse")
    others = sum(len(view.kind_errors) for view in into)
    if others:
        text.append(f" ✗{others}", style="bold yellow")
    if below:
        text.append(f" ▸{below}", style="bold red")
    return text


def count_errors_below(
    kg: KnowledgeGraph, roots: list[str], own: Mapping[str, int]
) -> dict[str, int]:
    """Errors on relations into the nodes under each node (each node counted once per node
    it is under, so a node with two parents counts under both)."""
    below: dict[str, int] = {}
    # Post-order over the KG (iterative: subdivisions paths are deep enough for recursion).
    for root in roots:
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            node_id, done = stack.pop()
            if node_id in below and not done:
                continue
            if done:
                below[node_id] = sum(
                    own.get(child, 0) + below.get(child, 0) for child in kg.children(node_id)
                )
                continue
            below[node_id] = 0  # on the stack: a cycle back to it adds nothing
            stack.append((node_id, True))
            stack.extend((child, False) for child in kg.children(node_id) if child not in below)
    return below


def find_error_paths(
    kg: KnowledgeGraph, roots: list[str], own: Mapping[str, int]
) -> list[tuple[str, ...]]:
    """The first tree path (root ... node) of every node with errors into it, in tree order."""
    found: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for root in roots:
        stack: list[tuple[str, ...]] = [(root,)]
        while stack:
            path = stack.pop()
            node_id = path[-1]
            if node_id in seen:
                continue
            seen.add(node_id)
            if own.get(node_id):
                found.append(path)
            stack.extend((*path, child) for child in reversed(kg.children(node_id)))
    return found


EXPAND_BUDGET = 300  # nodes shown expanded at first; deeper levels open on demand


def fit_expand_depth(kg: KnowledgeGraph, roots: list[str], budget: int) -> int:
    """How many levels can start expanded while showing at most `budget` nodes (>= 0)."""
    shown = len(roots)
    level = roots
    depth = 0
    while level:
        below = [child for node_id in level for child in kg.children(node_id)]
        if not below or shown + len(below) > budget:
            return depth
        shown += len(below)
        depth += 1
        level = below
    return depth


class RelationTree(Tree[str]):
    """KG nodes from the roots down; selecting one shows every relation into it.

    Collapsed nodes carry the errors below them (`▸N`); `next_error`/`previous_error`
    expand the way to the next node with errors and select it; `errors_only` shows just the
    nodes with errors and the way to them.
    """

    class NodeSelected(Message):
        """The highlighted KG node changed (`parent_id`: the node above it in the tree)."""

        def __init__(self, node_id: str, parent_id: str | None = None) -> None:
            super().__init__()
            self.node_id = node_id
            self.parent_id = parent_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("knowledge graph", id=id)
        self.show_root = False
        self.guide_depth = 2
        self.kg: KnowledgeGraph | None = None
        self.names: NodeNames | None = None
        self.template_ids: list[str] = []
        self.by_pair: dict[tuple[str, str], RelationView] = {}
        self.by_child: dict[str, list[RelationView]] = {}
        self.own_errors: dict[str, int] = {}  # node -> errors on relations into it
        self.errors_below: dict[str, int] = {}  # node -> errors into the nodes under it
        self.error_paths: list[tuple[str, ...]] = []  # tree paths of nodes with errors
        self.errors_only = False
        self.keep: set[str] | None = None  # nodes shown in the errors-only view

    def show_graph(
        self,
        kg: KnowledgeGraph,
        views: Mapping[str, RelationView],
        template_ids: list[str],
        expand_depth: int = 2,
        names: NodeNames | None = None,
    ) -> None:
        """Rebuild the tree for `kg`, marking each node with the answers of its relations.

        Only the first `expand_depth` levels are built now; deeper nodes are added when
        their parent is expanded, so a graph of thousands of relations opens at once.
        """
        self.kg = kg
        self.names = names or NodeNames(kg)
        self.template_ids = template_ids
        self.by_pair = {}
        self.by_child = {}
        for view in views.values():
            self.by_pair.setdefault((view.relation.parent, view.relation.child), view)
            self.by_child.setdefault(view.relation.child, []).append(view)
        self.own_errors = {
            node_id: sum(len(view.errors) for view in into)
            for node_id, into in self.by_child.items()
            if any(view.errors for view in into)
        }
        roots = kg.roots()
        self.errors_below = count_errors_below(kg, roots, self.own_errors)
        self.error_paths = find_error_paths(kg, roots, self.own_errors)
        self.rebuild(expand_depth)

    def rebuild(self, expand_depth: int = 2) -> None:
        """Fill the tree again (all of it, or only the nodes with errors and their way)."""
        if self.kg is None:
            return
        kg = self.kg
        self.clear()
        roots = kg.roots()
        if self.errors_only:
            self.keep = {node_id for path in self.error_paths for node_id in path}
            roots = [root for root in roots if root in self.keep]
            expand_depth = len(kg.nodes)  # every kept node open
        else:
            self.keep = None
            expand_depth = min(expand_depth, fit_expand_depth(kg, roots, EXPAND_BUDGET))
        for root_id in roots:
            self.add_kg_node(self.root, root_id, None, 0, expand_depth)
        self.root.expand()

    def toggle_errors_only(self) -> bool:
        """Show only the nodes with errors (and the way to them), or everything again."""
        self.errors_only = not self.errors_only
        self.rebuild()
        return self.errors_only

    def shown_children(self, node_id: str) -> list[str]:
        children = self.kg.children(node_id) if self.kg is not None else []
        return [child for child in children if self.keep is None or child in self.keep]

    def node_label(self, node_id: str, parent_id: str | None, expanded: bool) -> Text:
        """A node's label: its answers and errors, and while collapsed the errors below it."""
        assert self.kg is not None and self.names is not None
        direct = self.by_pair.get((parent_id, node_id)) if parent_id else None
        below = 0 if expanded else self.errors_below.get(node_id, 0)
        return render_node_label(
            self.names.label(node_id),
            direct,
            self.by_child.get(node_id, []),
            self.template_ids,
            below,
        )

    def add_kg_node(
        self,
        parent: TreeNode[str],
        node_id: str,
        parent_id: str | None,
        level: int,
        expand_depth: int,
    ) -> TreeNode[str]:
        """Add one KG node (and, above `expand_depth`, its children)."""
        children = self.shown_children(node_id)
        populate = level < expand_depth and bool(children)
        label = self.node_label(node_id, parent_id, populate)
        tree_node = parent.add(label, data=node_id, expand=populate, allow_expand=bool(children))
        if populate:
            for child_id in children:
                self.add_kg_node(tree_node, child_id, node_id, level + 1, expand_depth)
        return tree_node

    def populate(self, node: TreeNode[str]) -> None:
        """Add a node's children if they are not there yet."""
        if node.data is None or node.children or self.kg is None:
            return
        for child_id in self.shown_children(node.data):
            self.add_kg_node(node, child_id, node.data, 0, 0)

    def parent_id_of(self, node: TreeNode[str]) -> str | None:
        parent = node.parent
        return parent.data if parent is not None else None

    def relabel(self, node: TreeNode[str]) -> None:
        if node.data is not None and self.kg is not None:
            node.set_label(self.node_label(node.data, self.parent_id_of(node), node.is_expanded))

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        """Add a node's children the first time it is opened; drop its `▸N` while open."""
        self.populate(event.node)
        self.relabel(event.node)

    def on_tree_node_collapsed(self, event: Tree.NodeCollapsed[str]) -> None:
        self.relabel(event.node)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.NodeSelected(event.node.data, self.parent_id_of(event.node)))

    # -- finding nodes -------------------------------------------------------------------

    def reveal(self, path: tuple[str, ...]) -> TreeNode[str] | None:
        """Expand the way down `path` (node ids from a root) and select its last node."""
        node: TreeNode[str] = self.root
        for node_id in path:
            if node is not self.root:
                self.populate(node)
                if not node.is_expanded:
                    node.expand()
                    self.relabel(node)
            found = next((child for child in node.children if child.data == node_id), None)
            if found is None:
                return None
            node = found
        _ = self._tree_lines  # lay out the new lines now, so the cursor can go there
        self.move_cursor(node)
        return node

    def path_to(self, node_id: str, parent_id: str | None = None) -> tuple[str, ...] | None:
        """The first tree path to `node_id` (through `parent_id` when given), or None."""
        if self.kg is None:
            return None
        for root in self.kg.roots():
            stack: list[tuple[str, ...]] = [(root,)]
            seen: set[str] = set()
            while stack:
                path = stack.pop()
                last = path[-1]
                if last == node_id and (parent_id is None or parent_id in path[:-1]):
                    return path
                if last in seen:
                    continue
                seen.add(last)
                stack.extend((*path, child) for child in reversed(self.shown_children(last)))
        return None

    def current_path(self) -> tuple[str, ...]:
        """Node ids from the root to the cursor."""
        path: list[str] = []
        node = self.cursor_node
        while node is not None and node.data is not None:
            path.append(node.data)
            node = node.parent
        return tuple(reversed(path))

    def step_error(self, offset: int) -> tuple[str, ...] | None:
        """Select the next (offset 1) or previous (-1) node with errors, in tree order,
        wrapping around; None when the graph has no errors."""
        if not self.error_paths:
            return None
        here = self.current_path()
        order = {path: index for index, path in enumerate(self.error_paths)}
        if here in order:
            index = (order[here] + offset) % len(self.error_paths)
        else:
            # The first error path after the cursor (tree order = pre-order by ids' order).
            after = [i for i, path in enumerate(self.error_paths) if self.comes_after(path, here)]
            if offset > 0:
                index = after[0] if after else 0
            else:
                index = (after[0] - 1) % len(self.error_paths) if after else -1
        target = self.error_paths[index]
        self.reveal(target)
        return target

    def comes_after(self, path: tuple[str, ...], here: tuple[str, ...]) -> bool:
        """Whether `path` comes after `here` in tree (pre-)order."""
        if self.kg is None or not here:
            return True
        for depth, (a, b) in enumerate(zip(path, here, strict=False)):
            if a != b:
                siblings = self.kg.roots() if depth == 0 else self.shown_children(path[depth - 1])
                return siblings.index(a) > siblings.index(b)
        return len(path) > len(here)
