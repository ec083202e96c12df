"""The curation evidence per template and per varied word (oracles.evidence) on a hand-made
relation whose every count is worked out below."""

from __future__ import annotations

from kontest_tui.domain.extras import VariantExtras
from kontest_tui.domain.records import (
    Answer,
    Conversation,
    Query,
    Relation,
    Response,
    TestKind,
    Verdict,
)
from kontest_tui.oracles.coverage import compute_gap
from kontest_tui.oracles.evidence import cut_answers, evidence_json, sort_rows

R = "p>c"
RELATION = Relation(R, "p", "c", "contains", ("p", "c"))


def kontest(cid: str, *templates: str) -> Conversation:
    return Conversation(
        id=f"{R}/{cid}",
        relation_id=R,
        kind="atomic" if len(templates) == 1 else "sequential",
        label=cid,
        turns=tuple(Query(R, template, f"{template}?") for template in templates),
    )


def variant(row: int, changed: dict[str, str]) -> Conversation:
    return Conversation(
        id=f"{R}/t1~v{row}",
        relation_id=R,
        kind="atomic",
        label=f"t1 v{row}",
        turns=(Query(R, "t1", f"t1 variant {row}?"),),
        test_kind=TestKind.VARIANT,
        extras=VariantExtras(variant=row, changed=changed),
    )


CONVERSATIONS = [
    kontest("t1", "t1"),
    kontest("t2", "t2"),
    kontest("t1+t2", "t1", "t2"),
    kontest("t2+t1", "t2", "t1"),
    variant(0, {}),
    variant(1, {"w3:have": "contain"}),
    variant(2, {"parent": "P-alias", "w3:have": "contain"}),
    variant(3, {"parent": "P-alias"}),
]
REPLIES = {  # (conversation, turn) -> (reply, how it reads, why it stopped)
    (f"{R}/t1", 0): ("Yes", Answer.YES, None),
    (f"{R}/t2", 0): ("No", Answer.NO, None),
    (f"{R}/t1+t2", 0): ("Yes", Answer.YES, None),
    (f"{R}/t1+t2", 1): ("I don't know.", Answer.INVALID, None),  # a refusal
    (f"{R}/t2+t1", 0): ("No", Answer.NO, None),
    (f"{R}/t2+t1", 1): ("Maybe, let me think about", Answer.CUT, "length"),  # cut
    (f"{R}/t1~v0", 0): ("Yes", Answer.YES, None),
    (f"{R}/t1~v1", 0): ("No", Answer.NO, None),  # flips against v0
    (f"{R}/t1~v2", 0): ("Yes", Answer.YES, None),
    (f"{R}/t1~v3", 0): ("I don't know", Answer.INVALID, None),  # a refusal, not compared
}
RESPONSES = {
    key: Response(key[0], key[1], raw, answer, stopped=stopped)
    for key, (raw, answer, stopped) in REPLIES.items()
}
VERDICTS = [
    # Q1 yes vs Q2 no: an error both templates take part in
    Verdict("atomic", R, None, True, ((f"{R}/t1", 0), (f"{R}/t2", 0)), (Answer.YES, Answer.NO)),
    # v1 against v0: t1 and the word have -> contain (v0 changed nothing)
    Verdict("variant", R, "t1", True, ((f"{R}/t1~v0", 0), (f"{R}/t1~v1", 0)), ()),
    Verdict("variant", R, "t1", False, ((f"{R}/t1~v0", 0), (f"{R}/t1~v2", 0)), ()),
    Verdict("ontological", R, "t1", True, ((f"{R}/t1", 0),), ()),
]


def test_every_count_of_a_hand_made_relation() -> None:
    cut = cut_answers(RESPONSES)
    assert cut == {(f"{R}/t2+t1", 1)}
    # a cut answer is no answer to grade (results.evaluate.split_answers leaves it out)
    answers = {key: r.answer for key, r in RESPONSES.items() if key not in cut}
    raw = {key: r.raw for key, r in RESPONSES.items() if key not in cut}
    gap = compute_gap([RELATION], CONVERSATIONS, answers)
    evidence = evidence_json(
        [RELATION],
        CONVERSATIONS,
        answers,
        raw,
        VERDICTS,
        gap,
        cut=cut,
        labels=lambda nodes: {node: "Pville" for node in nodes if node == "p"},
        asked=(TestKind.KONTEST, TestKind.VARIANT),
    )
    # t1: Q1, A's first turn, B's second turn and four variants = 7 questions; invalid: v3's
    # refusal; cut (apart from invalid): B's second turn; errors: the atomic one, v1's, the ontological one;
    # flips: v1 of v1, v2 compared (v3 invalid); its atomic answer is yes: gap 0.
    # t2: Q2, A's second turn (a refusal), B's first turn; the atomic error; Q2 said no: gap 1.
    assert evidence["templates"] == [
        {
            "template": "t1",
            "questions": 7,
            "invalid": 1,
            "refusals": 1,
            "cut": 1,
            "errors": 3,
            "flips": 1,
            "compared": 2,
            "gap": 0,
        },
        {
            "template": "t2",
            "questions": 3,
            "invalid": 1,
            "refusals": 1,
            "cut": 0,
            "errors": 1,
            "flips": 0,
            "compared": 0,
            "gap": 1,
        },
    ]
    # have -> contain: v1 (no, a flip and v1's error) and v2 (yes); p -> P-alias: v2 (yes,
    # compared, no flip) and v3 (a refusal). Equal trouble (1 each): the flip goes first.
    assert evidence["words"] == [
        {
            "word": "have",
            "value": "contain",
            "entity": None,
            "questions": 2,
            "invalid": 0,
            "refusals": 0,
            "cut": 0,
            "errors": 1,
            "flips": 1,
            "compared": 2,
            "gap": 1,
        },
        {
            "word": "Pville",
            "value": "P-alias",
            "entity": "p",
            "questions": 2,
            "invalid": 1,
            "refusals": 1,
            "cut": 0,
            "errors": 0,
            "flips": 0,
            "compared": 1,
            "gap": 1,
        },
    ]
    by_name = sort_rows(evidence["words"], "name")
    assert [row["word"] for row in by_name] == ["Pville", "have"]
    by_invalid = sort_rows(evidence["words"], "invalid")
    assert [row["word"] for row in by_invalid] == ["Pville", "have"]


def test_a_failed_turn_or_a_yes_cut_short_is_not_a_cut_answer() -> None:
    key = ("c", 0)
    assert cut_answers({key: Response("c", 0, "Yes, bec", Answer.YES, stopped="length")}) == set()
    failed = Response("c", 0, "", Answer.INVALID, "timed out", stopped="timeout")
    assert cut_answers({key: failed}) == set()
    assert cut_answers({key: Response("c", 0, "Wel", Answer.CUT, stopped="length")}) == {key}


def test_only_the_kinds_handed_in_are_counted() -> None:
    # By default KONTEST's questions only (a streamed session asks nothing else): t1 is Q1,
    # A's first turn and B's second (cut) = 3 questions, no variant, so no flip and no word.
    answers = {key: r.answer for key, r in RESPONSES.items()}
    raw = {key: r.raw for key, r in RESPONSES.items()}
    evidence = evidence_json([RELATION], CONVERSATIONS, answers, raw, VERDICTS, None)
    t1 = next(row for row in evidence["templates"] if row["template"] == "t1")
    assert (t1["questions"], t1["flips"], t1["compared"]) == (3, 0, 0)
    assert evidence["words"] == []
