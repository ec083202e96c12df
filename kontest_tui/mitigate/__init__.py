"""Knowledge-gap mitigation: weighted ensemble, majority vote, k-fold cross-validation."""

from kontest_tui.mitigate.ensemble import (
    CrossValidation,
    EnsembleResult,
    ModelAnswers,
    cross_validate,
    majority_vote,
    weighted_ensemble,
)

__all__ = [
    "CrossValidation",
    "EnsembleResult",
    "ModelAnswers",
    "cross_validate",
    "majority_vote",
    "weighted_ensemble",
]
