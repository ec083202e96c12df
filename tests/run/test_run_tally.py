"""The live tally (run.live): running counts made as answers arrive, for the explorer's live
screen. A hand-worked relation, then a whole run whose final metamorphic counts must equal
the run's own evaluation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kontest_tui.domain.records import Answer, Conversation, Query, Response, TestKind
from kontest_tui.run.api import SessionSpec, start_session
from kontest_tui.run.live import LiveTally, kontest_per_relation
from kontest_tui.store.database import Store


def relation_conversations(relation: str = "a>b") -> list[Conversation]:
    q1 = Query(relation, "t1", "Does A have a B?")
    q2 = Query(relation, "t2", "Is there a B in A?")
    return [
        Conversation(f"{relation}/t1", relation, "atomic", "Q1", (q1,)),
        Conversation(f"{relation}/t2", relation, "atomic", "Q2", (q2,)),
        Conversation(f"{relation}/t1+t2", relation, "sequential", "A", (q1, q2)),
        Conversation(f"{relation}/t2+t1", relation, "sequential", "B", (q2, q1)),
    ]


def answer(conversation: Conversation, turn: int, value: Answer) -> Response:
    return Response(conversation.id, turn, value.value, value)


def test_a_relation_is_judged_once_its_four_conversations_are_answered() -> None:
    q1, q2, a, b = relation_conversations()
    tally = LiveTally(kontest_per_relation(2))
    yes, no = Answer.YES, Answer.NO
    # Q1 yes, Q2 no (atomic error); A yes yes (no intra error, Q2 no vs A2 yes: inter error);
    # B no no (no intra error, Q1 yes vs B2 no: inter error)
    steps = [(q1, 0, yes), (a, 0, yes), (q2, 0, no), (a, 1, yes), (b, 0, no)]
    for conversation, turn, value in steps:
        tally.add(conversation, answer(conversation, turn, value))
    early = tally.snapshot()
    assert early.answered == 5 and early.valid == 5 and early.relations == 0
    assert early.test_total == 0  # B is not complete: the relation waits
    tally.add(b, answer(b, 1, no))
    counts = tally.snapshot()
    assert counts.relations == 1
    assert counts.tests == {"atomic": 1, "sequential_intra": 2, "sequential_inter": 2}
    assert counts.errors == {"atomic": 1, "sequential_intra": 0, "sequential_inter": 2}
    assert [e.verdict.oracle for e in counts.recent_errors] == [
        "atomic",
        "sequential_inter",
        "sequential_inter",
    ]
    assert counts.recent_errors[0].question == "Does A have a B?"
    assert [live.response.turn for live in counts.recent][-1] == 1


def test_failed_and_invalid_turns_are_counted_and_take_no_part_in_tests() -> None:
    q1, q2, a, b = relation_conversations()
    tally = LiveTally(kontest_per_relation(2), recent=3)
    tally.add(q1, answer(q1, 0, Answer.YES))
    tally.add(q2, Response(q2.id, 0, "", Answer.INVALID, "timed out"))
    tally.add(a, answer(a, 0, Answer.INVALID))
    tally.add(a, answer(a, 1, Answer.YES))
    tally.add(b, answer(b, 0, Answer.NO))
    tally.add(b, answer(b, 1, Answer.YES))
    counts = tally.snapshot()
    assert (counts.answered, counts.valid, counts.invalid, counts.failed) == (6, 4, 1, 1)
    # only B1 vs B2 and Q1 vs B2 have two valid answers
    assert counts.tests == {"atomic": 0, "sequential_intra": 1, "sequential_inter": 1}
    assert counts.errors == {"atomic": 0, "sequential_intra": 1, "sequential_inter": 0}
    assert len(counts.recent) == 3  # bounded


def test_a_cancelled_run_judges_what_it_has_at_the_finish() -> None:
    q1, q2, _, _ = relation_conversations()
    tally = LiveTally(kontest_per_relation(2))
    tally.add(q1, answer(q1, 0, Answer.YES))
    tally.add(q2, answer(q2, 0, Answer.NO))
    assert tally.snapshot().errors["atomic"] == 0
    tally.finish()
    assert tally.snapshot().errors["atomic"] == 1 and tally.snapshot().relations == 1


def test_other_kinds_are_counted_per_kind() -> None:
    query = Query("a>b", "t1", "Is B in A? Return a JSON Boolean.")
    variant = Conversation("a>b/t1/v1", "a>b", "atomic", "v1", (query,), TestKind.VARIANT)
    tally = LiveTally(kontest_per_relation(2))
    tally.add(variant, answer(variant, 0, Answer.YES))
    counts = tally.snapshot()
    assert counts.per_kind == {"variant": 1} and counts.test_total == 0


def test_a_whole_run_tallies_the_metamorphic_counts_of_its_evaluation(tmp_path: Path) -> None:
    tally = LiveTally(kontest_per_relation(2))
    with Store(tmp_path / "k.db") as store:
        outcome = asyncio.run(
            start_session(store, SessionSpec("places", limit=60), events=tally.events())
        )
    tally.finish()
    report = outcome.evaluation.to_json()
    counts = tally.snapshot()
    assert counts.relations == 60 and counts.answered == report["executions"]
    for oracle in ("atomic", "sequential_intra", "sequential_inter"):
        assert counts.tests[oracle] == report["tests"][oracle], oracle
        assert counts.errors[oracle] == report["errors"][oracle], oracle
    assert counts.valid == report["valid"] and counts.invalid == report["invalid"]
