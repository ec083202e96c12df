"""Find a KG relation in free wording: the simulated model's fallback for non-template questions.

Covering-array variants replace template words with synonyms (and entity labels with
aliases), so they no longer match a template text. Given the session's KG, the simulated
model looks for two entity labels or aliases in the question, one an ancestor of the other,
and treats the question as being about that relation: variants of one query then share the
model's knowledge of the fact, as a real model's would.
"""

from __future__ import annotations

import re
from collections import defaultdict

from kontest_tui.kg.graph import KnowledgeGraph


class EntityFinder:
    """Label/alias lookup over one KG, with ancestor checks along its edges."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        names: dict[str, set[str]] = defaultdict(set)
        for node in kg.nodes.values():
            for name in (node.label, *node.aliases):
                clean = " ".join(name.split()).lower()
                if clean:
                    names[clean].add(node.id)
        self._ids = dict(names)
        self._parents: dict[str, list[str]] = defaultdict(list)
        for edge in kg.edges:
            self._parents[edge.child].append(edge.parent)
        ordered = sorted(self._ids, key=len, reverse=True)
        self._pattern = (
            re.compile(
                r"(?<!\w)(" + "|".join(re.escape(name) for name in ordered) + r")(?!\w)",
                re.IGNORECASE,
            )
            if ordered
            else None
        )

    def _ancestors(self, node_id: str) -> set[str]:
        seen: set[str] = set()
        stack = list(self._parents.get(node_id, ()))
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(self._parents.get(current, ()))
        return seen

    def find_relation(self, question: str) -> tuple[str, str] | None:
        """(parent label, child label) of a relation named in `question`, or None."""
        if self._pattern is None:
            return None
        text = " ".join(question.split())
        found: list[set[str]] = []
        for match in self._pattern.finditer(text):
            found.append(self._ids[match.group(1).lower()])
        candidates = [node_id for ids in found for node_id in sorted(ids)]
        for child in candidates:
            ancestors = self._ancestors(child)
            for parent in candidates:
                if parent != child and parent in ancestors:
                    return self.kg.label(parent), self.kg.label(child)
        return None
