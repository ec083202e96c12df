"""Variant and annotation oracles on hand-made conversations and answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kontest_tui.domain.extras import AnnotationExtras, VariantExtras
from kontest_tui.domain.records import Answer, Conversation, Query, TestKind
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.annotated import build_annotation_conversations, parse_annotation_lines
from kontest_tui.oracles.annotation import evaluate_annotations, find_annotation_verdicts
from kontest_tui.oracles.variant import (
    find_flip_causes,
    find_variant_verdicts,
    group_variants,
    summarize_variants,
)
from tests.support.records import extras_of

Y, N, X = Answer.YES, Answer.NO, Answer.INVALID


def variant(n: int, changed: dict[str, str], rel: str = "R", template: str = "t1") -> Conversation:
    return Conversation(
        f"{rel}/{template}~v{n}",
        rel,
        "atomic",
        f"{template} v{n}",
        (Query(rel, template, f"text {n}"),),
        TestKind.VARIANT,
        extras=VariantExtras(n, changed=changed),
    )


# Rows of a pairwise array over have {have, contain, include} x Ireland {Ireland, Éire}.
CONVERSATIONS = [
    variant(0, {}),
    variant(1, {"w3:have": "contain"}),
    variant(2, {"w3:have": "include", "parent": "Éire"}),
    variant(3, {"parent": "Éire"}),
    variant(4, {"w3:have": "contain", "parent": "Éire"}),
    variant(5, {"w3:have": "include"}),
]


def test_variant_verdicts_and_flip_cause() -> None:
    # Every row using "contain" says no; the rest agree with the original yes; v5 invalid.
    answers = {
        ("R/t1~v0", 0): Y,
        ("R/t1~v1", 0): N,
        ("R/t1~v2", 0): Y,
        ("R/t1~v3", 0): Y,
        ("R/t1~v4", 0): N,
        ("R/t1~v5", 0): X,
    }
    verdicts = find_variant_verdicts(CONVERSATIONS, answers)
    assert [v.oracle for v in verdicts] == ["variant"] * 4  # v1..v4 (v5 invalid)
    assert [(v.refs[1][0], v.error) for v in verdicts] == [
        ("R/t1~v1", True),
        ("R/t1~v2", False),
        ("R/t1~v3", False),
        ("R/t1~v4", True),
    ]
    assert all(v.refs[0] == ("R/t1~v0", 0) and v.template_id == "t1" for v in verdicts)
    assert verdicts[0].answers == (Y, N)
    assert verdicts[0].detail.startswith("have -> contain: yes -> no")
    assert "always flips with have -> contain (2/2)" in verdicts[0].detail
    assert "Éire" not in verdicts[0].detail.split(";")[1]  # Éire flips only 1 of 3 times
    causes = find_flip_causes(group_variants(CONVERSATIONS, answers)[0])
    assert (causes[0].parameter, causes[0].value, causes[0].flips, causes[0].uses) == (
        "w3:have",
        "contain",
        2,
        2,
    )
    eire = next(c for c in causes if c.value == "Éire")
    assert (eire.flips, eire.uses) == (1, 3)


def test_variant_reference_when_original_invalid() -> None:
    answers = {
        ("R/t1~v0", 0): X,
        ("R/t1~v1", 0): N,
        ("R/t1~v2", 0): N,
        ("R/t1~v3", 0): Y,
        ("R/t1~v4", 0): "no",
    }
    verdicts = find_variant_verdicts(CONVERSATIONS, answers)
    # Reference: the majority answer "no" held by v1 (first seen); v2, v3, v4 are compared to it.
    assert [v.refs[1][0] for v in verdicts] == ["R/t1~v2", "R/t1~v3", "R/t1~v4"]
    assert [v.error for v in verdicts] == [False, True, False]
    assert all(v.refs[0] == ("R/t1~v1", 0) for v in verdicts)


def test_variant_groups_are_per_template_and_ignore_kontest() -> None:
    other = [variant(0, {}, template="t2"), variant(1, {"w2:in": "within"}, template="t2")]
    kontest = Conversation("R/t1", "R", "atomic", "Q1", (Query("R", "t1", "x"),))
    answers = {
        ("R/t1~v0", 0): Y,
        ("R/t1~v1", 0): Y,
        ("R/t2~v0", 0): N,
        ("R/t2~v1", 0): Y,
        ("R/t1", 0): N,
    }
    verdicts = find_variant_verdicts([*CONVERSATIONS[:2], *other, kontest], answers)
    assert [(v.template_id, v.error) for v in verdicts] == [("t1", False), ("t2", True)]


def test_variant_summary_section() -> None:
    # The first test's answers, plus t2 of another relation where "within" flips once.
    other = [variant(0, {}, rel="S"), variant(1, {"w2:in": "within"}, rel="S")]
    answers = {
        ("R/t1~v0", 0): Y,
        ("R/t1~v1", 0): N,
        ("R/t1~v2", 0): Y,
        ("R/t1~v3", 0): Y,
        ("R/t1~v4", 0): N,
        ("R/t1~v5", 0): X,
        ("S/t1~v0", 0): N,
        ("S/t1~v1", 0): Y,
    }
    verdicts, summary = summarize_variants([*CONVERSATIONS, *other], answers)
    section: dict[str, Any] = summary
    assert len(verdicts) == 5 and sum(v.error for v in verdicts) == 3
    assert {
        k: section[k]
        for k in ("queries", "variants", "executions", "tests", "errors", "queries_with_flips")
    } == {
        "queries": 2,
        "variants": 8,
        "executions": 8,
        "tests": 5,
        "errors": 3,
        "queries_with_flips": 2,
    }
    # contain: 2 flips in 2 uses; then 1 flip each: within (1/1) before Éire (1/3).
    assert [(c["word"], c["value"], c["flips"], c["uses"]) for c in section["flip_causes"]] == [
        ("have", "contain", 2, 2),
        ("in", "within", 1, 1),
        ("parent", "Éire", 1, 3),
    ]


def test_parse_annotation_lines_reports_bad_lines() -> None:
    lines = [
        json.dumps(
            {
                "question": "can you drink alcohol in public in denmark",
                "answer": True,
                "passage": "Drinking in public in Denmark is legal.",
            }
        ),
        "{broken",
        "",
        json.dumps({"question": "is the sky green", "answer": "no", "passage": ""}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"question": "  ", "answer": True}),
        json.dumps({"question": "is water wet", "answer": False}),
    ]
    questions, problems = parse_annotation_lines(lines, "q.jsonl")
    assert [(q.line, q.answer) for q in questions] == [(1, True), (7, False)]
    assert questions[0].id == "q1" and questions[1].passage == ""
    assert [p.split(":")[1] for p in problems] == ["2", "4", "5", "6"]
    assert problems[0].startswith("q.jsonl:2: not JSON")
    assert "answer" in problems[1]


def test_annotation_conversations_and_evaluation(tmp_path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text(
        json.dumps(
            {
                "question": "can you drink alcohol in public in denmark",
                "answer": True,
                "passage": "...",
            }
        )
        + "\nnot json\n",
        encoding="utf-8",
    )
    conversations, problems = build_annotation_conversations(path, strength=2, seed=0, postfix=True)
    assert problems == [f"{path}:2: not JSON: Expecting value at column 1"]
    assert conversations[0].id == "q1/q~v0"
    assert conversations[0].turns[0].text == (
        "can you drink alcohol in public in denmark? Return a JSON Boolean."
    )
    assert all(c.test_kind is TestKind.ANNOTATION and c.expected == (Y,) for c in conversations)
    assert (
        extras_of(conversations[0], AnnotationExtras).annotation is True
        and extras_of(conversations[0], AnnotationExtras).line == 1
    )
    assert len(conversations) >= 2
    # Hand-made answers: the original right, variant 1 wrong, variant 2 invalid, others right.
    answers = {(c.id, 0): Y for c in conversations}
    answers[(conversations[1].id, 0)] = N
    answers[(conversations[2].id, 0)] = X
    result = evaluate_annotations(conversations, answers, problems)
    n = len(conversations)
    data = result.to_json()
    assert data["questions"] == 1 and data["executions"] == n
    assert data["valid"] == n - 1 and data["invalid"] == 1
    # The invalid answer is a failed annotation test (thesis Sec. 1.3.4), not a skipped one.
    assert data["tests"] == {"annotation": n, "variant": n - 2}
    assert data["errors"] == {"annotation": 2, "variant": 1}
    assert data["correct"] == n - 2 and data["accuracy"] == (n - 2) / n
    assert data["questions_with_errors"] == ["q1"]
    assert data["problems"] == problems
    wrong = [v for v in find_annotation_verdicts(conversations, answers) if v.error]
    assert [v.refs for v in wrong] == [((conversations[1].id, 0),), ((conversations[2].id, 0),)]
    assert "expected yes, got no" in wrong[0].detail


def test_undefined_answer_fails_the_annotated_question() -> None:
    """Thesis (seed 004) Table 4 style: nine variants of a true question, 8 answered true and
    one unparsable -> accuracy 8/9, not 8/8."""
    conversations = [
        Conversation(
            f"q1/q~v{i}",
            "q1",
            "atomic",
            "q",
            (Query("q1", "q", f"question {i}"),),
            TestKind.ANNOTATION,
            (Y,),
            None,
            AnnotationExtras(variant=i, question="q", annotation=True),
        )
        for i in range(9)
    ]
    answers = {(c.id, 0): Y for c in conversations}
    answers[(conversations[2].id, 0)] = X
    data: dict[str, Any] = evaluate_annotations(conversations, answers).to_json()
    assert data["tests"]["annotation"] == 9 and data["errors"]["annotation"] == 1
    assert data["accuracy"] == 8 / 9


def test_annotation_file_errors(tmp_path) -> None:
    with pytest.raises(InvalidInputError, match="no such file"):
        build_annotation_conversations(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="no usable questions"):
        build_annotation_conversations(bad)
