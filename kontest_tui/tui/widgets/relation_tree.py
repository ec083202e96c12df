"""The model's knowledge graph as a tree, loaded a level at a time (like Textual's DirectoryTree).

Takes data through attributes: rows of the store's tree view (`store.view_records.TreeNode`:
a node with the direct relation's answers and its roll-ups). Expanding a node whose children
it does not hold posts `ChildrenMissed`; the screen reads them in a worker and hands them over
with `add_children`. Moving to a node posts `NodeSelected`. It never calls the engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode as TreeLine

from kontest_tui.domain.extras import FactcheckExtras
from kontest_tui.domain.records import Answer, Conversation
from kontest_tui.store.view_records import TreeNode
from kontest_tui.tui.views import METAMORPHIC_ORACLES, kind_oracles

ANSWER_STYLES: dict[Answer | None, tuple[str, str]] = {
    Answer.YES: ("yes", "bold green"),
    Answer.NO: ("no", "bold red"),
    Answer.INVALID: ("?", "bold yellow"),
    Answer.REFUSAL: ("idk", "yellow"),
    Answer.CUT: ("cut", "dim yellow"),
    None: ("·", "dim"),
}

MATCHED_ANSWERS = ("multiple_choice", "wh")  # FactChecker types whose answer is matched as text


def describe_answer(conversation: Conversation, answer: Answer | None) -> tuple[str, str]:
    """The word and style for a parsed answer: yes/no/?/idk, or for multiple-choice and WH
    questions (whose stored answer says whether the text matched) match/other."""
    extras = conversation.extras
    question_type = extras.question_type if isinstance(extras, FactcheckExtras) else None
    if question_type in MATCHED_ANSWERS and answer in (Answer.YES, Answer.NO):
        return ("match", "bold green") if answer is Answer.YES else ("other", "bold red")
    return ANSWER_STYLES.get(answer, ANSWER_STYLES[None])


def render_node_label(row: TreeNode, template_ids: Sequence[str], expanded: bool) -> Text:
    """`Ulster  t1:yes t2:no  ≠ ⚠2 ✗1 ▸5` as rich Text (labels are plain text, never markup).

    The answers are those of the relation from the parent the node is shown under; `≠` a
    metamorphic error, `⚠N` N ontological errors, `✗N` N errors of the other test kinds
    (variants, FactChecker, logic rules) on relations into the node; `▸N` N errors on
    relations into the nodes below it (shown while the node is collapsed).
    """
    text = Text(row.label)
    if row.relation is not None:
        text.append("  ")
        for template_id in template_ids:
            word, style = ANSWER_STYLES.get(row.answers.get(template_id), ANSWER_STYLES[None])
            text.append(f"{template_id}:", style="dim")
            text.append(word, style=style)
            text.append(" ")
    errors = row.own.errors
    if any(errors.get(oracle) for oracle in METAMORPHIC_ORACLES):
        text.append(" ≠", style="bold magenta")
    ontological = errors.get("ontological", 0)
    if ontological:
        text.append(f" ⚠{ontological}", style="bold red reverse")
    others = sum(errors.get(oracle, 0) for oracle in kind_oracles())
    if others:
        text.append(f" ✗{others}", style="bold yellow")
    below = row.errors_below
    if below and not expanded:
        text.append(f" ▸{below}", style="bold red")
    return text


class RelationTree(Tree[TreeNode | None]):
    """KG nodes from the roots down, a level read when it is opened; selecting one shows
    every relation into it. Collapsed nodes carry the errors below them (`▸N`)."""

    class NodeSelected(Message):
        """The highlighted KG node changed (`parent_id`: the node above it in the tree)."""

        def __init__(self, node_id: str, parent_id: str | None, row: TreeNode) -> None:
            super().__init__()
            self.node_id = node_id
            self.parent_id = parent_id
            self.row = row

    class ChildrenMissed(Message):
        """A node was opened whose children the tree does not hold yet."""

        def __init__(self, node_id: str) -> None:
            super().__init__()
            self.node_id = node_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("knowledge graph", id=id)
        self.show_root = False
        self.guide_depth = 2
        self.template_ids: list[str] = []
        self.errors_only = False
        self.children_of: dict[str, list[TreeNode]] = {}  # node id -> its children, as read

    def show_roots(
        self,
        roots: Sequence[TreeNode],
        template_ids: Sequence[str],
        *,
        errors_only: bool = False,
        children: Mapping[str, Sequence[TreeNode]] | None = None,
    ) -> None:
        """Start again from these roots; the nodes whose `children` are given start open,
        the others' children are read when opened."""
        self.template_ids = list(template_ids)
        self.errors_only = errors_only
        self.children_of = {node: list(rows) for node, rows in (children or {}).items()}
        self.clear()
        stack = [self._add_line(self.root, row) for row in reversed(roots)]
        while stack:
            line = stack.pop()
            if line.data is not None and line.data.node in self.children_of:
                self._fill(line)
                line.expand()
                self.relabel(line)
                stack.extend(reversed(line.children))
        self.root.expand()

    def _add_line(
        self, parent: TreeLine[TreeNode | None], row: TreeNode
    ) -> TreeLine[TreeNode | None]:
        return parent.add(
            render_node_label(row, self.template_ids, False),
            data=row,
            expand=False,
            allow_expand=row.children > 0,
        )

    def _fill(self, line: TreeLine[TreeNode | None]) -> bool:
        """Add a line's children from what was read; False when they are not read yet."""
        row = line.data
        if row is None or line.children:
            return True
        rows = self.children_of.get(row.node)
        if rows is None:
            return False
        for child in rows:
            self._add_line(line, child)
        if not rows:
            line.allow_expand = False
        return True

    def add_children(self, parent_id: str, rows: Sequence[TreeNode]) -> None:
        """The children of `parent_id`, read: every open line of it shows them."""
        self.children_of[parent_id] = list(rows)
        for line in self._lines_of(parent_id):
            if line.is_expanded:
                self._fill(line)

    def _lines_of(self, node_id: str) -> list[TreeLine[TreeNode | None]]:
        found: list[TreeLine[TreeNode | None]] = []
        stack = list(self.root.children)
        while stack:
            line = stack.pop()
            if line.data is not None and line.data.node == node_id:
                found.append(line)
            stack.extend(line.children)
        return found

    def relabel(self, line: TreeLine[TreeNode | None]) -> None:
        if line.data is not None:
            line.set_label(render_node_label(line.data, self.template_ids, line.is_expanded))

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[TreeNode | None]) -> None:
        """Add a node's children the first time it is opened (asked for when not read)."""
        event.stop()
        line = event.node
        if line.data is not None and not self._fill(line):
            self.post_message(self.ChildrenMissed(line.data.node))
        self.relabel(line)

    def on_tree_node_collapsed(self, event: Tree.NodeCollapsed[TreeNode | None]) -> None:
        event.stop()
        self.relabel(event.node)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[TreeNode | None]) -> None:
        event.stop()
        row = event.node.data
        if row is not None:
            self.post_message(self.NodeSelected(row.node, row.parent or None, row))

    # -- finding nodes -----------------------------------------------------------------------

    def missing(self, way: Sequence[str]) -> list[str]:
        """The nodes on `way` (but its last) whose children are not read yet."""
        return [node_id for node_id in way[:-1] if node_id not in self.children_of]

    def reveal(
        self, way: Sequence[str], *, closest: bool = False
    ) -> TreeLine[TreeNode | None] | None:
        """Open the way down `way` (node ids from a root; their children read) and select its
        last node; None when a step is not in the tree (or not read), unless `closest`: then
        the last node of the way that is (None when not even the root is)."""
        line: TreeLine[TreeNode | None] = self.root
        for node_id in way:
            if line is not self.root:
                if not self._fill(line):
                    if closest:
                        break
                    return None
                if not line.is_expanded:
                    line.expand()
                    self.relabel(line)
            found = next(
                (child for child in line.children if child.data and child.data.node == node_id),
                None,
            )
            if found is None:
                if closest:
                    break
                return None
            line = found
        if line is self.root:
            return None
        _ = self._tree_lines  # lay out the new lines now, so the cursor can go there
        self.move_cursor(line)
        return line

    def selected_way(self) -> tuple[str, ...]:
        """The node ids from a root down to the node under the cursor (() for none)."""
        line = self.cursor_node
        way: list[str] = []
        while line is not None and line.data is not None:
            way.append(line.data.node)
            line = line.parent
        return tuple(reversed(way))
