"""Property checks: filling never re-substitutes a label, parsing never fails on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kontest_tui.domain.answers import clean_text, parse_answer
from kontest_tui.domain.records import Answer
from kontest_tui.generate.templates import clean_label, fill_template

labels = st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["{child}", "{parent}", "{{", "}}", "{", "}", "\\", "%s", "{0}", "a\nb", '"q"']
)


@settings(max_examples=300, deadline=None)
@given(parent=labels, child=labels)
def test_fill_inserts_labels_literally(parent: str, child: str) -> None:
    filled = fill_template("<{parent}|{child}>", parent, child)
    assert filled == f"<{clean_label(parent)}|{clean_label(child)}>"
    assert "\n" not in clean_label(parent)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300))
def test_parse_is_total_and_clean_text_has_no_escapes(text: str) -> None:
    assert parse_answer(text) in (Answer.YES, Answer.NO, Answer.INVALID)
    cleaned = clean_text(text)
    assert "\x1b" not in cleaned and "\r" not in cleaned
    assert parse_answer("Yes " + text) is Answer.YES
