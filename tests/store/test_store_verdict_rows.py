"""store.records.verdict_values: the refs and answers columns are dump_json's text."""

from __future__ import annotations

import json

from kontest_tui.domain.records import Answer, Verdict
from kontest_tui.store.records import dump_json, row_to_verdict, verdict_values

ODD = 'Ünïcode "quoted" back\\slash\ttab\nnewline \x01 \u2028 \ud83c\udf0d 東京'


def test_refs_and_answers_are_the_json_text_of_dump_json() -> None:
    verdicts = [
        Verdict(
            "atomic", "A>B", "t1", True, (("A>B/t1", 0), ("A>B/t2", 0)), (Answer.YES, Answer.NO)
        ),
        Verdict(
            "ontological", f"{ODD}>x", None, False, ((f"{ODD}/t1", 3),), (Answer.INVALID,), ODD
        ),
        Verdict("sequential_intra", "r", "t2", False, (), (), ""),
    ]
    for verdict in verdicts:
        values = verdict_values("s", {"A>B": 5}, verdict)
        assert values[6] == dump_json([list(ref) for ref in verdict.refs])
        assert values[7] == dump_json([str(answer) for answer in verdict.answers])
        assert json.loads(values[6]) == [list(ref) for ref in verdict.refs]
        columns = (
            "session",
            "oracle",
            "relation",
            "relation_key",
            "template",
            "error",
            "refs",
            "answers",
            "detail",
        )
        assert row_to_verdict(dict(zip(columns, values, strict=True))) == verdict
