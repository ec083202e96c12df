"""oracles.findings: KONTEST's errors folded per relation, worked by hand on one path
a > b > c > d (six relations, Q1 Q2 alone, A = [t1, t2] and B = [t2, t1]).

Each script below is read as the metamorphic oracle reads it (KONTEST Table 1): atomic Q1 vs
Q2, intra A1 vs A2 and B1 vs B2, inter Q2 vs A2 and Q1 vs B2.
"""

from __future__ import annotations

from kontest_tui.domain.records import Verdict
from kontest_tui.oracles.evaluate import evaluate
from kontest_tui.oracles.findings import (
    AFTER_OWN_REPLY,
    AMBIGUOUS,
    GENERIC,
    NOT_COMPARED_ALONE,
    OPPOSITE_ALONE,
    REPEAT,
    fold_relation,
    is_generic,
    label_doubts,
    tally_findings,
)
from kontest_tui.oracles.streamed import StreamedEvaluation
from tests.oracles.oracle_toys import N, X, Y, build_conversations, build_relations, script_answers

RELATIONS = build_relations(["a", "b", "c", "d"])
CONVERSATIONS = build_conversations(RELATIONS)
AGREE = {"Q1": [Y], "Q2": [Y], "A": [Y, Y], "B": [Y, Y]}
SCRIPT = {
    # no and yes alone: one disagreement; A = [no, yes] and B = [yes, no] flip too (two intra
    # errors), the inter tests agree (Q2 yes = A2 yes, Q1 no = B2 no): 1 distinct, 2 repeats
    "a>b": {"Q1": [N], "Q2": [Y], "A": [N, Y], "B": [Y, N]},
    # yes to both alone; A = [yes, no]: intra A1 vs A2 and inter Q2 vs A2 fail, B agrees: a
    # flip only after its own reply, 2 errors on 1 relation
    "b>c": {"Q1": [Y], "Q2": [Y], "A": [Y, N], "B": [Y, Y]},
    # t1 alone unreadable: no atomic test; B = [no, yes] flips (intra), inter Q2 vs A2 holds
    # (no, no), Q1 vs B2 is not run (Q1 invalid): 1 error not compared alone
    "c>d": {"Q1": [X], "Q2": [N], "A": [N, N], "B": [N, Y]},
    # the ontological case: a > c denied alone; under t2 a > b and b > c are yes (one error),
    # under t1 a > b is no, so nothing implies a > c there
    "a>c": {"Q1": [N], "Q2": [N], "A": [N, N], "B": [N, N]},
    "a>d": AGREE,
    "b>d": AGREE,
}
ANSWERS = script_answers(CONVERSATIONS, SCRIPT)


def errors_of(verdicts: list[Verdict], relation: str) -> list[Verdict]:
    return [v for v in verdicts if v.relation_id == relation]


def test_one_disagreement_alone_and_its_repeats() -> None:
    verdicts = evaluate(RELATIONS, CONVERSATIONS, ANSWERS).verdicts
    fold = fold_relation(errors_of(verdicts, "a>b"))
    assert (fold.compared_alone, fold.opposite_alone, fold.errors) == (True, True, 3)
    places = [fold.place(v) for v in errors_of(verdicts, "a>b") if v.error]
    assert places == [OPPOSITE_ALONE, REPEAT, REPEAT]


def test_a_flip_only_after_its_own_reply_and_one_not_compared_alone() -> None:
    verdicts = evaluate(RELATIONS, CONVERSATIONS, ANSWERS).verdicts
    fold = fold_relation(errors_of(verdicts, "b>c"))
    assert (fold.opposite_alone, fold.agreed) == (False, Y)
    assert [fold.place(v) for v in errors_of(verdicts, "b>c") if v.error] == [
        AFTER_OWN_REPLY,
        AFTER_OWN_REPLY,
    ]
    unpaired = fold_relation(errors_of(verdicts, "c>d"))
    assert not unpaired.compared_alone
    assert [unpaired.place(v) for v in errors_of(verdicts, "c>d") if v.error] == [
        NOT_COMPARED_ALONE
    ]


