"""Every renderer on one small evaluation whose numbers are worked out by hand.

Path a -> b -> c (relations a>b, a>c, b>c), templates t1, t2; answers:
    a>b: Q1 yes, Q2 yes, A yes/yes, B yes/yes   -> 5 tests, 0 errors
    b>c: Q1 yes, Q2 yes, A yes/yes, B yes/yes   -> 5 tests, 0 errors
    a>c: Q1 no,  Q2 yes, A no/yes,  B yes/no    -> atomic error, intra A error, intra B error,
         inter Q2(yes) vs A2(yes) ok, Q1(no) vs B2(no) ok -> 5 tests, 3 errors
Metamorphic: atomic 3/1, intra 6/2, inter 6/0. Ontological: a>c under t1 is no while a>b and
b>c are yes -> 1 error; under t2 yes -> no error: 2 tests, 1 error. Total 17 tests, 4 errors.
Gap: t1 {a>c} 1 (33.33%), t2 0, intersection 0; coverage 3 (100%). 18 executions, all valid.
"""

from __future__ import annotations

import csv
import io
import json
from typing import cast

import pytest

from kontest_tui.domain.records import Answer, Conversation, Query, Relation
from kontest_tui.errors import InvalidInputError
from kontest_tui.mitigate.ensemble import cross_validate
from kontest_tui.oracles.evaluate import evaluate
from kontest_tui.oracles.intervals import clopper_pearson
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.render import (
    interval_text,
    render_ensemble,
    render_report,
    render_verdicts,
)
from kontest_tui.results.answers import ModelAnswers

Y, N = Answer.YES, Answer.NO


def build_evaluation():
    path = ["a", "b", "c"]
    relations = [
        Relation(f"{path[i]}>{path[j]}", path[i], path[j], "contains", tuple(path[i : j + 1]))
        for i in range(3)
        for j in range(i + 1, 3)
    ]
    script = {
        "a>b": [[Y], [Y], [Y, Y], [Y, Y]],
        "b>c": [[Y], [Y], [Y, Y], [Y, Y]],
        "a>c": [[N], [Y], [N, Y], [Y, N]],
    }
    conversations, answers = [], {}
    for relation in relations:
        q1 = Query(relation.id, "t1", f"Does {relation.parent} have {relation.child}?")
        q2 = Query(relation.id, "t2", f"Is {relation.child} in {relation.parent}?")
        shapes = [
            ("atomic", "Q1", (q1,)),
            ("atomic", "Q2", (q2,)),
            ("sequential", "A", (q1, q2)),
            ("sequential", "B", (q2, q1)),
        ]
        for (kind, label, turns), said in zip(shapes, script[relation.id], strict=True):
            conversation = Conversation(f"{relation.id}#{label}", relation.id, kind, label, turns)
            conversations.append(conversation)
            for turn, answer in enumerate(said):
                answers[(conversation.id, turn)] = answer
    return evaluate(relations, conversations, answers, session="s7", model="sim:default")


def test_json_is_sorted_report() -> None:
    text = render_report(build_evaluation(), "json")
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["tests"] == {
        "atomic": 3,
        "sequential_intra": 6,
        "sequential_inter": 6,
        "ontological": 2,
    }
    assert data["errors"]["total"] == 4
    assert data["gap"]["per_template"]["t1"] == {"missing": 1, "pct": 33.33}
    assert data["coverage"] == {"covered": 3, "pct": 100.0}
    assert text.startswith('{\n  "answers_from_cache": 0')
    assert data["consistency"] == {"kontest": {"tests": 17, "errors": 4, "rate": round(4 / 17, 6)}}
    assert data["refusals"] == 0 and "accuracy" not in data


def interval(oracle: str) -> str:
    """The `12.0-19.8%` cell of an oracle's clustered interval in the hand-worked report."""
    return interval_text(build_evaluation().to_json()["rates"][oracle])


def deff(oracle: str) -> str:
    """The design effect cell (two decimals) of an oracle's rate in the hand-worked report."""
    return f"{build_evaluation().to_json()['rates'][oracle]['design_effect']:.2f}"


