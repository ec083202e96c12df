"""FactChecker questions from KG relations: yes-no (balanced), multiple choice, WH, 2-hop.

Every question has a known right answer taken from the KG. Distractors come from the whole KG
(its edges of the same relation type, or its nodes of the same type), never from the relations
selected for the session, so `--limit` or a scope changes which relations are asked about and
never the questions asked about one relation. A distractor is never true in the KG: not an
ancestor/descendant of the entity asked about, and not sharing a label with one (the samples
hold same-label entities). 2-hop questions (FactChecker, seed 003, Table 6) are asked as
yes-no (with a balancing distractor) and as multiple choice over the chain's top entity.
"""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import overload

from kontest_tui.domain.extras import WH, ChoiceOption, FactcheckExtras
from kontest_tui.domain.records import Answer, Conversation, Query, Relation, TestKind
from kontest_tui.generate.relations import known_relation_types, relation_type
from kontest_tui.kg.aliases import usable_aliases
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.probes.matching import core_key
from kontest_tui.probes.templates import QUESTION_TYPES, ProbeTemplates, fill

LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class Lineage:
    """Ancestor sets of every node and the ids carrying each label: the KG's "true facts"."""

    ancestors: dict[str, frozenset[str]]
    ids_by_label: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, kg: KnowledgeGraph) -> Lineage:
        parents: dict[str, list[str]] = defaultdict(list)
        for edge in kg.edges:
            parents[edge.child].append(edge.parent)
        ancestors: dict[str, frozenset[str]] = {}

        def resolve(node: str) -> frozenset[str]:
            # Iterative to stay safe on deep graphs; KG files are validated acyclic.
            stack = [node]
            while stack:
                current = stack[-1]
                pending = [p for p in parents.get(current, ()) if p not in ancestors]
                if pending:
                    stack.extend(pending)
                    continue
                stack.pop()
                found: set[str] = set()
                for parent in parents.get(current, ()):
                    found.add(parent)
                    found |= ancestors[parent]
                ancestors[current] = frozenset(found)
            return ancestors[node]

        for node_id in kg.nodes:
            resolve(node_id)
        by_label: dict[str, list[str]] = defaultdict(list)
        for node in kg.nodes.values():
            by_label[node.label.casefold()].append(node.id)
        return cls(ancestors, {label: tuple(ids) for label, ids in by_label.items()})

    def is_true(self, parent: str, child: str) -> bool:
        """Does the KG say `parent` contains `child` (directly or through other nodes)?"""
        return parent in self.ancestors.get(child, frozenset())

    def label_is_true_child(self, kg: KnowledgeGraph, parent: str, candidate: str) -> bool:
        """Is any entity labelled like `candidate` inside `parent` (or `parent` itself)?"""
        label = kg.label(candidate).casefold()
        return any(
            other == parent or self.is_true(parent, other)
            for other in self.ids_by_label.get(label, ())
        )

    def label_is_true_parent(self, kg: KnowledgeGraph, child: str, candidate: str) -> bool:
        """Is any entity labelled like `candidate` an ancestor of `child` (or `child` itself)?"""
        label = kg.label(candidate).casefold()
        return any(
            other == child or self.is_true(other, child)
            for other in self.ids_by_label.get(label, ())
        )


def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(":".join((str(seed), *parts)))


def _type_of(kg: KnowledgeGraph, node_id: str) -> str:
    node = kg.nodes.get(node_id)
    return node.type if node and node.type else "place"


def _question(
    relation: Relation,
    key: str,
    text: str,
    expected: Answer | None,
    prompt: str,
    extras: FactcheckExtras,
) -> Conversation:
    return Conversation(
        id=f"{relation.id}/fc:{key}",
        relation_id=relation.id,
        kind="atomic",
        label=key,
        turns=(Query(relation.id, f"fc:{extras.question_type}", text),),
        test_kind=TestKind.FACTCHECK,
        expected=(expected,),
        system_prompt=prompt,
        extras=replace(extras, relation_type=relation.type),
    )


class _Without(Sequence[str]):
    """`items` without the positions in `skipped` (each sorted, all distinct): what the
    filtered copy would hold, in its order, without making it. `random.choice` and
    `random.sample` pick from it what they would pick from the copy (they read only its
    length and the items at the indices they draw)."""

    __slots__ = ("items", "size", "skipped")

    def __init__(self, items: Sequence[str], *skipped: Sequence[int]) -> None:
        self.items = items
        self.skipped = tuple(positions for positions in skipped if positions)
        self.size = len(items) - sum(len(positions) for positions in self.skipped)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[str]:
        skipped = set().union(*self.skipped)
        return (item for position, item in enumerate(self.items) if position not in skipped)

    def _skipped_upto(self, position: int) -> int:
        return sum(bisect_right(positions, position) for positions in self.skipped)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        size = self.size
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(size))]
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(index)
        if not self.skipped:
            return self.items[index]
        # The smallest position with index + 1 kept items up to it (binary search).
        low, high = index, len(self.items) - 1
        while low < high:
            middle = (low + high) // 2
            if middle + 1 - self._skipped_upto(middle) > index:
                high = middle
            else:
                low = middle + 1
        return self.items[low]


