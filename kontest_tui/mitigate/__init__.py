"""Knowledge-gap mitigation: weighted ensemble, majority vote, k-fold cross-validation.

The names below are imported on first use (the ensemble evaluates sessions with every
oracle): a module of this package, such as the ensemble's JSON shape, imports alone.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name == "ModelAnswers":
        from kontest_tui.results.answers import ModelAnswers

        return ModelAnswers
    if name in __all__:
        from kontest_tui.mitigate import ensemble

        return getattr(ensemble, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