def test_text_report_table() -> None:
    text = render_report(build_evaluation(), "text")
    lines = text.splitlines()
    assert lines[0] == "KONTEST report"
    assert "Session s7  model sim:default" in text
    assert "executions 18 (valid 18, invalid 0, of which refusals 0)" in text
    row: dict[str, list[str]] = {}
    for line in lines:
        if line.split():  # table rows first; the error list below repeats oracle names
            row.setdefault(line.split()[0], line.split()[1:])

    # The tests by their names in words (report.words), not their JSON keys.
    def cells(name: str) -> list[str]:
        return next(line for line in lines if line.startswith(name + " "))[len(name) :].split()

    assert row["test"] == ["tests", "planned", "errors", "rate", "95%", "interval", "deff"]
    assert cells("two phrasings alone") == ["3", "3", "1", "33.3%", interval("atomic"), "1.50"]
    assert cells("same conversation") == [
        "6",
        "6",
        "2",
        "33.3%",
        interval("sequential_intra"),
        deff("sequential_intra"),
    ]
    # no error: nothing varies between relations, the design effect is 1
    assert cells("after its paraphrase") == [
        "6",
        "6",
        "0",
        "0.0%",
        interval("sequential_inter"),
        "1.00",
    ]
    assert cells("implied facts") == [
        "2",
        "2",
        "1",
        "50.0%",
        interval("ontological"),
        deff("ontological"),
    ]
    assert "sequential_intra" not in text and "sequential_inter" not in text
    assert row["total"] == ["17", "17", "4", "23.5%", interval("total"), deff("total")]
    # Atomic by hand: one test per relation, (1, 0, 0) errors: p = 1/3, deff = 1.5 (the
    # m / (m - 1) correction of 3 clusters); one test a cluster, so no degrees-of-freedom
    # correction (t at n - 1 = m - 1 = 2): Clopper-Pearson at 2 tests with 2/3 errors.
    low, high = clopper_pearson(2 / 3, 2)
    assert interval("atomic") == f"{100 * low:.1f}-{100 * high:.1f}%"
    assert (
        "Headline: KONTEST error rate 23.5% (4 of 17), 95% interval "
        + interval("total")
        + f" (design effect {deff('total')})"
    ) in text
    assert row["t1"] == ["1", "33.33%"] and row["intersection"] == ["0", "0.00%"]
    assert "Errors (all):" in text
    # Without names, the relation and nodes by id; the sentences are the same.
    assert (
        "a>c · implied facts: its yes-answers chain a → b → c, yet it said no to “a contains c”"
    ) in text


def test_text_report_from_plain_json_and_error_limit() -> None:
    evaluation = build_evaluation()
    from_dict = render_report(evaluation.to_json(), "text")
    assert "Errors" not in from_dict and "total" in from_dict
    # a report stored before `tests_planned` existed
    old = cast(ReportJSON, {k: v for k, v in evaluation.to_json().items() if k != "tests_planned"})
    atomic_row = next(
        x for x in render_report(old, "text").splitlines() if x.startswith("two phrasings alone")
    )
    assert atomic_row.split()[3:] == ["3", "-", "1", "33.3%", interval("atomic"), "1.50"]
    limited = render_report(evaluation, "text", max_errors=1)
    assert "Errors (first 1 of 4):" in limited


def test_markdown_report() -> None:
    text = render_report(build_evaluation(), "markdown")
    assert text.startswith("# KONTEST report\n")
    assert "| test | tests | planned | errors | rate | 95% interval |" in text
    assert f"| two phrasings alone | 3 | 3 | 1 | 33.3% | {interval('atomic')} |" in text
    assert "- a>c · two phrasings alone: asked the same thing" in text
    assert "| t1 | 1 | 33.33% |" in text


def test_csv_one_row_per_metric() -> None:
    rows = list(csv.reader(io.StringIO(render_report(build_evaluation(), "csv"))))
    assert rows[0] == ["metric", "value"]
    metrics = dict(rows[1:])
    assert metrics["tests.sequential_intra"] == "6"
    assert metrics["errors.total"] == "4"
    assert metrics["gap.per_template.t1.missing"] == "1"
    assert metrics["gap.intersection.pct"] == "0.0"
    assert metrics["templates"] == '["t1", "t2"]'


def test_verdict_rows() -> None:
    rows = list(csv.DictReader(io.StringIO(render_verdicts(build_evaluation(), "csv"))))
    assert len(rows) == 17
    errors = [r for r in rows if r["error"] == "yes"]
    assert [r["oracle"] for r in errors] == [
        "atomic",
        "sequential_intra",
        "sequential_intra",
        "ontological",
    ]
    assert errors[0]["refs"] == "a>c#Q1#0 a>c#Q2#0"
    assert errors[0]["answers"] == "no yes"


def test_unknown_format_is_invalid_input() -> None:
    with pytest.raises(InvalidInputError):
        render_report(build_evaluation(), "html")