def _skips(positions: Iterable[int]) -> list[int]:
    return sorted(set(positions))


class _ChildPool:
    """The children of one relation type (sorted) for picking a yes-no question's
    distractor: a child that is not the relation's, no entity labelled like it inside the
    relation's parent, of the true child's type when one is left. The children a parent
    rules out (the labels of its subtree) are found once per parent from the subtree, not
    by scanning the pool per question."""

    def __init__(self, kg: KnowledgeGraph, ids: Sequence[str]) -> None:
        self.ids = ids
        self.by_type: dict[str, list[str]] = defaultdict(list)
        # label (casefolded) -> (type, position among that type's, position among all)
        self.where: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
        self.position: dict[str, tuple[str, int, int]] = {}
        for position, node_id in enumerate(ids):
            kind = _type_of(kg, node_id)
            place = (kind, len(self.by_type[kind]), position)
            self.by_type[kind].append(node_id)
            self.where[kg.label(node_id).casefold()].append(place)
            self.position[node_id] = place
        self._ruled_out: dict[str, dict[str | None, list[int]]] = {}

    def ruled_out(self, parent: str, labels: Iterable[str]) -> dict[str | None, list[int]]:
        """Positions of the children labelled like `parent` or an entity inside it
        (`labels`), among all (key None) and per type."""
        found = self._ruled_out.get(parent)
        if found is None:
            every: list[int] = []
            per_type: dict[str, list[int]] = defaultdict(list)
            for label in labels:
                for kind, typed, position in self.where.get(label, ()):
                    every.append(position)
                    per_type[kind].append(typed)
            found = {None: _skips(every), **{k: _skips(v) for k, v in per_type.items()}}
            self._ruled_out[parent] = found
        return found

    def pick(
        self, kg: KnowledgeGraph, relation: Relation, labels: Iterable[str], seed: int
    ) -> str | None:
        ruled_out = self.ruled_out(relation.parent, labels)
        wanted_type = _type_of(kg, relation.child)
        place = self.position.get(relation.child)
        candidates: Sequence[str] = ()
        if wanted_type in self.by_type:
            skipped = ruled_out.get(wanted_type, [])
            own = (place[1],) if place is not None and place[0] == wanted_type else ()
            candidates = _Without(self.by_type[wanted_type], skipped, _not_in(own, skipped))
        if not candidates:
            skipped = ruled_out[None]
            own = (place[2],) if place is not None else ()
            candidates = _Without(self.ids, skipped, _not_in(own, skipped))
        return _rng(seed, relation.id, "child").choice(candidates) if candidates else None


def _not_in(positions: Sequence[int], sorted_positions: Sequence[int]) -> tuple[int, ...]:
    return tuple(
        position
        for position in positions
        if (at := bisect_left(sorted_positions, position)) == len(sorted_positions)
        or sorted_positions[at] != position
    )


class _SubtreeLabels:
    """The labels (casefolded) of an entity and every entity inside it, once per entity."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        self._found: dict[str, frozenset[str]] = {}

    def of(self, node_id: str) -> frozenset[str]:
        found = self._found.get(node_id)
        if found is None:
            seen = {node_id}
            stack = [node_id]
            while stack:
                for child in self.kg.children(stack.pop()):
                    if child not in seen:
                        seen.add(child)
                        stack.append(child)
            nodes = self.kg.nodes
            found = frozenset(nodes[n].label.casefold() for n in seen if n in nodes)
            self._found[node_id] = found
        return found


class _ParentPool:
    """The parents of one relation type (sorted) for picking a multiple-choice or 2-hop
    question's distractors: not the relation's parent nor labelled like it, of the parent's
    type (when it has one), each label once (its first entity), no entity labelled like it
    containing the child. All these rules go by label, so each type's list of first
    entities per label is made once and a question only rules out the labels of its child's
    lineage."""

    def __init__(self, kg: KnowledgeGraph, ids: Sequence[str]) -> None:
        self.kg = kg
        self.ids = ids
        self._firsts: dict[str, tuple[list[str], dict[str, int]]] = {}

    def firsts(self, wanted_type: str) -> tuple[list[str], dict[str, int]]:
        """The pool's first entity per label (of `wanted_type` when it is not ""), and
        each label's position among them."""
        found = self._firsts.get(wanted_type)
        if found is None:
            kept: list[str] = []
            at: dict[str, int] = {}
            nodes = self.kg.nodes
            for candidate in self.ids:
                if wanted_type and nodes[candidate].type != wanted_type:
                    continue
                label = self.kg.label(candidate).casefold()
                if label not in at:
                    at[label] = len(kept)
                    kept.append(candidate)
            found = self._firsts[wanted_type] = (kept, at)
        return found

    def pick(
        self,
        lineage: Lineage,
        relation: Relation,
        count: int,
        seed: int,
        purpose: str,
    ) -> list[str]:
        kg = self.kg
        wanted_type = kg.nodes[relation.parent].type if relation.parent in kg.nodes else ""
        kept, at = self.firsts(wanted_type)
        lineage_ids = (relation.child, *lineage.ancestors.get(relation.child, ()))
        ruled_out = {kg.label(relation.parent).casefold()}
        ruled_out.update(kg.nodes[n].label.casefold() for n in lineage_ids if n in kg.nodes)
        candidates = _Without(kept, _skips(at[label] for label in ruled_out if label in at))
        if len(candidates) < count:
            return []
        return _rng(seed, relation.id, purpose).sample(candidates, count)