def test_the_report_counts_each_finding_once() -> None:
    evaluation = evaluate(RELATIONS, CONVERSATIONS, ANSWERS)
    evaluation.label_doubts = {}
    findings = evaluation.to_json()["findings"]
    assert findings == {
        "relations_compared_alone": 5,  # all but c > d
        "relations_opposite_alone": 1,  # a > b
        "repeats": 2,  # a > b in one conversation, twice
        "after_own_reply": 2,  # b > c: intra and inter
        "relations_after_own_reply": 1,
        "not_compared_alone": 1,  # c > d
        "implied": 1,  # a > c under t2
        "relations_implied": 1,
        "implied_doubtful": {"ambiguous": 0, "generic": 0, "total": 0},
    }
    metamorphic = sum(
        evaluation.errors[o] for o in ("atomic", "sequential_intra", "sequential_inter")
    )
    folded = (
        findings["relations_opposite_alone"]
        + findings["repeats"]
        + findings["after_own_reply"]
        + findings["not_compared_alone"]
    )
    assert folded == metamorphic == 6
    assert evaluation.errors["ontological"] == findings["implied"]


def test_implied_facts_through_a_doubtful_middle_node() -> None:
    verdicts = evaluate(RELATIONS, CONVERSATIONS, ANSWERS).verdicts
    assert tally_findings(verdicts, None).to_json()["implied_doubtful"] is None  # labels unknown
    generic = tally_findings(verdicts, {"b": GENERIC}).to_json()["implied_doubtful"]
    assert generic == {"ambiguous": 0, "generic": 1, "total": 1}  # a > b > c, through b
    # a doubtful end of the relation is not a middle node: nothing flagged
    ends = tally_findings(verdicts, {"a": AMBIGUOUS, "c": AMBIGUOUS}).to_json()
    assert ends["implied_doubtful"] == {"ambiguous": 0, "generic": 0, "total": 0}


def test_doubtful_labels() -> None:
    labels = {
        "x1": "Garnich",
        "x2": "garnich ",  # the same name, another node
        "x3": "Central Region",
        "x4": "District",
        "x5": "North-East Region",
        "x6": "Canton of Capellen",
        "x7": "North Denmark Region",
        "x8": "Greatest Hits",
    }
    assert label_doubts(labels) == {
        "x1": AMBIGUOUS,
        "x2": AMBIGUOUS,
        "x3": GENERIC,
        "x4": GENERIC,
        "x5": GENERIC,
        "x8": GENERIC,
    }
    assert not is_generic("Canton of Capellen") and not is_generic("")


def test_streamed_findings_equal_the_whole_evaluation() -> None:
    """Chunks of two relations (each relation's conversations in one chunk, the ontological
    pass over all of them at the end) give the findings of one evaluation, doubts included."""
    doubts = {"b": GENERIC}
    whole = evaluate(RELATIONS, CONVERSATIONS, ANSWERS)
    whole.label_doubts = doubts
    totals = StreamedEvaluation()
    keys = {conversation.id: number for number, conversation in enumerate(CONVERSATIONS)}
    names = {number: cid for cid, number in keys.items()}
    for start in range(0, len(RELATIONS), 2):
        chunk = RELATIONS[start : start + 2]
        ids = {relation.id for relation in chunk}
        conversations = [c for c in CONVERSATIONS if c.relation_id in ids]
        totals.add_chunk(chunk, conversations, ANSWERS, keys)
    totals.findings.doubts = doubts
    for template_id in list(totals.templates):
        totals.ontological_verdicts(
            template_id, RELATIONS, lambda wanted: {key: names[key] for key in wanted}
        )
    assert totals.evaluation().to_json()["findings"] == whole.to_json()["findings"]
