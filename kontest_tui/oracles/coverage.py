"""Knowledge coverage and gap (KONTEST Table 4), from the atomic answers.

For template t, gap_t = relations whose atomic answer under t is not YES (NO or invalid);
intersection = relations not answered YES under any of their templates; coverage =
relations answered YES under at least one template. Percentages are of all relations.

Missing answers (a run in progress) are *pending*, not gaps: a relation enters gap_t once its
answer under t has arrived, and the intersection once all its templates have answered.
So covered + intersection + pending == relations, and at the end of a run
coverage == relations - intersection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation
from kontest_tui.oracles.conversation_index import (
    RelationConversations,
    get_answer,
    index_conversations,
    ordered_templates,
)
from kontest_tui.oracles.report_json import CountPct, GapJSON

COVERED = "covered"
GAP = "gap"  # in the intersection: no template got a yes
PENDING = "pending"
INTERSECTION = "intersection"  # the key of list_gap_relations for the intersection


@dataclass(slots=True)
class TemplateGap:
    """Gap under one template: relations answered but not YES."""

    template_id: str
    missing: int
    pct: float
    answered: int  # relations with an atomic answer (any) under this template
    pending: int  # relations asked under this template with no answer yet


@dataclass(slots=True)
class GapReport:
    """Coverage and gap of one session; `status` maps relation id -> covered|gap|pending."""

    relations: int
    templates: list[str]
    per_template: dict[str, TemplateGap]
    intersection: int
    intersection_pct: float
    covered: int
    covered_pct: float
    pending: int
    status: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> GapJSON:
        return GapJSON(
            per_template={
                template_id: CountPct(missing=gap.missing, pct=gap.pct)
                for template_id, gap in self.per_template.items()
            },
            intersection=CountPct(missing=self.intersection, pct=self.intersection_pct),
        )


def percent(part: int, whole: int) -> float:
    """part/whole in percent, rounded to 2 decimals (0.0 for an empty whole)."""
    return round(100.0 * part / whole, 2) if whole else 0.0


def compute_gap(
    relations: Sequence[Relation],
    conversations: Iterable[Conversation],
    answers: Mapping[AnswerKey, Answer],
    *,
    index: Mapping[str, RelationConversations] | None = None,
    templates: Sequence[str] | None = None,
) -> GapReport:
    """Gap per template, intersection and coverage over the atomic answers given so far.

    `templates` restricts (and orders) the templates considered; by default every template
    that has an atomic conversation, in order of first appearance.
    """
    if index is None:
        index = index_conversations(conversations)
    template_ids = list(templates) if templates is not None else ordered_templates(index)
    missing = dict.fromkeys(template_ids, 0)
    answered = dict.fromkeys(template_ids, 0)
    pending_t = dict.fromkeys(template_ids, 0)
    status: dict[str, str] = {}
    covered = intersection = pending = 0
    for relation in relations:
        entry = index.get(relation.id)
        asked = waiting = 0
        yes = False
        if entry is not None:
            for template_id in template_ids:
                conversation = entry.atomic.get(template_id)
                if conversation is None:
                    continue
                asked += 1
                answer = get_answer(answers, (conversation.id, 0))
                if answer is None:
                    waiting += 1
                    pending_t[template_id] += 1
                    continue
                answered[template_id] += 1
                if answer == Answer.YES:
                    yes = True
                else:
                    missing[template_id] += 1
        if yes:
            status[relation.id] = COVERED
            covered += 1
        elif asked and not waiting:
            status[relation.id] = GAP
            intersection += 1
        else:
            status[relation.id] = PENDING
            pending += 1
    return gap_report(
        len(relations),
        template_ids,
        missing,
        answered,
        pending_t,
        intersection=intersection,
        covered=covered,
        pending=pending,
        status=status,
    )


def gap_report(
    total: int,
    template_ids: Sequence[str],
    missing: Mapping[str, int],
    answered: Mapping[str, int],
    pending_t: Mapping[str, int],
    *,
    intersection: int,
    covered: int,
    pending: int,
    status: dict[str, str] | None = None,
) -> GapReport:
    """The GapReport of these counts over `total` relations (per template: atomic answers
    missing, answered and pending; relations in the intersection, covered and pending),
    percentages made here."""
    per_template = {
        template_id: TemplateGap(
            template_id,
            missing[template_id],
            percent(missing[template_id], total),
            answered[template_id],
            pending_t[template_id],
        )
        for template_id in template_ids
    }
    return GapReport(
        relations=total,
        templates=list(template_ids),
        per_template=per_template,
        intersection=intersection,
        intersection_pct=percent(intersection, total),
        covered=covered,
        covered_pct=percent(covered, total),
        pending=pending,
        status=status if status is not None else {},
    )


def list_gap_relations(
    relation_ids: Sequence[str],
    atomic: Mapping[tuple[str, str], Answer | None],
    gap: GapReport,
) -> dict[str, list[str]]:
    """Relation ids in each template's gap (answered, not YES) and, under INTERSECTION, the
    relations `gap.status` marks as gap, in the order of `relation_ids`. `atomic` maps
    (relation id, template id) -> answer (Evaluation.atomic_answers)."""
    members: dict[str, list[str]] = {template_id: [] for template_id in gap.templates}
    for relation_id in relation_ids:
        for template_id in gap.templates:
            answer = atomic.get((relation_id, template_id))
            if answer is not None and answer != Answer.YES:
                members[template_id].append(relation_id)
    members[INTERSECTION] = [
        relation_id for relation_id in relation_ids if gap.status.get(relation_id) == GAP
    ]
    return members
