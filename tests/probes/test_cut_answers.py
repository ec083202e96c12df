"""Answers cut (token limit, timeout) before anything readable are "cut": never graded right
or wrong, counted apart, in every kind; an answer cut after it said something readable is
graded as usual. Hand-made replies whose reading was worked out by hand."""

from __future__ import annotations

import pytest

from kontest_tui.domain.extras import ChoiceOption, FactcheckExtras, VariantExtras
from kontest_tui.domain.records import Answer, Conversation, Query, Relation, Response, TestKind
from kontest_tui.kinds.registry import answer_format, read_reply
from kontest_tui.results.evaluate import evaluate_responses

RELATION = Relation("ie>ie.ulster", "ie", "ie.ulster", "contains", ("ie", "ie.ulster"))


def question(
    text: str, kind: TestKind = TestKind.KONTEST, extras: object = None, **more
) -> Conversation:  # noqa: ANN003
    return Conversation(
        f"{RELATION.id}/{kind.value}/{abs(hash(text)) % 1000}",
        RELATION.id,
        "atomic",
        "Q",
        (Query(RELATION.id, "t1", text),),
        test_kind=kind,
        extras=extras,  # type: ignore[arg-type]
        **more,
    )


WH = question(
    "In which country is Ulster located?",
    TestKind.FACTCHECK,
    FactcheckExtras(question_type="wh", expected_text="Ireland", accepted=("Ireland",)),
    expected=(Answer.YES,),
)
CHOICE = question(
    "In which country is Ulster located?\nA) Ireland\nB) Qatar",
    TestKind.FACTCHECK,
    FactcheckExtras(
        question_type="multiple_choice",
        answer="A",
        options=(ChoiceOption("A", "ie", "Ireland"), ChoiceOption("B", "qa", "Qatar")),
    ),
)
YES_NO = question("Does Ireland have a Ulster?")
JSON = question(
    "Does Ireland have a Ulster? Return a JSON Boolean.",
    TestKind.VARIANT,
    VariantExtras(variant=0, postfix=True, answer_format="json_boolean"),
)


@pytest.mark.parametrize(
    ("conversation", "raw", "whole", "cut"),
    [
        # an open question cut at 3 tokens before naming a place: cut, not wrong
        (WH, " In the north", Answer.NO, Answer.CUT),
        (WH, " In the United", Answer.NO, Answer.CUT),  # "United Kingdom"? cut inside a name
        (WH, " Ireland", Answer.YES, Answer.YES),  # the right name, whatever follows
        (WH, " Ireland, an island", Answer.YES, Answer.YES),
        (WH, " Cork, Ireland", Answer.NO, Answer.NO),  # a whole other name: readable, wrong
        (WH, " Qatar, in the", Answer.NO, Answer.NO),
        # yes/no: the first word decides, whatever the cut took
        (YES_NO, " Yes, it", Answer.YES, Answer.YES),
        (YES_NO, " No", Answer.NO, Answer.NO),
        (YES_NO, " Ye", Answer.INVALID, Answer.CUT),
        (YES_NO, "", Answer.INVALID, Answer.CUT),
        (YES_NO, " I don't know", Answer.INVALID, Answer.INVALID),  # a refusal is readable
        # a letter is readable; "The answer" before it is not
        (CHOICE, " A) Ire", Answer.YES, Answer.YES),
        (CHOICE, " The answer", Answer.INVALID, Answer.CUT),
        # JSON Booleans
        (JSON, "true", Answer.YES, Answer.YES),
        (JSON, "```json\ntr", Answer.INVALID, Answer.CUT),
    ],
)
def test_a_reply_cut_before_anything_readable_is_cut(
    conversation: Conversation, raw: str, whole: Answer, cut: Answer
) -> None:
    assert read_reply(conversation, raw) == whole  # not stopped: read as it always was
    assert read_reply(conversation, raw, "length") == cut
    assert read_reply(conversation, raw, "timeout") == cut


