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
from kontest_tui.tui.services import RelationView

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
    label: str, direct: RelationView | None, into: list[RelationView], template_ids: list[str]
) -> Text:
    """`Ulster  t1:yes t2:no  ≠ ⚠2 ✗1` as rich Text (labels are plain text, never markup).

    `≠` a metamorphic error, `⚠N` N ontological errors, `✗N` N errors of the other test
    kinds (variants, FactChecker, logic rules) on relations into the node.
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
    return text


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
        self.kg: KnowledgeGraph | None = None
        self.template_ids: list[str] = []
        self.by_pair: dict[tuple[str, str], RelationView] = {}
        self.by_child: dict[str, list[RelationView]] = {}

    def show_graph(
        self,
        kg: KnowledgeGraph,
        views: Mapping[str, RelationView],
        template_ids: list[str],
        expand_depth: int = 2,
    ) -> None:
        """Rebuild the tree for `kg`, marking each node with the answers of its relations.

        Only the first `expand_depth` levels are built now; deeper nodes are added when
        their parent is expanded, so a graph of thousands of relations opens at once.
        """
        self.kg = kg
        self.template_ids = template_ids
        self.by_pair = {}
        self.by_child = {}
        for view in views.values():
            self.by_pair.setdefault((view.relation.parent, view.relation.child), view)
            self.by_child.setdefault(view.relation.child, []).append(view)
        self.clear()
        roots = kg.roots()
        expand_depth = min(expand_depth, fit_expand_depth(kg, roots, EXPAND_BUDGET))
        for root_id in roots:
            self.add_kg_node(self.root, root_id, None, 0, expand_depth)
        self.root.expand()

    def add_kg_node(
        self,
        parent: TreeNode[str],
        node_id: str,
        parent_id: str | None,
        level: int,
        expand_depth: int,
    ) -> TreeNode[str]:
        """Add one KG node (and, above `expand_depth`, its children)."""
        kg = self.kg
        assert kg is not None, "nodes are added after show_graph set the graph"
        direct = self.by_pair.get((parent_id, node_id)) if parent_id else None
        label = render_node_label(
            kg.label(node_id), direct, self.by_child.get(node_id, []), self.template_ids
        )
        children = kg.children(node_id)
        populate = level < expand_depth
        tree_node = parent.add(label, data=node_id, expand=populate, allow_expand=bool(children))
        if populate:
            for child_id in children:
                self.add_kg_node(tree_node, child_id, node_id, level + 1, expand_depth)
        return tree_node

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        """Add a node's children the first time it is opened."""
        node = event.node
        if node.data is None or node.children or self.kg is None:
            return
        for child_id in self.kg.children(node.data):
            self.add_kg_node(node, child_id, node.data, 0, 0)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.NodeSelected(event.node.data))