def names_by_core(kg: KnowledgeGraph) -> dict[tuple[str, ...], list[tuple[str, str]]]:
    """Core key (probes.matching.core_key) -> (node id, name) of every label and usable alias."""
    found: dict[tuple[str, ...], list[tuple[str, str]]] = defaultdict(list)
    for node_id, node in kg.nodes.items():
        for name in (node.label, *usable_aliases(kg, node_id)):
            found[core_key(name)].append((node_id, name))
    return found


def others_named(
    names: dict[tuple[str, ...], list[tuple[str, str]]], node_id: str, accepted: Sequence[str]
) -> list[str]:
    """The names of other KG entities that match an accepted name by rule (the same core):
    a WH answer naming one of them names another entity (probes.matching.names_other_entity)."""
    found: list[str] = []
    for name in accepted:
        for other, other_name in names.get(core_key(name), ()):
            if other != node_id and other_name not in found:
                found.append(other_name)
    return found


def build_factcheck_conversations(
    kg: KnowledgeGraph,
    relations: Iterable[Relation],
    templates: ProbeTemplates,
    *,
    seed: int = 0,
    question_types: Sequence[str] = QUESTION_TYPES,
) -> list[Conversation]:
    """FactChecker conversations in relation order. A yes question is kept only when its
    balancing no question (a distractor) exists, so yes and no stay equal in number."""
    relations = list(relations)
    lineage = Lineage.of(kg)
    children_by_type: dict[str, set[str]] = defaultdict(set)
    parents_by_type: dict[str, set[str]] = defaultdict(set)
    parents_of_child: dict[tuple[str, str], set[str]] = defaultdict(set)
    template_set = known_relation_types(kg)
    for edge in kg.edges:  # the whole KG, whatever the session's relations are
        kind = relation_type(kg, edge.parent, edge.child, template_set)
        children_by_type[kind].add(edge.child)
        parents_by_type[kind].add(edge.parent)
        parents_of_child[(kind, edge.child)].add(edge.parent)
    children_pool = {t: _ChildPool(kg, sorted(ids)) for t, ids in children_by_type.items()}
    parents_pool = {t: _ParentPool(kg, sorted(ids)) for t, ids in parents_by_type.items()}
    # Any entity that contains another, for chains whose own type has no edge (music's
    # artist -> song): _ParentPool.pick keeps those of the asked entity's node type.
    all_parents = _ParentPool(kg, sorted({edge.parent for edge in kg.edges}))
    subtree_labels = _SubtreeLabels(kg)
    names = names_by_core(kg) if "wh" in question_types else {}

    conversations: list[Conversation] = []
    for relation in relations:
        texts = templates.factcheck.get(relation.type, {})
        values = {
            "parent": kg.label(relation.parent),
            "child": kg.label(relation.child),
            "parent_type": _type_of(kg, relation.parent),
            "middle": kg.label(relation.between[0]) if relation.between else "",
            "middle_type": _type_of(kg, relation.between[0]) if relation.between else "",
        }
        direct = not relation.between
        if direct and "yes_no" in question_types and "yes_no" in texts:
            pool = children_pool.get(relation.type)
            distractor = (
                pool.pick(kg, relation, subtree_labels.of(relation.parent), seed)
                if pool is not None
                else None
            )
            if distractor is not None:
                prompt = templates.prompt("yes_no")
                base = FactcheckExtras(question_type="yes_no", hops=1)
                conversations.append(
                    _question(
                        relation,
                        "yes_no",
                        fill(texts["yes_no"], values),
                        Answer.YES,
                        prompt,
                        replace(base, expected_text="yes"),
                    )
                )
                wrong = {**values, "child": kg.label(distractor)}
                conversations.append(
                    _question(
                        relation,
                        "yes_no:distractor",
                        fill(texts["yes_no"], wrong),
                        Answer.NO,
                        prompt,
                        replace(base, expected_text="no", distractor=distractor),
                    )
                )
        if direct and "multiple_choice" in question_types and "multiple_choice" in texts:
            parents = parents_pool.get(relation.type)
            distractors = (
                parents.pick(lineage, relation, 3, seed, "mc") if parents is not None else []
            )
            if distractors:
                conversations.append(
                    _choice_question(
                        kg,
                        relation,
                        "multiple_choice",
                        fill(texts["multiple_choice"], values),
                        [relation.parent, *distractors],
                        seed,
                        templates.prompt("multiple_choice"),
                        FactcheckExtras(question_type="multiple_choice", hops=1),
                    )
                )
        unique = len(parents_of_child.get((relation.type, relation.child), ())) == 1
        if direct and unique and "wh" in question_types and "wh" in texts:
            accepted = [kg.label(relation.parent), *usable_aliases(kg, relation.parent)]
            conversations.append(
                _question(
                    relation,
                    "wh",
                    fill(texts["wh"], values),
                    None,
                    templates.prompt("wh"),
                    FactcheckExtras(
                        question_type=WH,
                        hops=1,
                        expected_text=accepted[0],
                        accepted=tuple(accepted),
                        others=tuple(others_named(names, relation.parent, accepted)),
                    ),
                )
            )
        if len(relation.between) == 1 and "two_hop" in question_types and "two_hop" in texts:
            distractors = parents_pool.get(relation.type, all_parents).pick(
                lineage, relation, 1, seed, "2hop"
            )
            if distractors:
                prompt = templates.prompt("yes_no")
                base = FactcheckExtras(question_type="two_hop", hops=2, middle=relation.between[0])
                conversations.append(
                    _question(
                        relation,
                        "two_hop",
                        fill(texts["two_hop"], values),
                        Answer.YES,
                        prompt,
                        replace(base, expected_text="yes"),
                    )
                )
                wrong = {**values, "parent": kg.label(distractors[0])}
                conversations.append(
                    _question(
                        relation,
                        "two_hop:distractor",
                        fill(texts["two_hop"], wrong),
                        Answer.NO,
                        prompt,
                        replace(base, expected_text="no", distractor=distractors[0]),
                    )
                )
        if (
            len(relation.between) == 1
            and "two_hop_choice" in question_types
            and "two_hop_choice" in texts
        ):
            distractors = parents_pool.get(relation.type, all_parents).pick(
                lineage, relation, 3, seed, "2hop-mc"
            )
            if distractors:
                conversations.append(
                    _choice_question(
                        kg,
                        relation,
                        "two_hop_choice",
                        fill(texts["two_hop_choice"], values),
                        [relation.parent, *distractors],
                        seed,
                        templates.prompt("multiple_choice"),
                        FactcheckExtras(
                            question_type="two_hop_choice", hops=2, middle=relation.between[0]
                        ),
                    )
                )
    return conversations


