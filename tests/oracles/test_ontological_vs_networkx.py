"""The ontological checker agrees with networkx on the SUT graph it builds (random answers).

For every counted test (own answer valid): error <=> the answer is no and networkx finds a
path parent -> child of >= 2 edges in build_sut_graph's yes-edges (the direct edge removed).
"""

from __future__ import annotations

import random

import networkx as nx

from kontest_tui.oracles.ontological import build_sut_graph, find_ontological_verdicts
from tests.oracles.oracle_toys import N, X, Y, build_conversations, build_relations, script_answers


def tree_relations():
    paths = [
        ["r", "a", "a1", "a1x"],
        ["r", "a", "a1", "a1y"],
        ["r", "a", "a2", "a2x"],
        ["r", "b", "b1", "b1x"],
    ]
    seen, relations = set(), []
    for path in paths:
        for relation in build_relations(path):
            if relation.id not in seen:
                seen.add(relation.id)
                relations.append(relation)
    return relations


def test_checker_matches_networkx_paths() -> None:
    relations = tree_relations()
    conversations = build_conversations(relations)
    checked_errors = 0
    for seed in range(40):
        rng = random.Random(seed)
        script = {
            r.id: {"Q1": [rng.choice([Y, Y, N, X])], "Q2": [rng.choice([Y, N, N])]}
            for r in relations
        }
        answers = script_answers(conversations, script)
        verdicts = find_ontological_verdicts(relations, conversations, answers)
        by_key = {(v.relation_id, v.template_id): v for v in verdicts}
        for template_id, label in (("t1", "Q1"), ("t2", "Q2")):
            graph = build_sut_graph(relations, conversations, answers, template_id)
            for relation in relations:
                own = script[relation.id][label][0]
                verdict = by_key.get((relation.id, template_id))
                if not relation.between or own is X:
                    assert verdict is None
                    continue
                assert verdict is not None
                view = nx.restricted_view(graph, [], [(relation.parent, relation.child)])
                expected = own is N and nx.has_path(view, relation.parent, relation.child)
                assert verdict.error == expected, (seed, template_id, relation.id)
                checked_errors += verdict.error
    assert checked_errors > 20  # the random answers did exercise the error branch
