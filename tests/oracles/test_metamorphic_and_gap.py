"""Metamorphic pairing by conversation fields, and gap/intersection on a toy (hand-computed)."""

from __future__ import annotations

import random

from kontest_tui.domain.records import Conversation, Query, TestKind
from kontest_tui.oracles.coverage import compute_gap
from kontest_tui.oracles.metamorphic import find_metamorphic_verdicts
from tests.oracles.oracle_toys import N, X, Y, build_conversations, build_relations, script_answers


def test_pairs_found_from_fields_whatever_the_order() -> None:
    """Shuffled conversations: still 5 tests; A is the sequence starting with the template seen
    first. Q1 yes, Q2 no, A no/no, B yes/yes: atomic error, intras ok, inter Q2(no)=A2(no) ok,
    Q1(yes)=B2(yes) ok -> 5 tests, 1 error."""
    relations = build_relations(["a", "b"])
    conversations = build_conversations(relations)
    answers = script_answers(
        conversations, {"a>b": {"Q1": [Y], "Q2": [N], "A": [N, N], "B": [Y, Y]}}
    )
    ordered = find_metamorphic_verdicts(conversations, answers)
    shuffled = list(conversations)
    random.Random(7).shuffle(shuffled)
    again = find_metamorphic_verdicts(shuffled, answers)
    assert [(v.oracle, v.error) for v in ordered] == [
        ("atomic", True),
        ("sequential_intra", False),
        ("sequential_intra", False),
        ("sequential_inter", False),
        ("sequential_inter", False),
    ]
    # The same tests compare the same answers (the pair's order follows first appearance).
    assert {(v.oracle, frozenset(v.refs), v.error) for v in again} == {
        (v.oracle, frozenset(v.refs), v.error) for v in ordered
    }


def test_other_test_kinds_and_atomic_only_sessions() -> None:
    """Variant conversations are ignored; with only atomic conversations for t1, t2, t3 every
    pair is an atomic test: yes/no/yes -> (t1,t2) error, (t1,t3) ok, (t2,t3) error."""
    relations = build_relations(["a", "b"])
    rel = relations[0]
    conversations = [
        Conversation(f"x{t}", rel.id, "atomic", f"Q{t}", (Query(rel.id, f"t{t}", f"q{t}"),))
        for t in (1, 2, 3)
    ]
    conversations.append(
        Conversation(
            "v",
            rel.id,
            "atomic",
            "V",
            (Query(rel.id, "t1", "variant"),),
            test_kind=TestKind.VARIANT,
        )
    )
    answers = {("x1", 0): Y, ("x2", 0): N, ("x3", 0): Y, ("v", 0): N}
    verdicts = find_metamorphic_verdicts(conversations, answers)
    assert [(v.template_id, v.error) for v in verdicts] == [
        ("t1+t2", True),
        ("t1+t3", False),
        ("t2+t3", True),
    ]


def test_gap_intersection_coverage_toy() -> None:
    """Four relations r1..r4 (t1, t2 atomic answers):
    r1 yes/yes -> covered; r2 yes/no -> covered, gap_t2; r3 no/invalid -> gap_t1, gap_t2,
    intersection; r4 invalid/yes -> covered, gap_t1.
    gap_t1 = {r3, r4} = 2 (50%), gap_t2 = {r2, r3} = 2 (50%), intersection {r3} = 1 (25%),
    coverage 3 (75%)."""
    relations = build_relations(["a", "b", "c"]) + build_relations(["d", "e"])
    ids = [r.id for r in relations]  # a>b, a>c, b>c, d>e
    conversations = build_conversations(relations)
    pattern = {ids[0]: (Y, Y), ids[1]: (Y, N), ids[2]: (N, X), ids[3]: (X, Y)}
    script = {rid: {"Q1": [p[0]], "Q2": [p[1]]} for rid, p in pattern.items()}
    gap = compute_gap(relations, conversations, script_answers(conversations, script))
    assert {t: (g.missing, g.pct) for t, g in gap.per_template.items()} == {
        "t1": (2, 50.0),
        "t2": (2, 50.0),
    }
    assert (gap.intersection, gap.intersection_pct) == (1, 25.0)
    assert (gap.covered, gap.covered_pct, gap.pending) == (3, 75.0, 0)
    assert gap.to_json()["intersection"] == {"missing": 1, "pct": 25.0}


def test_stored_string_answers_are_coerced() -> None:
    """Answers read back as strings: "YES" counts as yes, "maybe" as invalid (never compared).
    Q1 "YES", Q2 "no" -> atomic error; A "yes"/"maybe" -> intra not run; B "no"/"yes" -> intra
    error; inter Q2(no) vs A2(maybe) not run, Q1(yes) vs B2(yes) ok -> 3 tests, 2 errors."""
    from kontest_tui.oracles.evaluate import evaluate

    relations = build_relations(["a", "b"])
    conversations = build_conversations(relations)
    by_label = {"Q1": ["YES"], "Q2": ["no"], "A": ["yes", "maybe"], "B": ["no", "yes"]}
    answers = {
        (c.id, turn): value for c in conversations for turn, value in enumerate(by_label[c.label])
    }
    evaluation = evaluate(relations, conversations, answers)  # type: ignore[arg-type]
    assert evaluation.test_total == 3 and evaluation.error_total == 2
    assert (evaluation.valid, evaluation.invalid) == (5, 1)


def test_gap_members_per_template_and_intersection() -> None:
    """The toy above, as members: gap_t1 = [r3, r4], gap_t2 = [r2, r3], intersection [r3],
    in relation order; an unanswered relation (r5) is in no list."""
    from kontest_tui.oracles.coverage import INTERSECTION, list_gap_relations

    relations = build_relations(["a", "b", "c"]) + build_relations(["d", "e"])
    ids = [r.id for r in relations]
    conversations = build_conversations(relations)
    pattern = {ids[0]: (Y, Y), ids[1]: (Y, N), ids[2]: (N, X), ids[3]: (X, Y)}
    script = {rid: {"Q1": [p[0]], "Q2": [p[1]]} for rid, p in pattern.items()}
    gap = compute_gap(relations, conversations, script_answers(conversations, script))
    atomic = {
        (rid, template): answer
        for rid, (first, second) in pattern.items()
        for template, answer in (("t1", first), ("t2", second))
    }
    members = list_gap_relations([*ids, "r5"], atomic, gap)
    assert members == {
        "t1": [ids[2], ids[3]],
        "t2": [ids[1], ids[2]],
        INTERSECTION: [ids[2]],
    }
