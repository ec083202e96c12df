"""Knowledge-gap mitigation over several models (KONTEST section 3.3, Table 5).

Weighted ensemble: for model i, Score_i = sum over relations of (5 - x_r), x_r = the model's
metamorphic errors on relation r; W_i = Score_i / sum_j Score_j. Per template, the ensemble
says yes to a relation when sum_i W_i * [answer_i == yes] > 0.5 (atomic answers). Majority
vote says yes when more than half of the models do (a tie is no). Gaps are counted over the
relations every model answered validly under every template (the paper drops a relation with
an invalid answer from any model). `cross_validate` takes the weights from k-1 folds and
counts the gap on the held-out fold, over a seeded split of the relations; the gap depends on
the split, so `cross_validate(..., splits=N)` also gives it under N splits (seeds `seed` to
`seed + N - 1`: `SplitSpread`).

Plain data in (per model an `Evaluation`, a (relations, conversations, answers) triple or a
`ModelAnswers`), dataclasses out. `cross_validate_sessions(store, ids)` is the same over
stored sessions, each read with results.answers.stored_model_answers (its stored verdicts
and atomic answers: a few indexed queries, no evaluation when its report is current).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation
from kontest_tui.errors import InvalidInputError
from kontest_tui.mitigate.ensemble_json import (
    CrossValidatedTemplateJSON,
    CrossValidatedTotalJSON,
    CrossValidationJSON,
    EnsembleJSON,
    EnsembleTemplateJSON,
    EnsembleTotalJSON,
    FoldJSON,
    GapCell,
    MeanGapCell,
    SpreadJSON,
)
from kontest_tui.oracles.coverage import percent
from kontest_tui.oracles.evaluate import Evaluation, evaluate
from kontest_tui.results.answers import (
    ModelAnswers,
    model_answers_from_evaluation,
    stored_model_answers,
)
from kontest_tui.store.database import Store

MAX_ERRORS_PER_RELATION = 5  # five metamorphic tests per relation and template pair


ModelInput = (
    ModelAnswers
    | Evaluation
    | tuple[Sequence[Relation], Sequence[Conversation], Mapping[AnswerKey, Answer]]
)


@dataclass(slots=True)
class EnsembleResult:
    """One ensemble's decisions and gaps over a set of relations."""

    method: str  # "weighted" | "majority"
    relation_ids: list[str]
    templates: list[str]
    weights: dict[str, float]
    decisions: dict[str, dict[str, bool]]  # template -> relation -> says yes
    gap: dict[str, int]  # template -> relations the ensemble says no to
    model_gaps: dict[str, dict[str, int]]  # model -> template -> gap
    mean_gap: dict[str, float]  # template -> mean of the models' gaps

    @property
    def gap_total(self) -> int:
        return sum(self.gap.values())

    @property
    def mean_gap_total(self) -> float:
        return sum(self.mean_gap.values())

    @property
    def improvement_pct(self) -> float:
        """Gap reduction over the models' mean gap, in percent (negative = worse)."""
        return improvement(self.mean_gap_total, self.gap_total)

    def to_json(self) -> EnsembleJSON:
        relations = len(self.relation_ids)
        return EnsembleJSON(
            method=self.method,
            models=list(self.weights),
            relations=relations,
            templates=list(self.templates),
            weights={name: round(weight, 6) for name, weight in self.weights.items()},
            per_template={
                template_id: EnsembleTemplateJSON(
                    ensemble=GapCell(
                        missing=self.gap[template_id],
                        pct=percent(self.gap[template_id], relations),
                    ),
                    models_mean=_mean_cell(self.mean_gap[template_id], relations),
                )
                for template_id in self.templates
            },
            all=EnsembleTotalJSON(
                ensemble=self.gap_total,
                models_mean=round(self.mean_gap_total, 4),
                improvement_pct=round(self.improvement_pct, 2),
            ),
            model_gaps={name: dict(gaps) for name, gaps in self.model_gaps.items()},
        )


def _mean_cell(mean: float, relations: int) -> MeanGapCell:
    """The models' mean gap of a template and its share of the relations."""
    return MeanGapCell(
        missing=round(mean, 4), pct=round(100 * mean / relations, 2) if relations else 0.0
    )


@dataclass(slots=True)
class FoldResult:
    """One cross-validation fold: weights from the other folds, gap on this one."""

    index: int
    relation_ids: list[str]
    weights: dict[str, float]
    gap: dict[str, int]


