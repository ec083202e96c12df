"""Property tests: partial answers never change a counted verdict; counts stay consistent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kontest_tui.oracles.evaluate import evaluate
from tests.oracles.oracle_toys import N, X, Y, build_conversations, build_relations

PATHS = [
    ["r", "a", "a1", "a1x"],
    ["r", "a", "a1", "a1y"],
    ["r", "a", "a2"],
    ["r", "b", "b1", "b1x"],
]


def relations_for(per_path: bool):
    if per_path:
        return [rel for n, path in enumerate(PATHS) for rel in build_relations(path, f"p{n}:")]
    seen, relations = set(), []
    for path in PATHS:
        for relation in build_relations(path):
            if relation.id not in seen:
                seen.add(relation.id)
                relations.append(relation)
    return relations


@settings(max_examples=60, deadline=None)
@given(
    per_path=st.booleans(),
    seed_answers=st.lists(st.sampled_from([Y, Y, N, X]), min_size=400, max_size=400),
    keep=st.lists(st.booleans(), min_size=400, max_size=400),
)
def test_partial_verdicts_are_final_and_counts_consistent(per_path, seed_answers, keep) -> None:
    relations = relations_for(per_path)
    conversations = build_conversations(relations)
    keys = [(c.id, t) for c in conversations for t in range(len(c.turns))]
    full = dict(zip(keys, seed_answers, strict=False))
    partial = {key: value for (key, value), kept in zip(full.items(), keep, strict=False) if kept}

    whole = evaluate(relations, conversations, full)
    part = evaluate(relations, conversations, partial)
    # Every verdict counted on the partial answers is counted identically on all answers.
    assert set(part.verdicts) <= set(whole.verdicts)
    for evaluation, answers in ((whole, full), (part, partial)):
        gap = evaluation.gap
        assert gap.covered + gap.intersection + gap.pending == len(relations)
        assert all(evaluation.errors[k] <= evaluation.tests[k] for k in evaluation.tests)
        assert all(evaluation.tests[k] <= evaluation.planned_tests[k] for k in evaluation.tests)
        assert evaluation.executions == len(answers)
        assert evaluation.valid == sum(a in (Y, N) for a in answers.values())
    assert whole.gap.pending == 0
    assert whole.gap.covered == len(relations) - whole.gap.intersection