def test_answer_formats() -> None:
    assert [answer_format(c) for c in (WH, CHOICE, YES_NO, JSON)] == [
        "open",
        "choice",
        "yes_no",
        "yes_no",
    ]


def test_cut_answers_are_counted_apart_and_graded_neither_way() -> None:
    """A session of one WH question cut before naming a place, one cut yes/no answer and one
    whole yes: the report counts 2 cut (per kind), 1 valid, 0 invalid; the WH question is no
    FactChecker test (asked 0, errors 0); a row stored as "no" before cut answers existed is
    read again as cut."""
    atomic_t2 = Conversation(
        f"{RELATION.id}/t2",
        RELATION.id,
        "atomic",
        "Q2",
        (Query(RELATION.id, "t2", "Is there a Ulster in Ireland?"),),
    )
    conversations = [YES_NO, atomic_t2, WH]
    responses = {
        (YES_NO.id, 0): Response(YES_NO.id, 0, " Ye", Answer.CUT, stopped="length"),
        (atomic_t2.id, 0): Response(atomic_t2.id, 0, " Yes", Answer.YES, p_yes=0.55),
        # stored by an earlier version as a wrong answer
        (WH.id, 0): Response(WH.id, 0, " In the north", Answer.NO, stopped="length"),
    }
    evaluation = evaluate_responses([RELATION], conversations, responses, session="s", model="m")
    report = evaluation.to_json()
    assert (report["valid"], report["invalid"], report.get("cut")) == (1, 0, 2)
    assert report.get("cut_by_kind") == {"kontest": 1, "factcheck": 1}
    assert "factcheck" not in report  # its one answer was cut: nothing asked, no error
    assert report["tests"]["atomic"] == 0  # one answer of the pair is cut: no test
    assert report["gap"]["per_template"]["t1"]["missing"] == 0  # a cut answer is no gap


def test_the_live_view_counts_cut_answers_apart() -> None:
    from kontest_tui.run.live import LiveTally

    tally = LiveTally(per_relation=6)
    tally.add(WH, Response(WH.id, 0, " In the north", Answer.CUT, stopped="length"))
    tally.add(CHOICE, Response(CHOICE.id, 0, " Maybe", Answer.INVALID))
    counts = tally.snapshot()
    assert (counts.answered, counts.valid, counts.invalid, counts.cut) == (2, 0, 1, 1)


def test_a_run_whose_answers_are_cut_keeps_them_out_of_every_count_and_gap(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """The simulated model with a budget of one token: "**No**" and "I'm not sure." are cut
    before anything readable, "No, that's not right." is still no. The report counts the cut
    ones apart; the explorer's gap table (store.rollups) leaves them out as the report does."""
    import json
    from pathlib import Path

    from kontest_tui.cli import run_cli
    from kontest_tui.store import Store

    db = Path(str(tmp_path)) / "cut.db"
    run = ["run", "--kg", "places", "--limit", "20", "--model", "sim", "--db", str(db), "-q"]
    assert run_cli([*run, "--max-tokens", "1"]) == 0
    capsys.readouterr()
    assert run_cli(["report", "--db", str(db), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cut"] > 0 and report["invalid"] == 0  # every unreadable reply was cut
    assert report["executions"] + report["cut"] == report["planned_executions"]
    assert report["stopped"]["length"] >= report["cut"]
    with Store(db) as store:
        session = store.sessions.ids()[0]
        rows = store.conn.execute(
            "SELECT raw FROM responses WHERE answer = 'cut' AND session = ?", (session,)
        ).fetchall()
        assert rows and all(raw.strip().lower() not in ("yes", "no") for (raw,) in rows)
        groups = dict(store.gaps.gap_groups(session))
    gaps = report["gap"]["per_template"]
    assert {t: groups.get(t, 0) for t in gaps} == {t: gaps[t]["missing"] for t in gaps}
