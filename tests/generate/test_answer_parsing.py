"""Answer parsing: a table of real-looking replies, escape codes, and very long replies."""

from __future__ import annotations

import pytest

from kontest_tui.domain.answers import clean_text, parse_answer
from kontest_tui.domain.records import Answer

YES, NO, INVALID = Answer.YES, Answer.NO, Answer.INVALID

TABLE = [
    ("Yes", YES),
    ("yes", YES),
    ("Yes.", YES),
    ("YES!", YES),
    ("  \n Yes", YES),
    ("Yes, but only since 2014.", YES),
    ("Yes - Kinawley is a village in County Fermanagh.", YES),
    ("**Yes**", YES),
    ("*Yes*, it does.", YES),
    ("> Yes", YES),
    ('"Yes"', YES),
    ("`yes`", YES),
    ("[Yes]", YES),
    ("# Yes", YES),
    ("- Yes.", YES),
    ("“Yes.”", YES),
    ("<b>Yes</b>", YES),
    ("\x1b[1mYes\x1b[0m", YES),
    ("<think>\nIs Ulster in Ireland? No doubt.\n</think>\n\nYes.", YES),
    ("No", NO),
    ("No.", NO),
    ("no,", NO),
    ("**No**", NO),
    ("No, Garnich is in Luxembourg.", NO),
    ("NO", NO),
    ("'No'", NO),
    ("__No__ it does not", NO),
    ("\tNo!\n", NO),
    ("", INVALID),
    ("   ", INVALID),
    ("I don't know.", INVALID),
    ("I'm not sure.", INVALID),
    ("Not sure", INVALID),
    ("Nope", INVALID),
    ("Yeah", INVALID),
    ("Yesterday it was.", INVALID),
    ("None of them.", INVALID),
    ("No-one knows.", INVALID),
    ("Ja", INVALID),
    ("Oui", INVALID),
    ("Sí", INVALID),
    ("Nein", INVALID),
    ("Kinawley is in County Fermanagh, so yes.", INVALID),
    ("As an AI language model, I cannot answer that.", INVALID),
    ("True", INVALID),
    ("Answer: Yes", INVALID),
    ("Yep.", INVALID),
    ("<think>still thinking about it", INVALID),
]


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_parse_table(text: str, expected: Answer) -> None:
    assert parse_answer(text) is expected


def test_table_is_large_and_mixed() -> None:
    assert len(TABLE) >= 30
    assert {expected for _, expected in TABLE} == {YES, NO, INVALID}


def test_none_is_invalid() -> None:
    assert parse_answer(None) is INVALID


def test_only_the_start_of_a_huge_reply_matters() -> None:
    assert parse_answer("No. " + "x" * 1_000_000) is NO
    assert parse_answer("Well " * 250_000 + "yes") is INVALID
    assert parse_answer(" " * 100 + "yes " + "z" * 1_000_000) is YES


def test_clean_text_removes_escapes_and_controls() -> None:
    raw = "\x1b[31mYes\x1b[0m\r\nsee \x1b]8;;http://x\x07link\x1b]8;;\x07\tok\x00\x07\x1bc!"
    assert clean_text(raw) == "Yes\nsee link\tok!"
    assert clean_text("plain\ntext\twith tab") == "plain\ntext\twith tab"
    assert clean_text("\x9b2Jcleared") == "cleared"
