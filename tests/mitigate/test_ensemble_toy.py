"""Weighted ensemble, majority vote and cross-validation on a 3-model toy computed by hand.

Relations r1..r4, templates t1, t2. Metamorphic errors x_r per model and Score = sum(5 - x_r):
    M1: 0, 0, 1, 0 -> 5+5+4+5 = 19      M2: 2, 3, 0, 5 -> 3+2+5+0 = 10
    M3: 5, 5, 5, 4 -> 0+0+0+1 = 1       total 30 -> W = 19/30, 10/30, 1/30
Atomic answers (M1, M2, M3) and decisions (weighted: yes-weight > 15/30; majority: >= 2 of 3):
    t1 r1: y n y -> 20/30 yes | 2 yes      t2 r1..r3: y y y -> yes | yes
    t1 r2: n y y -> 11/30 no  | 2 yes      t2 r4: y n n -> 19/30 yes | 1 no
    t1 r3: y n n -> 19/30 yes | 1 no
    t1 r4: n n n -> 0 no      | 0 no
Gaps: weighted t1 {r2, r4} = 2, t2 {} = 0 -> 2; majority t1 {r3, r4} = 2, t2 {r4} = 1 -> 3.
Models t1: M1 {r2, r4} 2, M2 {r1, r3, r4} 3, M3 {r3, r4} 2 -> mean 7/3;
       t2: M1 0, M2 {r4} 1, M3 {r4} 1 -> mean 2/3; all: mean 3.
Improvement: weighted (3 - 2) / 3 = 33.33 %, majority (3 - 3) / 3 = 0 %.
"""

from __future__ import annotations

import pytest

from kontest_tui.domain.records import Answer
from kontest_tui.errors import InvalidInputError
from kontest_tui.mitigate.ensemble import (
    compute_weights,
    cross_validate,
    majority_vote,
    split_folds,
    weighted_ensemble,
)
from kontest_tui.results.answers import ModelAnswers

Y, N, X = Answer.YES, Answer.NO, Answer.INVALID
IDS = ("r1", "r2", "r3", "r4")


def model(
    name: str, errors: list[int], t1: list[Answer], t2: list[Answer], ids=IDS
) -> ModelAnswers:
    atomic = {}
    for rid, a1, a2 in zip(ids, t1, t2, strict=True):
        atomic[(rid, "t1")] = a1
        atomic[(rid, "t2")] = a2
    return ModelAnswers(name, dict(zip(ids, errors, strict=True)), atomic, tuple(ids), ("t1", "t2"))


M1 = model("M1", [0, 0, 1, 0], [Y, N, Y, N], [Y, Y, Y, Y])
M2 = model("M2", [2, 3, 0, 5], [N, Y, N, N], [Y, Y, Y, N])
M3 = model("M3", [5, 5, 5, 4], [Y, Y, N, N], [Y, Y, Y, N])
MODELS = [M1, M2, M3]


def test_weights_from_metamorphic_errors() -> None:
    weights = compute_weights(MODELS, IDS)
    assert weights == pytest.approx({"M1": 19 / 30, "M2": 10 / 30, "M3": 1 / 30})


def test_weighted_decisions_and_gap() -> None:
    result = weighted_ensemble(MODELS)
    assert result.relation_ids == list(IDS)
    assert result.decisions["t1"] == {"r1": True, "r2": False, "r3": True, "r4": False}
    assert result.decisions["t2"] == {"r1": True, "r2": True, "r3": True, "r4": True}
    assert result.gap == {"t1": 2, "t2": 0}
    assert result.model_gaps == {
        "M1": {"t1": 2, "t2": 0},
        "M2": {"t1": 3, "t2": 1},
        "M3": {"t1": 2, "t2": 1},
    }
    assert result.mean_gap == pytest.approx({"t1": 7 / 3, "t2": 2 / 3})
    assert result.improvement_pct == pytest.approx(100 / 3)


def test_majority_vote() -> None:
    result = majority_vote(MODELS)
    assert result.decisions["t1"] == {"r1": True, "r2": True, "r3": False, "r4": False}
    assert result.gap == {"t1": 2, "t2": 1}
    assert result.improvement_pct == pytest.approx(0.0)


def test_tie_is_no_and_invalid_relations_are_dropped() -> None:
    """Two models with equal scores (5 each on r1): one yes = weight exactly 0.5 -> not > 0.5.
    r2 has an invalid answer from B -> dropped from every count (paper's rule)."""
    a = model("A", [0, 0], [Y, Y], [Y, Y], ids=("r1", "r2"))
    b = model("B", [0, 0], [N, X], [N, Y], ids=("r1", "r2"))
    result = weighted_ensemble([a, b])
    assert result.relation_ids == ["r1"]
    assert result.decisions == {"t1": {"r1": False}, "t2": {"r1": False}}
    kept = weighted_ensemble([a, b], exclude_invalid=False)
    assert kept.relation_ids == ["r1", "r2"]


