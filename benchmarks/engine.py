"""Engine benchmark: conversations for 10,000 relations, then every oracle and metric over
their 60,000 answers (targets: < 0.5 s and < 1 s).

A synthetic places KG (countries -> regions -> districts -> places) gives 10,000 deduplicated
relations; answers come from a seeded RNG (mostly yes, some no, a few invalid, per-template
bias), so every oracle has work to do. Run: .venv/bin/python benchmarks/engine.py
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kontest_tui.domain.records import Answer, AnswerKey  # noqa: E402
from kontest_tui.generate.conversations import build_conversations  # noqa: E402
from kontest_tui.generate.relations import extract_relations  # noqa: E402
from kontest_tui.generate.templates import load_template_set  # noqa: E402
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node  # noqa: E402
from kontest_tui.mitigate.ensemble import cross_validate, model_answers_from_evaluation  # noqa: E402
from kontest_tui.oracles.evaluate import evaluate  # noqa: E402
from kontest_tui.report.render import render_report  # noqa: E402

TARGET_RELATIONS = 10_000


def synthesize_kg() -> KnowledgeGraph:
    """Per country: 5 regions x 6 districts x 10 places -> 5 + 60 + 900 = 965 relations;
    10 countries = 9,650, plus one smaller country topping up to exactly 10,000."""
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []

    def add(node_id: str, kind: str, parent: str | None) -> None:
        nodes[node_id] = Node(node_id, f"Place {node_id}", (), kind)
        if parent is not None:
            edges.append(Edge(parent, node_id))

    for country in range(10):
        c = f"C{country}"
        add(c, "country", None)
        for region in range(5):
            r = f"{c}R{region}"
            add(r, "region", c)
            for district in range(6):
                d = f"{r}D{district}"
                add(d, "district", r)
                for place in range(10):
                    add(f"{d}P{place}", "place", d)
    # 350 more: region XR (1) + 7 districts (2 each: 14) + 111 places (3 each: 333) = 348,
    # plus two regions without districts (1 each).
    add("X", "country", None)
    add("XS", "region", "X")
    add("XT", "region", "X")
    add("XR", "region", "X")
    for district in range(7):
        d = f"XRD{district}"
        add(d, "district", "XR")
        for place in range(16 if district < 6 else 15):
            add(f"{d}P{place}", "place", d)
    return KnowledgeGraph("synthetic", "places", nodes, edges, source="benchmarks/engine.py")


def synthesize_answers(conversations, seed: int = 7) -> dict[AnswerKey, Answer]:
    rng = random.Random(seed)
    answers: dict[AnswerKey, Answer] = {}
    for conversation in conversations:
        for turn, query in enumerate(conversation.turns):
            roll = rng.random()
            yes_share = 0.85 if query.template_id == "t1" else 0.7
            if roll < 0.03:
                answers[(conversation.id, turn)] = Answer.INVALID
            elif roll < 0.03 + yes_share:
                answers[(conversation.id, turn)] = Answer.YES
            else:
                answers[(conversation.id, turn)] = Answer.NO
    return answers


def best_of(runs: int, action):
    """Best wall time of `runs` runs, and the CPU time of that run (the machine is shared:
    CPU time shows the cost without other processes' load)."""
    best, cpu, result = float("inf"), float("inf"), None
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = action()
        wall = time.perf_counter() - start
        if wall < best:
            best, cpu = wall, time.process_time() - start_cpu
    return best, cpu, result


def main() -> None:
    kg = synthesize_kg()
    templates = load_template_set("places")
    relations = extract_relations(kg, template_set=templates)
    assert len(relations) == TARGET_RELATIONS, len(relations)
    build_time, build_cpu, conversations = best_of(
        3, lambda: build_conversations(kg, relations, templates, ["t1", "t2"])
    )
    answers = synthesize_answers(conversations)
    eval_time, eval_cpu, evaluation = best_of(
        3, lambda: evaluate(relations, conversations, answers)
    )
    report = evaluation.to_json()
    render_time, _, _ = best_of(3, lambda: render_report(evaluation, "text"))
    # Ensemble over three seeded "models" on the same relations (5-fold cross-validation).
    models = [evaluation] + [
        evaluate(
            relations, conversations, synthesize_answers(conversations, seed), model=f"m{seed}"
        )
        for seed in (8, 9)
    ]
    inputs = [model_answers_from_evaluation(e, f"model{i}") for i, e in enumerate(models)]
    ensemble_time, _, cv = best_of(1, lambda: cross_validate(inputs, k=5, seed=0))
    print(
        f"relations: {len(relations)}  conversations: {len(conversations)}  answers: {len(answers)}"
    )
    print(
        f"build conversations: {build_time:.3f} s wall, {build_cpu:.3f} s CPU  (target < 0.5 s)  "
        f"{len(conversations) / build_time:,.0f} conversations/s"
    )
    print(
        f"all oracles + metrics: {eval_time:.3f} s wall, {eval_cpu:.3f} s CPU  (target < 1 s)  "
        f"{len(answers) / eval_time:,.0f} answers/s, {len(evaluation.verdicts)} verdicts"
    )
    print(
        f"tests {report['tests']}  errors total {report['errors']['total']}  "
        f"error rate {report['error_rate']:.4f}"
    )
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"text report render: {render_time * 1000:.1f} ms")
    print(f"5-fold ensemble over 3 models ({cv.relations} relations): {ensemble_time:.3f} s")


if __name__ == "__main__":
    main()
