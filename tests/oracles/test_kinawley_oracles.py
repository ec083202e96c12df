"""The paper's running example Ireland -> Ulster -> Kinawley with scripted answers.

Relations (Algorithm 1): I>U and U>K (direct edges) and I>K (Ulster in between).
Templates t1, t2; per relation Q1=[t1], Q2=[t2], A=[t1,t2], B=[t2,t1] = 6 answers, 18 in all.

Scripted answers and the tests they give (worked out by hand):

I>U: Q1 yes, Q2 yes, A yes/yes, B yes/yes
    atomic Q1=Q2 ok; intra A1=A2 ok, B1=B2 ok; inter Q2=A2 ok, Q1=B2 ok -> 5 tests, 0 errors
U>K: Q1 yes, Q2 no, A yes/yes, B no/no  (t2 alone says no, t2 after t1 says yes: context)
    atomic yes!=no ERROR; intra A ok, B ok; inter Q2(no)!=A2(yes) ERROR, Q1(yes)!=B2(no) ERROR
    -> 5 tests, 3 errors
I>K: Q1 no, Q2 invalid, A no/yes, B invalid/no
    atomic: Q2 invalid -> not run; intra A no!=yes ERROR; intra B: B1 invalid -> not run;
    inter Q2 vs A2: Q2 invalid -> not run; Q1(no) = B2(no) ok -> 2 tests, 1 error

Metamorphic: atomic 2 tests / 1 error; sequential_intra 5 / 1; sequential_inter 5 / 2.
Ontological (only I>K has a node in between): under t1 I>K is no while I>U and U>K are yes:
    path Ireland -> Ulster -> Kinawley -> 1 test, 1 error. Under t2 the own answer of I>K is
    invalid -> no test. Total 13 tests, 5 errors.
Gap: t1 not-yes = {I>K} -> 1 (33.33%); t2 not-yes = {U>K (no), I>K (invalid)} -> 2 (66.67%);
    intersection {I>K} -> 1 (33.33%); coverage 2 (66.67%).
Executions 18, invalid 2 (I>K Q2 and B1), valid 16, queries 6 (3 relations x 2 templates).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kontest_tui.domain.records import Answer
from kontest_tui.oracles.coverage import compute_gap
from kontest_tui.oracles.evaluate import evaluate
from kontest_tui.oracles.metamorphic import find_metamorphic_verdicts
from kontest_tui.oracles.ontological import build_sut_graph, find_ontological_verdicts
from tests.oracles.oracle_toys import (
    N,
    X,
    Y,
    build_conversations,
    build_relations,
    conversation_id,
    script_answers,
)

RELATIONS = build_relations(["Ireland", "Ulster", "Kinawley"])
IU, IK, UK = "Ireland>Ulster", "Ireland>Kinawley", "Ulster>Kinawley"
SCRIPT = {
    IU: {"Q1": [Y], "Q2": [Y], "A": [Y, Y], "B": [Y, Y]},
    UK: {"Q1": [Y], "Q2": [N], "A": [Y, Y], "B": [N, N]},
    IK: {"Q1": [N], "Q2": [X], "A": [N, Y], "B": [X, N]},
}


def setup_records():
    conversations = build_conversations(RELATIONS)
    return conversations, script_answers(conversations, SCRIPT)


def count(verdicts, oracle):
    chosen = [v for v in verdicts if v.oracle == oracle]
    return len(chosen), sum(v.error for v in chosen)


def test_kinawley_has_three_relations_and_eighteen_calls() -> None:
    conversations, answers = setup_records()
    assert [r.id for r in RELATIONS] == [IU, IK, UK]
    assert sum(len(c.turns) for c in conversations) == 18
    assert len(answers) == 18


def test_kinawley_metamorphic_counts() -> None:
    conversations, answers = setup_records()
    verdicts = find_metamorphic_verdicts(conversations, answers)
    assert count(verdicts, "atomic") == (2, 1)
    assert count(verdicts, "sequential_intra") == (5, 1)
    assert count(verdicts, "sequential_inter") == (5, 2)


def test_kinawley_verdicts_name_the_compared_answers() -> None:
    conversations, answers = setup_records()
    verdicts = find_metamorphic_verdicts(conversations, answers)
    q2 = conversation_id(conversations, UK, "Q2")
    a = conversation_id(conversations, UK, "A")
    inter = [v for v in verdicts if v.relation_id == UK and v.oracle == "sequential_inter"]
    # Q2 vs A2 first (t2 alone vs t2 after t1), then Q1 vs B2.
    assert inter[0].refs == ((q2, 0), (a, 1))
    assert inter[0].answers == (N, Y)
    assert inter[0].error is True
    assert inter[0].template_id == "t2"
    # The detail names the answers by template and place, never by the paper's codes.
    assert inter[0].detail == "t2 alone said no, t2 after t1 said yes"


def test_kinawley_one_ontological_error_with_path() -> None:
    conversations, answers = setup_records()
    verdicts = find_ontological_verdicts(RELATIONS, conversations, answers)
    assert len(verdicts) == 1
    (verdict,) = verdicts
    assert verdict.error and verdict.relation_id == IK and verdict.template_id == "t1"
    own = conversation_id(conversations, IK, "Q1")
    edges = {conversation_id(conversations, IU, "Q1"), conversation_id(conversations, UK, "Q1")}
    assert verdict.refs[0] == (own, 0)
    assert {ref[0] for ref in verdict.refs[1:]} == edges
    assert verdict.answers == (N, Y, Y)
    assert "Ireland -> Kinawley" in verdict.detail
    assert "Ireland -> Ulster -> Kinawley" in verdict.detail


def test_kinawley_sut_graph_per_template() -> None:
    conversations, answers = setup_records()
    t1 = build_sut_graph(RELATIONS, conversations, answers, "t1")
    assert set(t1.edges) == {("Ireland", "Ulster"), ("Ulster", "Kinawley")}
    assert t1.edges["Ireland", "Ulster"]["relation_ids"] == [IU]
    assert t1.graph["answers"][IK] == N
    t2 = build_sut_graph(RELATIONS, conversations, answers, "t2")
    assert set(t2.edges) == {("Ireland", "Ulster")}
    assert set(t2.nodes) == {"Ireland", "Ulster", "Kinawley"}


def test_kinawley_gap() -> None:
    conversations, answers = setup_records()
    gap = compute_gap(RELATIONS, conversations, answers)
    assert gap.templates == ["t1", "t2"]
    assert (gap.per_template["t1"].missing, gap.per_template["t1"].pct) == (1, 33.33)
    assert (gap.per_template["t2"].missing, gap.per_template["t2"].pct) == (2, 66.67)
    assert (gap.intersection, gap.intersection_pct) == (1, 33.33)
    assert (gap.covered, gap.covered_pct) == (2, 66.67)
    assert gap.status == {IU: "covered", IK: "gap", UK: "covered"}


def test_kinawley_report_json() -> None:
    conversations, answers = setup_records()
    report = evaluate(
        RELATIONS, conversations, answers, session="s1", model="replay:k.jsonl"
    ).to_json()
    assert report["session"] == "s1" and report["model"] == "replay:k.jsonl"
    assert report["relations"] == 3
    assert report["queries"] == 6
    assert report["executions"] == 18
    assert (report["valid"], report["invalid"]) == (16, 2)
    assert report["tests"] == {
        "atomic": 2,
        "sequential_intra": 5,
        "sequential_inter": 5,
        "ontological": 1,
    }
    assert report["errors"] == {
        "atomic": 1,
        "sequential_intra": 1,
        "sequential_inter": 2,
        "ontological": 1,
        "total": 5,
    }
    assert report["error_rate"] == round(5 / 13, 6)
    assert report["gap"] == {
        "per_template": {"t1": {"missing": 1, "pct": 33.33}, "t2": {"missing": 2, "pct": 66.67}},
        "intersection": {"missing": 1, "pct": 33.33},
    }
    assert report["coverage"] == {"covered": 2, "pct": 66.67}
    # Planned = what 3 relations x 2 templates allow: 3 atomic, 6 intra, 6 inter, and the one
    # relation with a node in between x 2 templates = 2 ontological.
    assert report["tests_planned"] == {
        "atomic": 3,
        "sequential_intra": 6,
        "sequential_inter": 6,
        "ontological": 2,
    }


def test_kinawley_relation_summary() -> None:
    conversations, answers = setup_records()
    evaluation = evaluate(RELATIONS, conversations, answers)
    summary = evaluation.summaries[UK]
    assert summary.atomic == {"t1": Y, "t2": N}
    assert summary.sequential == {"t1+t2": (Y, Y), "t2+t1": (N, N)}
    assert (summary.tests, summary.errors, summary.metamorphic_errors) == (5, 3, 3)
    assert summary.error_oracles == ("atomic", "sequential_inter")
    assert evaluation.summaries[IK].error_oracles == ("sequential_intra", "ontological")
    assert evaluation.errors_by_relation() == {IU: 0, IK: 1, UK: 3}
    grouped = evaluation.verdicts_by_oracle()
    assert [
        len(grouped[k]) for k in ("atomic", "sequential_intra", "sequential_inter", "ontological")
    ] == [2, 5, 5, 1]


def test_partial_answers_count_only_finished_tests() -> None:
    """U>K Q1 has not arrived: the U>K atomic and Q1-vs-B2 tests wait, and so does the
    I>K ontological test under t1 (it depends on U>K's t1 answer). Gap: U>K pending under t1,
    but Q2=no already counts in gap_t2; U>K status pending (t1 missing, t2 no)."""
    conversations = build_conversations(RELATIONS)
    script: dict[str, Mapping[str, Sequence[Answer | None]]] = {
        **SCRIPT,
        UK: {**SCRIPT[UK], "Q1": [None]},
    }
    answers = script_answers(conversations, script)
    assert len(answers) == 17
    evaluation = evaluate(RELATIONS, conversations, answers)
    assert evaluation.tests == {
        "atomic": 1,
        "sequential_intra": 5,
        "sequential_inter": 4,
        "ontological": 0,
    }
    assert evaluation.errors == {
        "atomic": 0,
        "sequential_intra": 1,
        "sequential_inter": 1,
        "ontological": 0,
    }
    assert evaluation.executions == 17 and evaluation.planned_executions == 18
    gap = evaluation.gap
    assert gap.per_template["t1"].missing == 1 and gap.per_template["t1"].pending == 1
    assert gap.per_template["t2"].missing == 2
    assert (gap.covered, gap.intersection, gap.pending) == (1, 1, 1)
    assert gap.status[UK] == "pending"


def test_no_answers_yet_gives_empty_report() -> None:
    conversations = build_conversations(RELATIONS)
    report = evaluate(RELATIONS, conversations, {}).to_json()
    assert report["executions"] == 0 and report["queries"] == 0
    assert report["errors"]["total"] == 0 and report["error_rate"] == 0.0
    assert report["coverage"] == {"covered": 0, "pct": 0.0}
    assert report["pending_relations"] == 3


def test_invalid_answers_never_compared() -> None:
    """All answers invalid: no test of any kind runs, every relation is in the gap."""
    conversations = build_conversations(RELATIONS)
    script = {r.id: {"Q1": [X], "Q2": [X], "A": [X, X], "B": [X, X]} for r in RELATIONS}
    evaluation = evaluate(RELATIONS, conversations, script_answers(conversations, script))
    assert evaluation.test_total == 0
    assert (evaluation.valid, evaluation.invalid) == (0, 18)
    assert evaluation.gap.intersection == 3
