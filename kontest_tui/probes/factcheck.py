"""FactChecker questions from KG relations: yes-no (balanced), multiple choice, WH, 2-hop.

Every question has a known right answer taken from the KG. Distractors come from other
relations of the same type and are never true in the KG: not an ancestor/descendant of the
entity asked about, and not sharing a label with one (the samples hold same-label entities).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kontest_tui.domain.records import Answer, Conversation, Query, Relation, TestKind
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.probes.templates import ProbeTemplates, fill

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
            other == parent or self.is_true(parent, other) for other in self.ids_by_label.get(label, ())
        )

    def label_is_true_parent(self, kg: KnowledgeGraph, child: str, candidate: str) -> bool:
        """Is any entity labelled like `candidate` an ancestor of `child` (or `child` itself)?"""
        label = kg.label(candidate).casefold()
        return any(
            other == child or self.is_true(other, child) for other in self.ids_by_label.get(label, ())
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
    meta: dict[str, object],
) -> Conversation:
    return Conversation(
        id=f"{relation.id}/fc:{key}",
        relation_id=relation.id,
        kind="atomic",
        label=key,
        turns=(Query(relation.id, f"fc:{meta['question_type']}", text),),
        test_kind=TestKind.FACTCHECK,
        expected=(expected,),
        system_prompt=prompt,
        meta={**meta, "relation_type": relation.type},
    )


def _pick_distractor_child(
    kg: KnowledgeGraph, lineage: Lineage, relation: Relation, pool: Sequence[str], seed: int
) -> str | None:
    candidates = [
        c
        for c in pool
        if c != relation.child and not lineage.label_is_true_child(kg, relation.parent, c)
    ]
    # Prefer an entity of the same kind as the true one (a region for a region).
    wanted_type = _type_of(kg, relation.child)
    same_type = [c for c in candidates if _type_of(kg, c) == wanted_type]
    candidates = same_type or candidates
    return _rng(seed, relation.id, "child").choice(candidates) if candidates else None


def _pick_distractor_parents(
    kg: KnowledgeGraph,
    lineage: Lineage,
    relation: Relation,
    pool: Sequence[str],
    count: int,
    seed: int,
    purpose: str,
) -> list[str]:
    wanted_type = kg.nodes[relation.parent].type if relation.parent in kg.nodes else ""
    seen_labels = {kg.label(relation.parent).casefold()}
    candidates = []
    for candidate in pool:
        label = kg.label(candidate).casefold()
        if candidate == relation.parent or label in seen_labels:
            continue
        if wanted_type and kg.nodes[candidate].type != wanted_type:
            continue
        if lineage.label_is_true_parent(kg, relation.child, candidate):
            continue
        seen_labels.add(label)
        candidates.append(candidate)
    if len(candidates) < count:
        return []
    return _rng(seed, relation.id, purpose).sample(candidates, count)


def build_factcheck_conversations(
    kg: KnowledgeGraph,
    relations: Iterable[Relation],
    templates: ProbeTemplates,
    *,
    seed: int = 0,
    question_types: Sequence[str] = ("yes_no", "multiple_choice", "wh", "two_hop"),
) -> list[Conversation]:
    """FactChecker conversations in relation order. A yes question is kept only when its
    balancing no question (a distractor) exists, so yes and no stay equal in number."""
    relations = list(relations)
    lineage = Lineage.of(kg)
    children_by_type: dict[str, set[str]] = defaultdict(set)
    parents_by_type: dict[str, set[str]] = defaultdict(set)
    parents_of_child: dict[tuple[str, str], set[str]] = defaultdict(set)
    for relation in relations:
        if not relation.between:
            children_by_type[relation.type].add(relation.child)
            parents_by_type[relation.type].add(relation.parent)
            parents_of_child[(relation.type, relation.child)].add(relation.parent)
    children_pool = {t: sorted(ids) for t, ids in children_by_type.items()}
    parents_pool = {t: sorted(ids) for t, ids in parents_by_type.items()}

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
            distractor = _pick_distractor_child(
                kg, lineage, relation, children_pool.get(relation.type, []), seed
            )
            if distractor is not None:
                prompt = templates.prompt("yes_no")
                base = {"question_type": "yes_no", "hops": 1}
                conversations.append(
                    _question(relation, "yes_no", fill(texts["yes_no"], values), Answer.YES, prompt,
                              {**base, "expected_text": "yes"})
                )
                wrong = {**values, "child": kg.label(distractor)}
                conversations.append(
                    _question(relation, "yes_no:distractor", fill(texts["yes_no"], wrong), Answer.NO,
                              prompt, {**base, "expected_text": "no", "distractor": distractor})
                )
        if direct and "multiple_choice" in question_types and "multiple_choice" in texts:
            distractors = _pick_distractor_parents(
                kg, lineage, relation, parents_pool.get(relation.type, []), 3, seed, "mc"
            )
            if distractors:
                options = [relation.parent, *distractors]
                _rng(seed, relation.id, "shuffle").shuffle(options)
                letter = LETTERS[options.index(relation.parent)]
                listed = "\n".join(f"{LETTERS[i]}) {kg.label(o)}" for i, o in enumerate(options))
                conversations.append(
                    _question(
                        relation, "multiple_choice",
                        f"{fill(texts['multiple_choice'], values)}\n{listed}", None,
                        templates.prompt("multiple_choice"),
                        {"question_type": "multiple_choice", "hops": 1, "answer": letter,
                         "expected_text": letter,
                         "options": [{"letter": LETTERS[i], "id": o, "label": kg.label(o)}
                                     for i, o in enumerate(options)]},
                    )
                )
        unique = len(parents_of_child.get((relation.type, relation.child), ())) == 1
        if direct and unique and "wh" in question_types and "wh" in texts:
            node = kg.nodes.get(relation.parent)
            accepted = [kg.label(relation.parent), *(node.aliases if node else ())]
            conversations.append(
                _question(relation, "wh", fill(texts["wh"], values), None, templates.prompt("wh"),
                          {"question_type": "wh", "hops": 1, "expected_text": accepted[0],
                           "accepted": accepted})
            )
        if len(relation.between) == 1 and "two_hop" in question_types and "two_hop" in texts:
            distractors = _pick_distractor_parents(
                kg, lineage, relation, parents_pool.get(relation.type, [])
                or sorted({r.parent for r in relations if r.type == relation.type}), 1, seed, "2hop"
            )
            if distractors:
                prompt = templates.prompt("yes_no")
                base = {"question_type": "two_hop", "hops": 2, "middle": relation.between[0]}
                conversations.append(
                    _question(relation, "two_hop", fill(texts["two_hop"], values), Answer.YES, prompt,
                              {**base, "expected_text": "yes"})
                )
                wrong = {**values, "parent": kg.label(distractors[0])}
                conversations.append(
                    _question(relation, "two_hop:distractor", fill(texts["two_hop"], wrong), Answer.NO,
                              prompt, {**base, "expected_text": "no", "distractor": distractors[0]})
                )
    return conversations
