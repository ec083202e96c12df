"""Whether a try repeats an error's contradiction, per kind of error, and the status of an
error over its tries (oracles.confirmation), on hand-made answers."""

from __future__ import annotations

import pytest

from kontest_tui.domain.records import Answer
from kontest_tui.kinds.registry import builtin_measures
from kontest_tui.oracles.confirmation import (
    CONFIRMED,
    MIXED,
    NOT_REPRODUCED,
    UNDECIDED,
    confirmation_status,
    confirmed_headline,
    status_rank,
    trial_holds,
)

MEASURES = builtin_measures()  # each kind's headline names the oracles whose errors it counts
YES, NO, INVALID, CUT, REFUSAL = (
    Answer.YES,
    Answer.NO,
    Answer.INVALID,
    Answer.CUT,
    Answer.REFUSAL,
)


@pytest.mark.parametrize("oracle", ["atomic", "sequential_intra", "sequential_inter"])
def test_a_metamorphic_try_holds_when_the_fact_gets_opposite_answers(oracle: str) -> None:
    # the two compared answers: opposite (either way round) holds; the same answer does not
    assert trial_holds(oracle, [NO, YES]) is True
    assert trial_holds(oracle, [YES, NO]) is True
    assert trial_holds(oracle, [YES, YES]) is False
    assert trial_holds(oracle, [NO, NO]) is False
    # an answer that is neither yes nor no, or missing: the try is not counted
    for unreadable in (INVALID, CUT, REFUSAL, None):
        assert trial_holds(oracle, [NO, unreadable]) is None


def test_an_ontological_try_holds_while_the_implied_fact_is_denied_and_its_steps_affirmed() -> None:
    # (the implied fact Ireland > Kinawley, then Ireland > Ulster, Ulster > Kinawley)
    assert trial_holds("ontological", [NO, YES, YES]) is True
    assert trial_holds("ontological", [YES, YES, YES]) is False  # the fact affirmed now
    assert trial_holds("ontological", [NO, NO, YES]) is False  # a step denied: no chain
    assert trial_holds("ontological", [NO, YES, NO]) is False
    assert trial_holds("ontological", [NO, YES, INVALID]) is None


@pytest.mark.parametrize("oracle", ["variant", "factcheck", "logic", "annotation"])
def test_another_kind_holds_when_the_wrong_answer_comes_back(oracle: str) -> None:
    # a fact of the graph (right answer yes): no again holds, yes does not
    assert trial_holds(oracle, [NO]) is True
    assert trial_holds(oracle, [YES]) is False
    # a distractor or a negated statement (right answer no): yes again holds
    assert trial_holds(oracle, [YES], Answer.NO) is True
    assert trial_holds(oracle, [NO], Answer.NO) is False
    assert trial_holds(oracle, [REFUSAL]) is None  # "I don't know" is not counted


def test_an_errors_status_over_its_tries() -> None:
    assert confirmation_status([True, True, True, True]) == CONFIRMED
    assert confirmation_status([True, True, False]) == CONFIRMED  # 2 of 3: most of them
    assert confirmation_status([True, False]) == MIXED  # half is not most
    assert confirmation_status([True, False, False, False]) == MIXED
    assert confirmation_status([False, False, False]) == NOT_REPRODUCED
    # tries not counted are left out: 1 of 1 counted
    assert confirmation_status([True, None, None]) == CONFIRMED
    assert confirmation_status([None, None]) == UNDECIDED
    assert confirmation_status([]) == UNDECIDED
    # confirmed errors are listed first, not reproduced ones last, after those never asked
    ranks = [status_rank(s) for s in (CONFIRMED, MIXED, UNDECIDED, "", NOT_REPRODUCED)]
    assert ranks == sorted(ranks)


def test_the_headline_over_confirmed_errors() -> None:
    headline = {"measure": "kontest", "title": "KONTEST error rate", "count": 27, "of": 164}
    confirmed = {"atomic": 1, "sequential_intra": 3, "sequential_inter": 2, "variant": 5}
    over = confirmed_headline(headline, confirmed, MEASURES)
    # the four KONTEST oracles only (the variant's 5 are another measure), over 164 tests
    assert over == {
        "measure": "kontest",
        "title": "KONTEST error rate",
        "count": 6,
        "of": 164,
        "rate": round(6 / 164, 6),
    }
    logic = {"measure": "logic", "title": "hallucination rate", "count": 9, "of": 20}
    over_logic = confirmed_headline(logic, {"logic": 4, "atomic": 2}, MEASURES)
    assert over_logic is not None and over_logic["rate"] == 0.2
    # FactChecker's headline counts right answers: no confirmed rate for it
    assert (
        confirmed_headline({"measure": "factcheck", "of": 10}, {"factcheck": 2}, MEASURES) is None
    )
    # the annotated questions' headline counts the annotation oracle's errors, not their variants'
    annotated = {"measure": "annotation", "title": "annotation failure rate", "of": 8}
    over_annotated = confirmed_headline(annotated, {"annotation": 2, "variant": 3}, MEASURES)
    assert over_annotated is not None and over_annotated["count"] == 2
    # a measure no kind declares (a plugin no longer installed): none
    assert confirmed_headline({"measure": "holds", "of": 4}, {"holds": 1}, MEASURES) is None
