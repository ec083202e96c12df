"""The ensemble's JSON (`kontest ensemble --format json`) as typed records.

`EnsembleJSON` is one ensemble (`EnsembleResult.to_json`: weighted or majority, no
cross-validation); `CrossValidationJSON` the paper's Table 5 (`CrossValidation.to_json`: the
weighted ensemble cross-validated over relations against majority vote and the models' mean
gap). report.render draws both.
"""

# Not `from __future__ import annotations`: TypedDict reads its keys from the evaluated
# annotations.

from typing import NotRequired, TypedDict


class GapCell(TypedDict):
    """Relations a template missed and their share in percent."""

    missing: int
    pct: float


class MeanGapCell(TypedDict):
    """The models' mean gap of a template (a fraction of relations when they differ)."""

    missing: float
    pct: float


class EnsembleTemplateJSON(TypedDict):
    ensemble: GapCell
    models_mean: MeanGapCell


class EnsembleTotalJSON(TypedDict):
    ensemble: int
    models_mean: float
    improvement_pct: float


class EnsembleJSON(TypedDict):
    """One ensemble over the models' answers (no cross-validation)."""

    method: str
    models: list[str]
    relations: int
    templates: list[str]
    weights: dict[str, float]
    per_template: dict[str, EnsembleTemplateJSON]
    all: EnsembleTotalJSON
    model_gaps: dict[str, dict[str, int]]


class CrossValidatedTemplateJSON(TypedDict):
    weighted: GapCell
    majority: GapCell
    models_mean: MeanGapCell


class CrossValidatedTotalJSON(TypedDict):
    weighted: int
    majority: int
    models_mean: float
    weighted_improvement_pct: float
    majority_improvement_pct: float


class FoldJSON(TypedDict):
    """One fold: its relations, the weights learnt on the other folds, its gap."""

    index: int
    relations: int
    weights: dict[str, float]
    gap: dict[str, int]


class SpreadJSON(TypedDict):
    """The weighted ensemble's gap under several fold splits (seeds): per template and summed
    over templates, one entry per seed, in `seeds` order."""

    seeds: list[int]
    weighted: dict[str, list[int]]
    all: list[int]


class CrossValidationJSON(TypedDict):
    """The weighted ensemble cross-validated over relations (KONTEST Table 5)."""

    models: list[str]
    k: int
    seed: int
    relations: int
    templates: list[str]
    weights: dict[str, float]
    per_template: dict[str, CrossValidatedTemplateJSON]
    all: CrossValidatedTotalJSON
    model_gaps: dict[str, dict[str, int]]
    folds: list[FoldJSON]
    spread: NotRequired[SpreadJSON]