def test_cross_validation_weights_come_from_training_folds() -> None:
    """k=2: each fold's weights use only the other fold's relations. Per-relation scores
    (5 - x_r) by hand: M1 5,5,4,5; M2 3,2,5,0; M3 0,0,0,1."""
    per_relation = {"M1": [5, 5, 4, 5], "M2": [3, 2, 5, 0], "M3": [0, 0, 0, 1]}
    cv = cross_validate(MODELS, k=2, seed=3)
    assert cv.relations == 4 and len(cv.folds) == 2
    held = [rid for fold in cv.folds for rid in fold.relation_ids]
    assert sorted(held) == list(IDS)
    for fold in cv.folds:
        training = [i for i, rid in enumerate(IDS) if rid not in fold.relation_ids]
        scores = {name: sum(values[i] for i in training) for name, values in per_relation.items()}
        total = sum(scores.values())
        assert fold.weights == pytest.approx({n: s / total for n, s in scores.items()})
    assert cv.majority == {"t1": 2, "t2": 1}
    assert cv.mean_gap == pytest.approx({"t1": 7 / 3, "t2": 2 / 3})
    assert sum(cv.weighted.values()) == sum(sum(f.gap.values()) for f in cv.folds)


def test_cross_validation_is_deterministic() -> None:
    first = cross_validate(MODELS, k=2, seed=11).to_json()
    again = cross_validate(MODELS, k=2, seed=11).to_json()
    assert first == again
    assert split_folds(IDS, 2, 11) == split_folds(IDS, 2, 11)
    assert split_folds(list("abcdefghij"), 5, 1) != split_folds(list("abcdefghij"), 5, 2)
    assert [len(f) for f in split_folds(list("abcdefghijk"), 5, 0)] == [3, 2, 2, 2, 2]


def test_cross_validation_rejects_bad_input() -> None:
    with pytest.raises(InvalidInputError):
        cross_validate(MODELS, k=1)
    with pytest.raises(InvalidInputError):
        cross_validate([M1], k=5)
    other = model("O", [0, 0, 0, 0], [Y] * 4, [Y] * 4, ids=("s1", "s2", "s3", "s4"))
    with pytest.raises(InvalidInputError, match="share no relation"):
        cross_validate([M1, other], k=2)


def test_duplicate_model_names_are_made_unique() -> None:
    result = weighted_ensemble([M1, M1, M2])
    assert list(result.weights) == ["M1", "M1#2", "M2"]


def test_models_given_as_sessions() -> None:
    """Two sessions on one relation a>b given as (relations, conversations, answers).
    Model A says yes everywhere: 0 metamorphic errors, score 5.
    Model B: Q1 yes, Q2 no, A yes/no, B no/yes -> atomic error, both intra errors,
    inter Q2(no)=A2(no) ok, Q1(yes)=B2(yes) ok -> x = 3, score 2. Weights 5/7, 2/7.
    t1: A yes, B yes -> yes; t2: A yes (5/7 > 1/2) -> yes, so the ensemble gap is 0."""
    from kontest_tui.domain.records import Conversation, Query, Relation

    relation = Relation("a>b", "a", "b", "contains", ("a", "b"))
    q1, q2 = Query("a>b", "t1", "a has b?"), Query("a>b", "t2", "b in a?")
    conversations = [
        Conversation("1", "a>b", "atomic", "Q1", (q1,)),
        Conversation("2", "a>b", "atomic", "Q2", (q2,)),
        Conversation("3", "a>b", "sequential", "A", (q1, q2)),
        Conversation("4", "a>b", "sequential", "B", (q2, q1)),
    ]
    all_yes = {(c.id, t): Y for c in conversations for t in range(len(c.turns))}
    mixed = {("1", 0): Y, ("2", 0): N, ("3", 0): Y, ("3", 1): N, ("4", 0): N, ("4", 1): Y}
    result = weighted_ensemble(
        [([relation], conversations, all_yes), ([relation], conversations, mixed)]
    )
    assert result.weights == pytest.approx({"model1": 5 / 7, "model2": 2 / 7})
    assert result.gap == {"t1": 0, "t2": 0}
    assert result.model_gaps == {"model1": {"t1": 0, "t2": 0}, "model2": {"t1": 0, "t2": 1}}
