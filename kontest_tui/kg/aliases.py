"""Which of a node's aliases may name it in a question or an accepted answer.

An alias that names another entity of the KG is ambiguous, and a question or an answer using
it may be about that other entity: "Luxembourg" is an alias of the Canton of Luxembourg and the
label of the country containing it, so "Is there one Luxembourg inside Luxembourg?" asks about
either, and "Luxembourg" as the canton's WH answer may name the country. So an alias is not
used for a node when it is (case-, accent- and spacing-folded) another node's label, or an
alias of one of the node's ancestors or descendants. `usable_aliases(kg, node_id)` gives the
others; covering-array variants (generate.ipm) and FactChecker's accepted WH answers
(probes.factcheck) use only them.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict

from kontest_tui.kg.graph import KnowledgeGraph

_CACHE_KEY = "alias_filter"


def fold_name(text: str) -> str:
    """A name compared so: accents dropped, case folded, one space between words."""
    if text.isascii():  # NFKD leaves ASCII as it is, with nothing to drop
        return " ".join(text.casefold().split())
    decomposed = unicodedata.normalize("NFKD", text.replace("\u2019", "'"))
    plain = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(plain.casefold().split())


class AliasFilter:
    """The usable aliases of a KG's nodes (built once per KG; see the module docstring)."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        self.label_owners: dict[str, set[str]] = defaultdict(set)
        self.alias_owners: dict[str, set[str]] = defaultdict(set)
        for node_id, node in kg.nodes.items():
            self.label_owners[fold_name(node.label)].add(node_id)
            for alias in node.aliases:
                self.alias_owners[fold_name(alias)].add(node_id)
        self._usable: dict[str, tuple[str, ...]] = {}

    def related(self, one: str, other: str) -> bool:
        """Is one node an ancestor or a descendant of the other?"""
        return other in self.kg.ancestors(one) or one in self.kg.ancestors(other)

    def usable(self, node_id: str) -> tuple[str, ...]:
        """The node's aliases that name no other entity (see the module docstring)."""
        found = self._usable.get(node_id)
        if found is not None:
            return found
        node = self.kg.nodes.get(node_id)
        kept: list[str] = []
        for alias in node.aliases if node is not None else ():
            folded = fold_name(alias)
            if self.label_owners.get(folded, set()) - {node_id}:
                continue  # another node's label
            sharing = self.alias_owners.get(folded, set()) - {node_id}
            if any(self.related(node_id, other) for other in sharing):
                continue  # an ancestor's or a descendant's alias too
            kept.append(alias)
        found = self._usable[node_id] = tuple(kept)
        return found


def alias_filter(kg: KnowledgeGraph) -> AliasFilter:
    """The KG's AliasFilter, made once and kept with the KG."""
    found = kg._cache.get(_CACHE_KEY)
    if not isinstance(found, AliasFilter) or found.kg is not kg:
        found = kg._cache[_CACHE_KEY] = AliasFilter(kg)
    return found


def usable_aliases(kg: KnowledgeGraph, node_id: str) -> tuple[str, ...]:
    """The aliases of `node_id` that may name it (see the module docstring)."""
    return alias_filter(kg).usable(node_id)
