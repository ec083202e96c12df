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
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

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
    children_pool = {t: sorted(ids) for t, ids in children_by_type.items()}
    parents_pool = {t: sorted(ids) for t, ids in parents_by_type.items()}
    # Any entity that contains another, for chains whose own type has no edge (music's
    # artist -> song): _pick_distractor_parents keeps those of the asked entity's node type.
    all_parents = sorted({edge.parent for edge in kg.edges})
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
            distractor = _pick_distractor_child(
                kg, lineage, relation, children_pool.get(relation.type, []), seed
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
            distractors = _pick_distractor_parents(
                kg, lineage, relation, parents_pool.get(relation.type, []), 3, seed, "mc"
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
            distractors = _pick_distractor_parents(
                kg,
                lineage,
                relation,
                parents_pool.get(relation.type) or all_parents,
                1,
                seed,
                "2hop",
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
            distractors = _pick_distractor_parents(
                kg,
                lineage,
                relation,
                parents_pool.get(relation.type) or all_parents,
                3,
                seed,
                "2hop-mc",
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
