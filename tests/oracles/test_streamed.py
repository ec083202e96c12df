"""oracles.streamed: a session evaluated chunk by chunk gives the verdicts and report of one
evaluation, the ontological oracle included when its edges lie in other chunks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Query, Relation, Verdict
from kontest_tui.oracles.evaluate import evaluate
from kontest_tui.oracles.ontological import find_ontological_verdicts
from kontest_tui.oracles.streamed import StreamedEvaluation

TEMPLATES = ("t1", "t2")


def relation(parent: str, child: str, *between: str) -> Relation:
    return Relation(f"{parent}>{child}", parent, child, "contains", (parent, *between, child))


def conversations_of(rel: Relation) -> list[Conversation]:
    queries = [Query(rel.id, t, f"{t}: does {rel.parent} contain {rel.child}?") for t in TEMPLATES]
    found = [
        Conversation(f"{rel.id}/{q.template_id}", rel.id, "atomic", f"Q{i + 1}", (q,))
        for i, q in enumerate(queries)
    ]
    found.append(Conversation(f"{rel.id}/t1+t2", rel.id, "sequential", "A", tuple(queries)))
    return found


def streamed(
    chunks: Sequence[Sequence[Relation]], answers: Mapping[AnswerKey, Answer]
) -> tuple[list[Verdict], Mapping[str, object]]:
    """Verdicts (metamorphic per chunk, then ontological per template) and report JSON."""
    totals = StreamedEvaluation(session="s", model="m")
    keys: dict[str, int] = {}
    names: dict[int, str] = {}
    verdicts: list[Verdict] = []
    for chunk in chunks:
        conversations = [c for rel in chunk for c in conversations_of(rel)]
        for conversation in conversations:
            keys[conversation.id] = len(keys) + 1
            names[keys[conversation.id]] = conversation.id
        verdicts += totals.add_chunk(chunk, conversations, answers, keys)
    for template_id in list(totals.templates):
        for chunk in chunks:
            verdicts += totals.ontological_verdicts(
                template_id, chunk, lambda wanted: {key: names[key] for key in wanted}
            )
    return verdicts, totals.evaluation().to_json()


def whole(
    relations: Sequence[Relation], answers: Mapping[AnswerKey, Answer]
) -> tuple[list[Verdict], Mapping[str, object]]:
    conversations = [c for rel in relations for c in conversations_of(rel)]
    evaluation = evaluate(relations, conversations, answers, session="s", model="m")
    return evaluation.verdicts, evaluation.to_json()


def atomic(rel: Relation, template: str) -> AnswerKey:
    return (f"{rel.id}/{template}", 0)


def test_an_ontological_error_whose_yes_path_lies_in_other_chunks() -> None:
    # A contains C is asked in chunk 1 and answered no; A -> B (chunk 2) and B -> C (chunk 3)
    # are answered yes: the yes-path A -> B -> C implies A -> C (KONTEST Algorithm 2).
    ac, ab, bc = relation("A", "C", "B"), relation("A", "B"), relation("B", "C")
    answers: dict[AnswerKey, Answer] = {}
    for rel, answer in ((ac, Answer.NO), (ab, Answer.YES), (bc, Answer.YES)):
        for template in TEMPLATES:
            answers[atomic(rel, template)] = answer
        answers[(f"{rel.id}/t1+t2", 0)] = answer
        answers[(f"{rel.id}/t1+t2", 1)] = Answer.YES
    verdicts, report = streamed([[ac], [ab], [bc]], answers)
    ontological = [v for v in verdicts if v.oracle == "ontological"]
    assert [(v.template_id, v.error) for v in ontological] == [("t1", True), ("t2", True)]
    assert ontological[0].refs == (("A>C/t1", 0), ("A>B/t1", 0), ("B>C/t1", 0))
    assert ontological[0].detail.endswith("implied by yes-path A -> B -> C")
    assert ontological == find_ontological_verdicts(
        [ac, ab, bc], [c for rel in (ac, ab, bc) for c in conversations_of(rel)], answers
    )
    assert (verdicts, report) == whole([ac, ab, bc], answers)


def test_a_test_waits_for_an_answer_in_a_later_chunk_and_yes_is_no_error() -> None:
    ac, ab, bc = relation("A", "C", "B"), relation("A", "B"), relation("B", "C")
    answers = {
        atomic(ac, "t1"): Answer.NO,
        atomic(ab, "t1"): Answer.YES,
        atomic(ac, "t2"): Answer.YES,
        atomic(ab, "t2"): Answer.YES,
        atomic(bc, "t2"): Answer.NO,
    }
    verdicts, report = streamed([[ac, ab], [bc]], answers)
    # t1: B -> C has no answer yet, so A -> C is not tested; t2: yes to A -> C, no error.
    assert [(v.oracle, v.template_id, v.error) for v in verdicts if v.oracle == "ontological"] == [
        ("ontological", "t2", False)
    ]
    assert (verdicts, report) == whole([ac, ab, bc], answers)


def test_chunks_of_any_size_give_one_evaluation() -> None:
    nodes = ["R", "A", "B", "C", "D", "E"]
    tree = {"A": "R", "B": "A", "C": "B", "D": "A", "E": "D"}

    def ancestors(node: str) -> list[str]:
        found = []
        while node in tree:
            node = tree[node]
            found.append(node)
        return found

    relations = []
    for node in nodes:
        above = ancestors(node)
        for depth, parent in enumerate(above):
            relations.append(relation(parent, node, *reversed(above[:depth])))
    answers: dict[AnswerKey, Answer] = {}
    cycle = (Answer.YES, Answer.YES, Answer.NO, Answer.INVALID, Answer.YES)
    count = 0
    for rel in relations:
        for conversation in conversations_of(rel):
            for turn in range(len(conversation.turns)):
                count += 1
                if count % 11 == 7:  # a few answers missing
                    continue
                direct = len(rel.path) == 2 and conversation.kind == "atomic"
                answers[(conversation.id, turn)] = Answer.YES if direct else cycle[count % 5]
    expected = whole(relations, answers)
    assert any(v.error and v.oracle == "ontological" for v in expected[0])
    for size in (1, 2, 3, len(relations)):
        chunks = [relations[i : i + size] for i in range(0, len(relations), size)]
        assert streamed(chunks, answers) == expected, size
