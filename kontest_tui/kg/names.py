"""How KG nodes and relations are named to a reader: labels, cleaned, told apart by the parent.

The explorer, the explanation cards and the exports use the same names.

A label is shown as it is unless another node has the same label; then the first parent's
label is added (`Garnich (in Canton of Capellen)`), with the node's type when the parent
has the same label (`Garnich (locality in Garnich)`, not "Garnich (in Garnich)"), and the id
when even that is shared. Labels are
cleaned like model output (escape codes and control characters removed), so a KG file
cannot draw on the terminal. Names are compared (searched) normalised: `normalise_name`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from rapidfuzz import utils

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Relation
from kontest_tui.kg.graph import KnowledgeGraph


class NodeNames:
    """Display names of one KG's nodes (made once per screen; lookups are dict reads)."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        parent_of: dict[str, str] = {}
        for edge in kg.edges:
            parent_of.setdefault(edge.child, edge.parent)
        labels = {node_id: clean_text(node.label) for node_id, node in kg.nodes.items()}
        shared = {label for label, count in Counter(labels.values()).items() if count > 1}
        types = {node_id: clean_text(node.type) for node_id, node in kg.nodes.items()}
        names: dict[str, str] = {}
        for node_id, label in labels.items():
            parent = parent_of.get(node_id)
            if label in shared and parent in labels:
                label = told_apart(label, labels[parent], types[node_id])
            names[node_id] = label
        still = {name for name, count in Counter(names.values()).items() if count > 1}
        self.names = {
            node_id: f"{name} [{node_id}]" if name in still else name
            for node_id, name in names.items()
        }
        self.plain = labels

    def label(self, node_id: str) -> str:
        """The cleaned label alone (where the parent is shown next to it anyway)."""
        return self.plain.get(node_id, clean_text(node_id))

    def name(self, node_id: str) -> str:
        """The cleaned label, told apart from equal labels by the parent (or the id)."""
        return self.names.get(node_id, clean_text(node_id))

    def relation(self, relation: Relation) -> str:
        """`Ireland ⊃ Kinawley`."""
        return f"{self.name(relation.parent)} ⊃ {self.name(relation.child)}"


def told_apart(label: str, parent_label: str, node_type: str) -> str:
    """A shared label told apart by its parent: `Garnich (in Canton of Capellen)`; when the
    parent has the same label, what the node is in it: `Garnich (locality in Garnich)` (a
    node without a type: `Garnich (part of Garnich)`)."""
    if parent_label != label:
        return f"{label} (in {parent_label})"
    if node_type:
        return f"{label} ({node_type} in {parent_label})"
    return f"{label} (part of {parent_label})"


def plain_label(name: str) -> str:
    """A shown name without what `NodeNames` added to tell it apart (the id in brackets,
    the parent in parentheses): `Garnich (locality in Garnich)` -> `Garnich`."""
    return _TOLD_APART.sub("", name)


# What told_apart and NodeNames add at the end of a label.
_TOLD_APART = re.compile(r"(?: \((?:[^()]* )?in [^()]*\)| \(part of [^()]*\))?(?: \[[^\[\]]*\])?$")


def normalise_name(text: str) -> str:
    """Lower-cased, accents and punctuation removed: "Éire" and "eire" compare equal."""
    decomposed = unicodedata.normalize("NFKD", text)
    return utils.default_process("".join(c for c in decomposed if not unicodedata.combining(c)))