@dataclass(slots=True)
class SplitSpread:
    """The weighted ensemble's gap per template under several fold splits, one per seed."""

    seeds: list[int]
    weighted: dict[str, list[int]]  # template -> gap under each seed's split

    @property
    def totals(self) -> list[int]:
        """The gap summed over templates, per seed."""
        return [sum(gaps[i] for gaps in self.weighted.values()) for i in range(len(self.seeds))]

    def to_json(self) -> SpreadJSON:
        return SpreadJSON(
            seeds=list(self.seeds),
            weighted={t: list(gaps) for t, gaps in self.weighted.items()},
            all=self.totals,
        )


@dataclass(slots=True)
class CrossValidation:
    """k-fold cross-validation of the weighted ensemble vs majority vote and the models' mean
    (Table 5: every relation is counted once, in the fold where it was held out)."""

    k: int
    seed: int
    models: list[str]
    templates: list[str]
    relations: int
    folds: list[FoldResult]
    weighted: dict[str, int]
    majority: dict[str, int]
    mean_gap: dict[str, float]
    model_gaps: dict[str, dict[str, int]]
    weights: dict[str, float] = field(default_factory=dict)  # from all relations, for reference
    spread: SplitSpread | None = None  # the weighted gap under other splits (`splits`)

    def to_json(self) -> CrossValidationJSON:
        weighted, majority = sum(self.weighted.values()), sum(self.majority.values())
        models_mean = sum(self.mean_gap.values())
        per_template = {
            template_id: CrossValidatedTemplateJSON(
                weighted=GapCell(
                    missing=self.weighted[template_id],
                    pct=percent(self.weighted[template_id], self.relations),
                ),
                majority=GapCell(
                    missing=self.majority[template_id],
                    pct=percent(self.majority[template_id], self.relations),
                ),
                models_mean=_mean_cell(self.mean_gap[template_id], self.relations),
            )
            for template_id in self.templates
        }
        data = CrossValidationJSON(
            models=list(self.models),
            k=self.k,
            seed=self.seed,
            relations=self.relations,
            templates=list(self.templates),
            weights={name: round(weight, 6) for name, weight in self.weights.items()},
            per_template=per_template,
            all=CrossValidatedTotalJSON(
                weighted=weighted,
                majority=majority,
                models_mean=round(models_mean, 4),
                weighted_improvement_pct=round(improvement(models_mean, weighted), 2),
                majority_improvement_pct=round(improvement(models_mean, majority), 2),
            ),
            model_gaps={name: dict(gaps) for name, gaps in self.model_gaps.items()},
            folds=[
                FoldJSON(
                    index=fold.index,
                    relations=len(fold.relation_ids),
                    weights={n: round(w, 6) for n, w in fold.weights.items()},
                    gap=dict(fold.gap),
                )
                for fold in self.folds
            ],
        )
        if self.spread is not None:
            data["spread"] = self.spread.to_json()
        return data


def improvement(before: float, after: float) -> float:
    """(before - after) / before in percent; 0.0 when there was no gap before."""
    return 100.0 * (before - after) / before if before else 0.0


def collect_model_answers(
    name: str,
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    answers: Mapping[AnswerKey, Answer],
) -> ModelAnswers:
    """Run the oracles over one model's session and keep what the ensemble needs."""
    return model_answers_from_evaluation(evaluate(relations, conversations, answers), name)


def as_model_answers(models: Sequence[ModelInput]) -> list[ModelAnswers]:
    """Normalise the inputs and make model names unique ("sim", "sim#2", ...)."""
    normalised: list[ModelAnswers] = []
    seen: dict[str, int] = {}
    for position, item in enumerate(models):
        if isinstance(item, ModelAnswers):
            model = item
        elif isinstance(item, Evaluation):
            model = model_answers_from_evaluation(item, item.model or f"model{position + 1}")
        else:
            relations, conversations, answers = item
            model = collect_model_answers(f"model{position + 1}", relations, conversations, answers)
        seen[model.name] = seen.get(model.name, 0) + 1
        if seen[model.name] > 1:
            model = ModelAnswers(
                f"{model.name}#{seen[model.name]}",
                model.errors,
                model.atomic,
                model.relation_ids,
                model.templates,
            )
        normalised.append(model)
    return normalised


def select_relations(
    models: Sequence[ModelAnswers], templates: Sequence[str], *, exclude_invalid: bool = True
) -> list[str]:
    """Relations every model has (first model's order); with `exclude_invalid`, only those
    every model answered YES or NO under every template."""
    if not models:
        return []
    common = set(models[0].relation_ids).intersection(*(m.relation_ids for m in models[1:]))
    selected = []
    for relation_id in models[0].relation_ids:
        if relation_id not in common:
            continue
        if exclude_invalid and any(
            model.atomic.get((relation_id, template_id)) not in (Answer.YES, Answer.NO)
            for model in models
            for template_id in templates
        ):
            continue
        selected.append(relation_id)
    return selected


