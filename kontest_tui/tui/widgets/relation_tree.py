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

from kontest_tui.generate.records import Answer
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.tui.services import RelationView

ANSWER_STYLES: dict[Answer | None, tuple[str, str]] = {
    Answer.YES: ("yes", "bold green"),
    Answer.NO: ("no", "bold red"),
    Answer.INVALID: ("?", "bold yellow"),
    Answer.REFUSAL: ("idk", "yellow"),
    None: ("·", "dim"),
}


def render_node_label(
    label: str, direct: RelationView | None, into: list[RelationView], template_ids: list[str]
) -> Text:
    """`Ulster  t1:yes t2:no  ≠ ⚠` as rich Text (labels are plain text, never markup)."""
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
    return text


class RelationTree(Tree[str]):
    """KG nodes from the roots down; selecting one shows every relation into it."""

    class NodeSelected(Message):
        """The highlighted KG node changed."""

        def __init__(self, node_id: str) -> None:
            super().__init__()
            self.node_id = node_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("knowledge graph", id=id)
        self.show_root = False
        self.guide_depth = 2

    def show_graph(
        self,
        kg: KnowledgeGraph,
        views: Mapping[str, RelationView],
        template_ids: list[str],
        expand_depth: int = 2,
    ) -> None:
        """Rebuild the tree for `kg`, marking each node with the answers of its relations."""
        by_pair: dict[tuple[str, str], RelationView] = {}
        by_child: dict[str, list[RelationView]] = {}
        for view in views.values():
            by_pair.setdefault((view.relation.parent, view.relation.child), view)
            by_child.setdefault(view.relation.child, []).append(view)
        self.clear()
        stack: list[tuple[TreeNode[str], str, str | None, int]] = [
            (self.root, root_id, None, 0) for root_id in reversed(kg.roots())
        ]
        while stack:
            parent_node, node_id, parent_id, level = stack.pop()
            direct = by_pair.get((parent_id, node_id)) if parent_id else None
            label = render_node_label(
                kg.label(node_id), direct, by_child.get(node_id, []), template_ids
            )
            children = kg.children(node_id)
            tree_node = parent_node.add(
                label, data=node_id, expand=level < expand_depth, allow_expand=bool(children)
            )
            for child_id in reversed(children):
                stack.append((tree_node, child_id, node_id, level + 1))
        self.root.expand()

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.NodeSelected(event.node.data))