def test_render_ensemble_all_formats() -> None:
    ids = ("r1", "r2")

    def model(name, errors, t1):
        atomic = {(rid, "t1"): a for rid, a in zip(ids, t1, strict=True)}
        return ModelAnswers(name, dict(zip(ids, errors, strict=True)), atomic, ids, ("t1",))

    # Scores: A 5+5=10, B 0+0=0 -> weights 1, 0; the ensemble follows A: gap 0 (A says yes/yes).
    # Majority of two needs both: r2 (A yes, B no) -> no: gap 1. Models: A 0, B 1 -> mean 0.5.
    cv = cross_validate([model("A", [0, 0], [Y, Y]), model("B", [5, 5], [Y, N])], k=2, seed=0)
    text = render_ensemble(cv, "text")
    assert "Ensemble of 2 models, 2 relations, 2-fold cross-validation (seed 0)" in text
    assert "A 1.000, B 0.000" in text
    t1_row = next(line for line in text.splitlines() if line.startswith("t1"))
    assert t1_row.split() == ["t1", "0", "(0.00%)", "1", "(50.00%)", "0.50", "(25.00%)"]
    all_row = next(line for line in text.splitlines() if line.startswith("all"))
    assert all_row.split() == [
        *("all", "0", "(100.00%", "below", "mean)", "1", "(100.00%", "above", "mean)", "0.50")
    ]
    assert json.loads(render_ensemble(cv, "json"))["all"]["weighted"] == 0
    assert "| t1 |" in render_ensemble(cv, "markdown")
    metrics = dict(list(csv.reader(io.StringIO(render_ensemble(cv, "csv"))))[1:])
    assert metrics["per_template.t1.majority.missing"] == "1"


def test_render_single_weighted_ensemble() -> None:
    """The TUI renders weighted_ensemble(...) directly. Same two models as above, weights from
    all relations: A 1.0, B 0.0 -> gap 0 vs models' mean 0.5 -> +100 %."""
    from kontest_tui.mitigate.ensemble import weighted_ensemble

    ids = ("r1", "r2")
    models = [
        ModelAnswers("A", {"r1": 0, "r2": 0}, {("r1", "t1"): Y, ("r2", "t1"): Y}, ids, ("t1",)),
        ModelAnswers("B", {"r1": 5, "r2": 5}, {("r1", "t1"): Y, ("r2", "t1"): N}, ids, ("t1",)),
    ]
    text = render_ensemble(weighted_ensemble(models), "text")
    assert text.startswith("Weighted ensemble of 2 models, 2 relations")
    t1_row = next(line for line in text.splitlines() if line.startswith("t1"))
    assert t1_row.split() == ["t1", "0", "(0.00%)", "0.50", "(25.00%)"]
    assert "all  " in text and "(100.00% below mean)" in text
    assert json.loads(render_ensemble(weighted_ensemble(models), "json"))["all"]["ensemble"] == 0


def test_error_list_with_entity_labels() -> None:
    labels = {"a": "Ireland", "b": "Ulster", "c": "Kinawley"}
    text = render_report(build_evaluation(), "text", labels=labels)
    errors = text.split("Errors (all):\n")[1].splitlines()
    # a>c: no and yes alone (one disagreement); A = [no, yes] and B = [yes, no] each flip too,
    # repeating it: folded under it, indented
    assert errors == [
        "  Ireland > Kinawley · two phrasings alone: asked the same thing in two phrasings, "
        "each alone, the model said no to one and yes to the other",
        "    repeated: same conversation: no, then yes in one conversation",
        "    repeated: same conversation: yes, then no in one conversation",
        "  Ireland > Kinawley · implied facts: its yes-answers chain Ireland → Ulster → "
        "Kinawley, yet it said no to “Ireland contains Kinawley”",
    ]
    assert "a>c" not in text.split("Errors")[1]


def test_the_report_leads_with_the_findings() -> None:
    # a>b and b>c: yes everywhere; a>c: no and yes alone, A and B flip (two repeats), and
    # the yes-path a -> b -> c implies a>c, denied under t1 (one implied fact)
    evaluation = build_evaluation()
    text = render_report(evaluation, "text").splitlines()
    assert text[3:7] == [
        "Findings, each counted once:",
        "  1 of 3 relations get opposite answers to two phrasings, each asked alone",
        "  2 more errors repeat those disagreements (the same relations asked again, in one "
        "conversation)",
        "  1 implied fact denied, on 1 relation",
    ]
    assert text[7].startswith("Relations 3")
    markdown = render_report(evaluation, "markdown")
    assert "- Findings, each counted once:\n  - 1 of 3 relations get opposite answers" in markdown