def common_templates(models: Sequence[ModelAnswers]) -> list[str]:
    """Templates every model was asked, in the first model's order."""
    if not models:
        return []
    return [t for t in models[0].templates if all(t in m.templates for m in models[1:])]


def compute_scores(models: Sequence[ModelAnswers], relation_ids: Sequence[str]) -> dict[str, int]:
    """Score_i = sum over the relations of (5 - x_r), each term at least 0."""
    return {
        model.name: sum(
            max(0, MAX_ERRORS_PER_RELATION - model.errors.get(rid, 0)) for rid in relation_ids
        )
        for model in models
    }


def compute_weights(
    models: Sequence[ModelAnswers], relation_ids: Sequence[str]
) -> dict[str, float]:
    """W_i = Score_i / sum_j Score_j (equal weights when every score is 0)."""
    scores = compute_scores(models, relation_ids)
    total = sum(scores.values())
    if total == 0:
        return {name: 1.0 / len(scores) for name in scores} if scores else {}
    return {name: score / total for name, score in scores.items()}


def _says_yes(model: ModelAnswers, relation_id: str, template_id: str) -> bool:
    return model.atomic.get((relation_id, template_id)) == Answer.YES


def _decide(
    models: Sequence[ModelAnswers],
    relation_ids: Sequence[str],
    templates: Sequence[str],
    scores: Mapping[str, int] | None,
) -> dict[str, dict[str, bool]]:
    """Weighted decision (integer scores, so "> 0.5" is exact) or, without scores, majority."""
    if scores is not None and sum(scores.values()) == 0:
        scores = None  # equal weights: the weighted rule becomes the majority rule
    decisions: dict[str, dict[str, bool]] = {}
    for template_id in templates:
        chosen: dict[str, bool] = {}
        for relation_id in relation_ids:
            if scores is None:
                votes = sum(_says_yes(m, relation_id, template_id) for m in models)
                chosen[relation_id] = 2 * votes > len(models)
            else:
                weight = sum(
                    scores[m.name] for m in models if _says_yes(m, relation_id, template_id)
                )
                chosen[relation_id] = 2 * weight > sum(scores.values())
        decisions[template_id] = chosen
    return decisions


def _model_gaps(
    models: Sequence[ModelAnswers], relation_ids: Sequence[str], templates: Sequence[str]
) -> dict[str, dict[str, int]]:
    return {
        model.name: {
            template_id: sum(not _says_yes(model, rid, template_id) for rid in relation_ids)
            for template_id in templates
        }
        for model in models
    }


def _ensemble(
    method: str,
    models: Sequence[ModelInput],
    templates: Sequence[str] | None,
    relation_ids: Sequence[str] | None,
    exclude_invalid: bool,
    weight_relations: Sequence[str] | None = None,
) -> EnsembleResult:
    normalised = as_model_answers(models)
    template_ids = list(templates) if templates is not None else common_templates(normalised)
    if relation_ids is None:
        relation_ids = select_relations(normalised, template_ids, exclude_invalid=exclude_invalid)
    relation_ids = list(relation_ids)
    if method == "weighted":
        basis = relation_ids if weight_relations is None else weight_relations
        scores: dict[str, int] | None = compute_scores(normalised, basis)
        weights = compute_weights(normalised, basis)
    else:
        scores = None
        weights = {m.name: 1.0 / len(normalised) for m in normalised} if normalised else {}
    decisions = _decide(normalised, relation_ids, template_ids, scores)
    model_gaps = _model_gaps(normalised, relation_ids, template_ids)
    count = len(normalised) or 1
    return EnsembleResult(
        method=method,
        relation_ids=relation_ids,
        templates=template_ids,
        weights=weights,
        decisions=decisions,
        gap={t: sum(not yes for yes in decisions[t].values()) for t in template_ids},
        model_gaps=model_gaps,
        mean_gap={t: sum(g[t] for g in model_gaps.values()) / count for t in template_ids},
    )


def weighted_ensemble(
    models: Sequence[ModelInput],
    *,
    templates: Sequence[str] | None = None,
    relation_ids: Sequence[str] | None = None,
    weight_relations: Sequence[str] | None = None,
    exclude_invalid: bool = True,
) -> EnsembleResult:
    """The KONTEST weighted ensemble. Weights come from `weight_relations` (default: the
    evaluated relations themselves); decisions and gaps are over `relation_ids`."""
    return _ensemble("weighted", models, templates, relation_ids, exclude_invalid, weight_relations)


