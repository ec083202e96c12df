"""Find a KG relation in free wording: the simulated model's fallback for non-template questions.

Covering-array variants replace template words with synonyms (and entity labels with
aliases), so they no longer match a template text. Given the session's KG, the simulated
model looks for two entity labels or aliases in the question, one an ancestor of the other,
and treats the question as being about that relation: variants of one query then share the
model's knowledge of the fact, as a real model's would. The probe answers (sim/probes.py) use
the same lookups to tell true facts from false ones and to name an entity.
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
        ordered_ids: dict[str, list[str]] = defaultdict(list)
        for node in kg.nodes.values():
            for name in (node.label, *node.aliases):
                clean = " ".join(name.split()).lower()
                if clean and node.id not in names[clean]:
                    names[clean].add(node.id)
                    ordered_ids[clean].append(node.id)
        self._ids = dict(names)
        self._ordered_ids = {name: tuple(ids) for name, ids in ordered_ids.items()}
        self._parents: dict[str, list[str]] = defaultdict(list)
        for edge in kg.edges:
            self._parents[edge.child].append(edge.parent)
        self._ancestor_cache: dict[str, frozenset[str]] = {}
        self._by_type: dict[str, tuple[str, ...]] | None = None
        ordered = sorted(self._ids, key=len, reverse=True)
        self._pattern = (
            re.compile(
                r"(?<!\w)(" + "|".join(re.escape(name) for name in ordered) + r")(?!\w)",
                re.IGNORECASE,
            )
            if ordered
            else None
        )

    def _ancestors(self, node_id: str) -> frozenset[str]:
        cached = self._ancestor_cache.get(node_id)
        if cached is not None:
            return cached
        seen: set[str] = set()
        stack = list(self._parents.get(node_id, ()))
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(self._parents.get(current, ()))
        found = frozenset(seen)
        self._ancestor_cache[node_id] = found
        return found

    def ids_of(self, name: str) -> tuple[str, ...]:
        """Ids of the entities with this label or alias, in KG node order (case-insensitive)."""
        return self._ordered_ids.get(" ".join(name.split()).lower(), ())

    def parents(self, node_id: str) -> list[str]:
        """Direct parents of a node, in KG edge order."""
        return self._parents.get(node_id, [])

    def is_ancestor(self, ancestor: str, node_id: str) -> bool:
        return ancestor in self._ancestors(node_id)

    def find_pair(self, parent: str, child: str) -> tuple[str, str] | None:
        """(parent id, child id) of entities so named, the first an ancestor of the second
        (in KG node order), or None: a false fact, or a name not in the KG."""
        parents = self.ids_of(parent)
        for child_id in self.ids_of(child) if parents else ():
            ancestors = self._ancestors(child_id)
            for parent_id in parents:
                if parent_id in ancestors:
                    return parent_id, child_id
        return None

    def of_type(self, node_type: str) -> tuple[str, ...]:
        """Ids of the nodes of one type, in KG node order."""
        if self._by_type is None:
            grouped: dict[str, list[str]] = defaultdict(list)
            for node in self.kg.nodes.values():
                grouped[node.type].append(node.id)
            self._by_type = {key: tuple(ids) for key, ids in grouped.items()}
        return self._by_type.get(node_type, ())

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
