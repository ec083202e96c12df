"""What the ensemble and a pair comparison need of a session: its atomic answers per
relation and template, and its metamorphic errors per relation (the weighted ensemble's x_r).

`stored_model_answers(store, id)` reads them from the store (a few indexed queries, no
evaluation) when the session's stored report is current, and evaluates the stored answers
in memory otherwise (nothing is written); `model_answers_from_evaluation` takes them from an
evaluation in hand. Both give the same `ModelAnswers` for the same answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kontest_tui.domain.records import Answer
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.oracles.metamorphic import METAMORPHIC_ORACLES
from kontest_tui.results.evaluate import evaluate_session
from kontest_tui.results.reports import current_report
from kontest_tui.store.database import Store

_ANSWERS = {answer.value: answer for answer in Answer}


@dataclass(frozen=True, slots=True)
class ModelAnswers:
    """What the ensemble needs from one model's session."""

    name: str
    errors: Mapping[str, int]  # relation id -> metamorphic errors x_r
    atomic: Mapping[tuple[str, str], Answer | None]  # (relation id, template id) -> answer
    relation_ids: tuple[str, ...]
    templates: tuple[str, ...]


def model_answers_from_evaluation(evaluation: Evaluation, name: str | None = None) -> ModelAnswers:
    """The ModelAnswers of an evaluation in hand."""
    return ModelAnswers(
        name=name or evaluation.model or evaluation.session or "model",
        errors=evaluation.errors_by_relation(),
        atomic=evaluation.atomic_answers(),
        relation_ids=tuple(evaluation.relation_ids),
        templates=tuple(evaluation.templates),
    )


def stored_model_answers(store: Store, session_id: str, name: str | None = None) -> ModelAnswers:
    """The ModelAnswers of a stored session (see the module docstring); named `name`, else
    by the session's model."""
    report = current_report(store, session_id)
    if report is None:
        return model_answers_from_evaluation(evaluate_session(store, session_id), name)
    relation_ids = store.relations.ids(session_id)
    errors = dict.fromkeys(relation_ids, 0)
    errors.update(store.verdicts.errors_by_relation(session_id, METAMORPHIC_ORACLES))
    atomic = {
        (relation_id, template_id): _ANSWERS.get(answer) if answer is not None else None
        for relation_id, per in store.responses.atomic_answers(session_id).items()
        for template_id, answer in per.items()
    }
    return ModelAnswers(
        name=name or str(report.get("model") or session_id),
        errors=errors,
        atomic=atomic,
        relation_ids=tuple(relation_ids),
        templates=tuple(str(tid) for tid in report.get("templates") or ()),
    )
