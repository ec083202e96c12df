"""Knowledge-gap mitigation: weighted ensemble, majority vote, k-fold cross-validation."""

from kontest_tui.mitigate.ensemble import (
    CrossValidation,
    EnsembleResult,
    cross_validate,
    cross_validate_sessions,
    majority_vote,
    weighted_ensemble,
)
from kontest_tui.results.answers import ModelAnswers

__all__ = [
    "CrossValidation",
    "EnsembleResult",
    "ModelAnswers",
    "cross_validate",
    "cross_validate_sessions",
    "majority_vote",
    "weighted_ensemble",
]