def _choice_question(
    kg: KnowledgeGraph,
    relation: Relation,
    key: str,
    text: str,
    options: list[str],
    seed: int,
    prompt: str,
    extras: FactcheckExtras,
) -> Conversation:
    """A multiple-choice question: options shuffled per relation, the right one recorded."""
    right = options[0]
    _rng(seed, relation.id, "shuffle" if key == "multiple_choice" else f"shuffle:{key}").shuffle(
        options
    )
    letter = LETTERS[options.index(right)]
    listed = "\n".join(f"{LETTERS[i]}) {kg.label(o)}" for i, o in enumerate(options))
    return _question(
        relation,
        key,
        f"{text}\n{listed}",
        None,
        prompt,
        replace(
            extras,
            answer=letter,
            expected_text=letter,
            options=tuple(ChoiceOption(LETTERS[i], o, kg.label(o)) for i, o in enumerate(options)),
        ),
    )


def expected_answer(conversation: Conversation) -> str | None:
    """What a FactChecker question expects, as text: yes/no, the right option's letter, or the
    label a WH question asks for (None for other conversations)."""
    extras = conversation.extras
    return extras.expected_text if isinstance(extras, FactcheckExtras) else None


def correct_option(conversation: Conversation) -> str | None:
    """The right option of a multiple-choice question ("B) Ulster"), or the accepted labels of
    a WH question joined by " | "; None for other questions."""
    extras = conversation.extras
    if not isinstance(extras, FactcheckExtras):
        return None
    right = extras.option(extras.answer)
    if right is not None:
        return f"{right.letter}) {right.label}"
    return " | ".join(extras.accepted) or None
