"""HalluVault logic-rule tests (seed 002, Sec. 4.2): rules applied to KG facts, asked as questions.

A KG relation is a fact R(child, parent) ("child is located in parent"); a relation with nodes
in between is a chain of such facts (its premises). The rules derive a new fact, stated with
the relation type's forms (probes.templates.LogicForms):

- negation (Def. 4.1): from R(s,o), the negated statement not-R(s,o) is false -> expected no;
- symmetric (Def. 4.2): for a symmetric R only, R(o,s) holds -> expected yes. Containment and
  the music relations are not symmetric, so the bundled samples never ask it (docs/probes.md);
- inverse (Def. 4.3): R'(o,s) with R' the reversed relation ("parent includes child") -> yes;
- transitive (Def. 4.4): R(X,Y), R(Y,Z) give the derived fact R(X,Z), asked alone -> yes
  (only when every link has the relation's own type: the same R);
- composite (Def. 4.5): rules chained on a chain's facts: the conclusion of the chain
  (transitive, or the predicates composed when the links differ), then inverse, then
  optionally negation: "composite:inverse" (yes) and "composite:inverse+negation" (no).

Every derived question is asked together with its premises ("Is it true that X is located in
Y?" for each KG link it rests on, rule "premise"), so that each logic error can be classified
as the paper's Sec. 5.3 does: error-knowledge (the model denies a premise) or error-inference
(it affirms every premise but gets the derived fact wrong). See probes.evaluate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from kontest_tui.domain.extras import PREMISE, KnowledgePoint, LogicExtras, PremiseExtras
from kontest_tui.domain.records import Answer, Conversation, Query, Relation, TestKind
from kontest_tui.generate.relations import known_relation_types, relation_type
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.probes.templates import LOGIC_RULES, LogicForms, ProbeTemplates, fill

COMPOSITE_STEPS: tuple[tuple[str, ...], ...] = (("inverse",), ("inverse", "negation"))


@dataclass(frozen=True, slots=True)
class Fact:
    """R(child, parent) stated in one form: `container` contains `contained`."""

    container: str
    contained: str
    type: str
    inverse: bool = False
    negated: bool = False

    @property
    def form(self) -> str:
        if self.inverse:
            return "inverse_negated" if self.negated else "inverse"
        return "negated" if self.negated else "fact"

    @property
    def expected(self) -> Answer:
        """Every fact comes from the KG (true); a negated statement of it is false."""
        return Answer.NO if self.negated else Answer.YES


def _links(relation: Relation) -> list[tuple[str, str]]:
    return list(zip(relation.path, relation.path[1:], strict=False))


def derived_facts(
    kg: KnowledgeGraph,
    relation: Relation,
    templates: ProbeTemplates,
    rules: Sequence[str],
    template_set: TemplateSet | None = None,
) -> list[tuple[str, Fact]]:
    """(rule label, derived fact) for every rule in `rules` that applies to the relation."""
    forms = templates.logic.get(relation.type)
    if forms is None:
        return []
    found: list[tuple[str, Fact]] = []
    base = Fact(relation.parent, relation.child, relation.type)
    if not relation.between:
        if "negation" in rules:
            found.append(
                ("negation", Fact(base.container, base.contained, base.type, negated=True))
            )
        if "symmetric" in rules and forms.symmetric:
            found.append(("symmetric", Fact(base.contained, base.container, base.type)))
        if "inverse" in rules:
            found.append(("inverse", Fact(base.container, base.contained, base.type, inverse=True)))
        return found
    same_relation = all(
        relation_type(kg, parent, child, template_set) == relation.type
        for parent, child in _links(relation)
    )
    if "transitive" in rules and same_relation:
        found.append(("transitive", base))
    if "composite" in rules:
        for steps in COMPOSITE_STEPS:
            label = "composite:" + "+".join(steps)
            found.append(
                (
                    label,
                    Fact(
                        base.container,
                        base.contained,
                        base.type,
                        inverse="inverse" in steps,
                        negated="negation" in steps,
                    ),
                )
            )
    return found


def _state(kg: KnowledgeGraph, fact: Fact, forms: LogicForms) -> str | None:
    text = forms.text(fact.form)
    if text is None:
        return None
    values = {
        "parent": kg.label(fact.container),
        "child": kg.label(fact.contained),
        "parent_type": kg.nodes[fact.container].type if fact.container in kg.nodes else "",
        "middle": "",
        "middle_type": "",
    }
    return fill(text, values)


def _knowledge_points(
    kg: KnowledgeGraph,
    relation: Relation,
    templates: ProbeTemplates,
    template_set: TemplateSet | None,
) -> LogicExtras:
    """What the answer oracle (probes.answer_oracle) compares a wrong answer's reasoning with:
    the knowledge points (each link of the relation's path, child, relation type and parent
    by label), the aliases of their entities, and the words naming their relation types
    (the rest of the extras left empty, for the derived questions to fill)."""
    points: list[KnowledgePoint] = []
    words: dict[str, tuple[str, ...]] = {}
    aliases: dict[str, tuple[str, ...]] = {}
    for parent, child in _links(relation):
        link_type = relation_type(kg, parent, child, template_set)
        points.append(KnowledgePoint(kg.label(child), link_type, kg.label(parent)))
        forms = templates.logic.get(link_type)
        words[link_type] = tuple(forms.words) if forms else ()
        for node in (parent, child):
            if node in kg.nodes and kg.nodes[node].aliases:
                aliases[kg.label(node)] = tuple(kg.nodes[node].aliases)
    return LogicExtras(
        rule="",
        steps="",
        expected_text="",
        form="",
        knowledge=tuple(points),
        aliases=aliases,
        words=words,
    )


def build_logic_conversations(
    kg: KnowledgeGraph,
    relations: Iterable[Relation],
    templates: ProbeTemplates,
    *,
    rules: Sequence[str] = LOGIC_RULES,
) -> list[Conversation]:
    """Per relation: the premise questions not asked yet, then one conversation per derived
    fact, in order.

    Each distinct premise (a KG link a derived question rests on) is asked once per session,
    with the first relation that uses it (id `REL/lr:premise:I`, I = the link's place on
    that relation's path); each derived question's extras name its premises (`premises`),
    wherever they were asked."""
    prompt = templates.prompt("logic")
    template_set = known_relation_types(kg)
    conversations: list[Conversation] = []
    asked: dict[tuple[str, str], str] = {}  # (parent, child) -> its premise conversation
    for relation in relations:
        derived = [
            (label, fact, text)
            for label, fact in derived_facts(kg, relation, templates, rules, template_set)
            if (text := _state(kg, fact, templates.logic[relation.type])) is not None
        ]
        if not derived:
            continue
        premise_ids: list[str] = []
        for index, (parent, child) in enumerate(_links(relation)):
            if (parent, child) in asked:
                premise_ids.append(asked[parent, child])
                continue
            link_type = relation_type(kg, parent, child, template_set)
            forms = templates.logic.get(link_type)
            text = _state(kg, Fact(parent, child, link_type), forms) if forms else None
            if text is None:
                continue
            cid = f"{relation.id}/lr:{PREMISE}:{index}"
            asked[parent, child] = cid
            premise_ids.append(cid)
            conversations.append(
                Conversation(
                    id=cid,
                    relation_id=relation.id,
                    kind="atomic",
                    label=PREMISE,
                    turns=(Query(relation.id, f"lr:{PREMISE}", text),),
                    test_kind=TestKind.LOGIC,
                    expected=(Answer.YES,),
                    system_prompt=prompt,
                    extras=PremiseExtras((parent, child)),
                )
            )
        knowledge = _knowledge_points(kg, relation, templates, template_set)
        for label, fact, text in derived:
            rule = label.split(":", 1)[0]
            conversations.append(
                Conversation(
                    id=f"{relation.id}/lr:{label}",
                    relation_id=relation.id,
                    kind="atomic",
                    label=rule,
                    turns=(Query(relation.id, f"lr:{label}", text),),
                    test_kind=TestKind.LOGIC,
                    expected=(fact.expected,),
                    system_prompt=prompt,
                    extras=replace(
                        knowledge,
                        rule=rule,
                        steps=label,
                        expected_text=fact.expected.value,
                        form=fact.form,
                        premises=tuple(premise_ids),
                    ),
                )
            )
    return conversations