def majority_vote(
    models: Sequence[ModelInput],
    *,
    templates: Sequence[str] | None = None,
    relation_ids: Sequence[str] | None = None,
    exclude_invalid: bool = True,
) -> EnsembleResult:
    """Simple majority: yes when more than half the models say yes."""
    return _ensemble("majority", models, templates, relation_ids, exclude_invalid)


def split_folds(relation_ids: Sequence[str], k: int, seed: int) -> list[list[str]]:
    """A seeded shuffle of the relations dealt into k folds (sizes differ by at most one)."""
    shuffled = list(relation_ids)
    random.Random(seed).shuffle(shuffled)
    return [shuffled[index::k] for index in range(k)]


def cross_validate(
    models: Sequence[ModelInput],
    *,
    k: int = 5,
    seed: int = 0,
    templates: Sequence[str] | None = None,
    exclude_invalid: bool = True,
    splits: int = 1,
) -> CrossValidation:
    """k-fold cross-validation over relations: weights from the training folds, gap on the
    held-out fold, summed over folds (each relation held out once). With `splits` > 1 the
    weighted gap is also counted under the splits of seeds `seed` to `seed + splits - 1`
    (`spread`)."""
    if k < 2:
        raise InvalidInputError(f"cross-validation needs k >= 2, got {k}")
    normalised = as_model_answers(models)
    if len(normalised) < 2:
        raise InvalidInputError("an ensemble needs at least two models (sessions)")
    template_ids = list(templates) if templates is not None else common_templates(normalised)
    relation_ids = select_relations(normalised, template_ids, exclude_invalid=exclude_invalid)
    if not relation_ids:
        raise InvalidInputError(
            "the sessions share no relation that every model answered yes or no under every "
            "template (different knowledge graphs or templates?)"
        )
    if splits < 1:
        raise InvalidInputError(f"the fold splits must be at least 1, got {splits}")
    fold_results = _weighted_folds(normalised, template_ids, relation_ids, k, seed)
    weighted = {t: sum(fold.gap[t] for fold in fold_results) for t in template_ids}
    spread = None
    if splits > 1:
        seeds = list(range(seed, seed + splits))
        gaps: dict[str, list[int]] = {t: [] for t in template_ids}
        for other in seeds:
            folds = _weighted_folds(normalised, template_ids, relation_ids, k, other)
            for template_id in template_ids:
                gaps[template_id].append(sum(fold.gap[template_id] for fold in folds))
        spread = SplitSpread(seeds, gaps)
    majority = majority_vote(normalised, templates=template_ids, relation_ids=relation_ids)
    return CrossValidation(
        k=k,
        seed=seed,
        models=[m.name for m in normalised],
        templates=template_ids,
        relations=len(relation_ids),
        folds=fold_results,
        weighted=weighted,
        majority=dict(majority.gap),
        mean_gap=dict(majority.mean_gap),
        model_gaps=majority.model_gaps,
        weights=compute_weights(normalised, relation_ids),
        spread=spread,
    )


def _weighted_folds(
    models: Sequence[ModelAnswers],
    template_ids: Sequence[str],
    relation_ids: Sequence[str],
    k: int,
    seed: int,
) -> list[FoldResult]:
    """The weighted ensemble on each fold of one seeded split, weights from the others."""
    folds = [fold for fold in split_folds(relation_ids, k, seed) if fold]
    results: list[FoldResult] = []
    for index, held_out in enumerate(folds):
        held = set(held_out)
        training = [rid for rid in relation_ids if rid not in held]
        result = weighted_ensemble(
            models,
            templates=template_ids,
            relation_ids=held_out,
            weight_relations=training,
        )
        results.append(FoldResult(index, list(held_out), result.weights, dict(result.gap)))
    return results


def cross_validate_sessions(
    store: Store, session_ids: Sequence[str], *, k: int = 5, seed: int = 0, splits: int = 1
) -> CrossValidation:
    """`cross_validate` over stored sessions (one model each, same KG), read from the store
    (`kontest ensemble`, the explorer's Ensemble tab)."""
    if len(session_ids) < 2:
        raise InvalidInputError("an ensemble needs at least two sessions")
    models = [stored_model_answers(store, sid) for sid in session_ids]
    return cross_validate(models, k=k, seed=seed, splits=splits)
