"""The knowledge-graph model: nodes with labels, aliases and types, and parent -> child edges.

A `KnowledgeGraph` is plain data (what a KG file holds: docs/knowledge-graphs.md). Loading, saving and
validation live in `kg.io`; paths and relations in `generate.relations`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from kontest_tui.domain.answers import clean_text


def printable(text: str) -> str:
    """A label or alias without escape sequences and control characters. A KG from a file,
    a CSV or the web may hold them; every reader cleans them here, so they reach neither the
    questions nor the terminal nor the reports."""
    return text if text.isprintable() else clean_text(text)


def printable_line(text: str) -> str:
    """An id, type, relation or KG name/source: `printable` and on one line (newlines and tabs
    become single spaces), so none moves the cursor of a terminal or a table."""
    return text if text.isprintable() else " ".join(clean_text(text).split())


@dataclass(frozen=True, slots=True)
class Node:
    """One entity: a Wikidata QID (or another stable id), its label, aliases and type."""

    id: str
    label: str
    aliases: tuple[str, ...] = ()
    type: str = ""


@dataclass(frozen=True, slots=True)
class Edge:
    """`parent` contains / has `child`; `relation` is an optional explicit relation type."""

    parent: str
    child: str
    relation: str = ""


@dataclass
class KnowledgeGraph:
    """A rooted containment graph: the input the tests are generated from."""

    name: str
    domain: str
    nodes: dict[str, Node]
    edges: list[Edge]
    source: str = ""
    built: str = ""
    _cache: dict[str, object] = field(default_factory=dict, repr=False, compare=False)

    def label(self, node_id: str) -> str:
        node = self.nodes.get(node_id)
        return node.label if node else node_id

    @cached_property
    def _children(self) -> dict[str, list[str]]:
        children: dict[str, list[str]] = {node_id: [] for node_id in self.nodes}
        for edge in self.edges:
            children[edge.parent].append(edge.child)
        return children

    def children(self, node_id: str) -> list[str]:
        """Children in file order."""
        return self._children.get(node_id, [])

    @cached_property
    def _parents(self) -> dict[str, list[str]]:
        parents: dict[str, list[str]] = {}
        for edge in self.edges:
            parents.setdefault(edge.child, []).append(edge.parent)
        return parents

    def parents(self, node_id: str) -> list[str]:
        """Direct parents in edge order."""
        return self._parents.get(node_id, [])

    @cached_property
    def _ancestor_sets(self) -> dict[str, frozenset[str]]:
        return {}

    def ancestors(self, node_id: str) -> frozenset[str]:
        """Every node above `node_id` (its parents, theirs, ...), remembered per node."""
        found = self._ancestor_sets.get(node_id)
        if found is None:
            seen: set[str] = set()
            stack = list(self.parents(node_id))
            while stack:
                current = stack.pop()
                if current not in seen:
                    seen.add(current)
                    stack.extend(self.parents(current))
            found = self._ancestor_sets[node_id] = frozenset(seen)
        return found

    def roots(self) -> list[str]:
        """Nodes with no parent, in node order (the seed entities)."""
        has_parent = {edge.child for edge in self.edges}
        return [node_id for node_id in self.nodes if node_id not in has_parent]
