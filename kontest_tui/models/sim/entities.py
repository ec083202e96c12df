r"""Find a KG relation in free wording: the simulated model's fallback for non-template questions.

Covering-array variants replace template words with synonyms (and entity labels with
aliases), so they no longer match a template text. Given the session's KG, the simulated
model looks for two entity labels or aliases in the question, one an ancestor of the other,
and treats the question as being about that relation: variants of one query then share the
model's knowledge of the fact, as a real model's would. The probe answers (sim/probes.py) use
the same lookups to tell true facts from false ones and to name an entity.

Finding names in a question costs the same whatever the KG's size: at each word start the
question's next characters, case-folded, index the lengths of the names so starting, and each
candidate is one dict lookup; no regex over every label. The folding (`fold_text`) is the
one Python's `re.IGNORECASE` uses, so the scan finds what `(?<!\w)(longest|...)(?!\w)` with
IGNORECASE would (tests/models/test_sim_entities.py checks both on the samples, a synthetic
KG and exotic case pairs).
"""

from __future__ import annotations

from collections import defaultdict

from kontest_tui.kg.graph import KnowledgeGraph

PREFIX = 3  # characters of a name that index it

# Characters re.IGNORECASE treats as one though their lowercase differs (the table in
# CPython's re/_compiler.py, `_equivalences`): folded to the smallest of each group.
_EQUIVALENCES = (
    (0x69, 0x131), (0x73, 0x17F), (0xB5, 0x3BC), (0x345, 0x3B9, 0x1FBE), (0x390, 0x1FD3),
    (0x3B0, 0x1FE3), (0x3B2, 0x3D0), (0x3B5, 0x3F5), (0x3B8, 0x3D1), (0x3BA, 0x3F0),
    (0x3C0, 0x3D6), (0x3C1, 0x3F1), (0x3C2, 0x3C3), (0x3C6, 0x3D5), (0x1E61, 0x1E9B),
    (0xFB05, 0xFB06),
)  # fmt: skip
_CANONICAL = {chr(code): chr(min(group)) for group in _EQUIVALENCES for code in group}
_FOLDED: dict[str, str] = {}


def _fold_char(char: str) -> str:
    """One character as re.IGNORECASE compares it: the simple lowercase of its uppercase
    (when that is one character), then the equivalence table."""
    folded = _FOLDED.get(char)
    if folded is None:
        upper = char.upper()
        base = upper if len(upper) == 1 else char
        lower = "i" if base == "\u0130" else base.lower()  # İ: simple lowercase
        if len(lower) != 1:
            lower = char
        folded = _FOLDED[char] = _CANONICAL.get(lower, lower)
    return folded


def fold_text(text: str) -> str:
    """`text` folded character by character (same length): equal folds match under
    re.IGNORECASE."""
    if text.isascii():
        return text.lower()
    return "".join(_fold_char(char) for char in text)


def _is_word(char: str) -> bool:
    """What the regex \\w matches in a str pattern."""
    return char.isalnum() or char == "_"


class EntityFinder:
    """Label/alias lookup over one KG, with ancestor checks along its edges."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        ordered_ids: dict[str, list[str]] = defaultdict(list)
        for node in kg.nodes.values():
            for name in (node.label, *node.aliases):
                clean = " ".join(name.split()).lower()
                if clean and node.id not in ordered_ids[clean]:  # a few ids a name at most
                    ordered_ids[clean].append(node.id)
        # name -> its ids in KG node order (a tuple: a set beside it was ~200 bytes a name)
        self._ordered_ids = {name: tuple(ids) for name, ids in ordered_ids.items()}
        self._by_type: dict[str, tuple[str, ...]] | None = None
        # folded name -> the names so folded (the ids are looked up by the name)
        folded: dict[str, list[str]] = defaultdict(list)
        for name in self._ordered_ids:
            folded[fold_text(name)].append(name)
        self._folded = dict(folded)
        # folded prefix (up to PREFIX characters) -> the lengths of the names so starting,
        # longest first: the candidates tried at a place of a question
        lengths: dict[str, set[int]] = defaultdict(set)
        for name in self._folded:
            lengths[name[:PREFIX]].add(len(name))
        self._lengths = {prefix: sorted(found, reverse=True) for prefix, found in lengths.items()}
        self._shortest = min((len(name) for name in self._folded), default=0)

    def names_in(self, text: str) -> list[str]:
        r"""The names (as keys of the index) found in `text` left to right, longest first at
        each place, whole words only, not overlapping: what the regex
        `(?<!\w)(longest|...|shortest)(?!\w)` with re.IGNORECASE finds."""
        folded = fold_text(text)
        found: list[str] = []
        size = len(folded)
        position = 0
        while position < size:
            if position and _is_word(text[position - 1]):
                position += 1
                continue
            end = 0
            for length in self._lengths.get(folded[position : position + PREFIX], ()):
                stop = position + length
                if stop <= size and (stop == size or not _is_word(text[stop])):
                    names = self._folded.get(folded[position:stop])
                    if names is not None:
                        end = stop
                        break
            if not end and self._shortest < PREFIX:
                # names shorter than PREFIX are indexed by their whole text
                for cut in range(min(PREFIX - 1, size - position), 0, -1):
                    stop = position + cut
                    names = self._folded.get(folded[position:stop])
                    if names is not None and (stop == size or not _is_word(text[stop])):
                        end = stop
                        break
            if end:
                found.append(folded[position:end])
                position = end
            else:
                position += 1
        return found

    def ids_of(self, name: str) -> tuple[str, ...]:
        """Ids of the entities with this label or alias, in KG node order (case-insensitive)."""
        return self._ordered_ids.get(" ".join(name.split()).lower(), ())

    def parents(self, node_id: str) -> list[str]:
        """Direct parents of a node, in KG edge order."""
        return self.kg.parents(node_id)

    def is_ancestor(self, ancestor: str, node_id: str) -> bool:
        return ancestor in self.kg.ancestors(node_id)

    def find_pair(self, parent: str, child: str) -> tuple[str, str] | None:
        """(parent id, child id) of entities so named, the first an ancestor of the second
        (in KG node order), or None: a false fact, or a name not in the KG."""
        parents = self.ids_of(parent)
        for child_id in self.ids_of(child) if parents else ():
            ancestors = self.kg.ancestors(child_id)
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
        if not self._ordered_ids:
            return None
        text = " ".join(question.split())
        found: list[set[str]] = []
        for folded in self.names_in(text):
            ids: set[str] = set()
            for name in self._folded[folded]:
                ids.update(self._ordered_ids[name])
            found.append(ids)
        candidates = [node_id for ids in found for node_id in sorted(ids)]
        for child in candidates:
            ancestors = self.kg.ancestors(child)
            for parent in candidates:
                if parent != child and parent in ancestors:
                    return self.kg.label(parent), self.kg.label(child)
        return None
