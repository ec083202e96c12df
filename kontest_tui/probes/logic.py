"""HalluVault logic-rule tests: questions derived from KG facts by a reasoning rule.

negation, symmetric and inverse rewrite a KG edge; transitive asks a 2-hop chain as one
question; composite chains rules (e.g. transitive + inverse + negation). Each derived
question has the answer the rule implies; "I don't know" is a refusal, not an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kontest_tui.domain.records import Answer, Conversation, Query, Relation, TestKind
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.probes.templates import LOGIC_RULES, ProbeTemplates, fill

EDGE_RULES = ("negation", "symmetric", "inverse")  # apply to a KG edge
CHAIN_RULES = ("transitive", "composite")  # apply to a relation with nodes in between


def _applies(rule: str, relation: Relation) -> bool:
    if rule in EDGE_RULES:
        return not relation.between
    if rule == "transitive":
        return len(relation.between) == 1  # {middle} must name the one node in between
    return bool(relation.between)


def build_logic_conversations(
    kg: KnowledgeGraph,
    relations: Iterable[Relation],
    templates: ProbeTemplates,
    *,
    rules: Sequence[str] = LOGIC_RULES,
) -> list[Conversation]:
    """One conversation per (relation, applicable rule with a template), in relation order."""
    prompt = templates.prompt("logic")
    conversations: list[Conversation] = []
    for relation in relations:
        defined = templates.logic.get(relation.type, {})
        values = {
            "parent": kg.label(relation.parent),
            "child": kg.label(relation.child),
            "middle": kg.label(relation.between[0]) if relation.between else "",
            "parent_type": kg.nodes[relation.parent].type if relation.parent in kg.nodes else "",
            "middle_type": kg.nodes[relation.between[0]].type if relation.between else "",
        }
        for rule in rules:
            template = defined.get(rule)
            if template is None or not _applies(rule, relation):
                continue
            expected = Answer.YES if template.expected == "yes" else Answer.NO
            conversations.append(
                Conversation(
                    id=f"{relation.id}/lr:{rule}",
                    relation_id=relation.id,
                    kind="atomic",
                    label=rule,
                    turns=(Query(relation.id, f"lr:{rule}", fill(template.text, values)),),
                    test_kind=TestKind.LOGIC,
                    expected=(expected,),
                    system_prompt=prompt,
                    meta={"rule": rule, "expected_text": template.expected},
                )
            )
    return conversations
