"""The question check (generate/check.py, `kontest generate --check`): each rule on a hand-made
graph where it must flag, and the same graph asked by the natural set where it must not; the
bundled samples under both sets."""

from __future__ import annotations

import json

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.generate.check import REASONS, QuestionCheck, check_questions
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.templates import Template, TemplateSet, load_template_set
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import load_graph


def graph(nodes: list[tuple[str, str, str]], edges: list[tuple[str, str]], domain: str = "places"):
    return KnowledgeGraph(
        "hand",
        domain,
        {node_id: Node(node_id, label, type=kind) for node_id, label, kind in nodes},
        [Edge(parent, child) for parent, child in edges],
    )


def check(kg: KnowledgeGraph, template_set: TemplateSet | str | None = None) -> QuestionCheck:
    if not isinstance(template_set, TemplateSet):
        template_set = load_template_set(template_set or "natural", kg.domain)
    return check_questions(kg, extract_relations(kg, template_set=template_set), template_set)


def flagged(found: QuestionCheck) -> dict[str, set[str]]:
    """reason -> the relations it flags."""
    return {
        reason: {flag.relation_id for flag in flags} for reason, flags in found.by_reason().items()
    }


PLACES = graph(
    [
        ("us", "United States of America", "country"),
        ("ks", "Kansas", "region"),
        ("sg", "Singapore", "country"),
        ("cr", "Central Region", "region"),
        ("qt", "Queenstown, Singapore", "district"),
        ("hp", "Haw Par Villa (SG-01)", "locality"),
        ("lu", "Luxembourg", "country"),
        ("gc", "Garnich", "commune"),
        ("gv", "Garnich", "village"),
        ("uk", "United Kingdom", "country"),
        ("or", "Orkney Islands", "council area"),
    ],
    [
        ("us", "ks"),
        ("sg", "cr"),
        ("cr", "qt"),
        ("qt", "hp"),
        ("lu", "gc"),
        ("gc", "gv"),
        ("uk", "or"),
    ],
)


def test_each_rule_flags_the_papers_texts_on_a_hand_made_graph() -> None:
    found = check(PLACES, "paper")
    assert flagged(found) == {
        # every question puts "a" before a name; "Does Orkney Islands have" does not agree
        "article": {
            "us>ks", "sg>cr", "sg>qt", "sg>hp", "cr>qt", "cr>hp", "qt>hp",
            "lu>gc", "lu>gv", "gc>gv", "uk>or",
        },
        "the": {"us>ks", "sg>cr", "cr>qt", "cr>hp", "uk>or"},
        "qualifier": {"sg>qt", "cr>qt", "sg>hp", "cr>hp", "qt>hp"},
        "generic": {"cr>hp"},  # in cr>qt, "Queenstown, Singapore" names the country
        "duplicate": {"lu>gc", "lu>gv"},
        "self": {"gc>gv"},
        "shared": {"lu>gc", "lu>gv"},
    }  # fmt: skip
    assert found.relations == 11 and found.questions == 22
    assert found.flagged_relations == 11 and found.share == 1.0
    details = {flag.detail for flag in found.flags}
    assert "(SG-01)" in details  # the id left in "Haw Par Villa (SG-01)"
    assert "Singapore (the other place gives it)" in details
    assert "Central Region (in Singapore)" in details


def test_the_natural_set_asks_the_same_graph_cleanly() -> None:
    found = check(PLACES)
    assert found.flags == () and found.share == 0.0
    assert found.template_set == "places natural" and found.template_ids == ("t1", "t2")


def test_a_shared_label_the_types_cannot_tell_apart_stays_flagged() -> None:
    """Two villages named Garnich below one canton: realisation has no word to tell them
    apart, so the same question is asked twice and both rules say so."""
    kg = graph(
        [("c", "Capellen", "canton"), ("g1", "Garnich", "village"), ("g2", "Garnich", "village")],
        [("c", "g1"), ("c", "g2")],
    )
    assert flagged(check(kg)) == {"duplicate": {"c>g1", "c>g2"}, "shared": {"c>g1", "c>g2"}}


def test_punctuation_and_article_rules_read_the_template_text() -> None:
    texts = {
        "t1": 'Does the album, "{parent}" have a song called "{child}"?',
        "t2": 'Is "{child}" a album by {parent} ??',
    }
    odd = TemplateSet(
        "music",
        tuple(Template(template_id, {"artist->song": text}) for template_id, text in texts.items()),
        "artist->song",
    )
    kg = graph([("a", "Muse", "artist"), ("s", "Who Cares?", "song")], [("a", "s")], domain="music")
    found = check(kg, odd)
    details = sorted((flag.template_id, flag.reason, flag.detail) for flag in found.flags)
    assert details == [
        ("t1", "punctuation", '?"?'),
        ("t1", "punctuation", "a comma before a title"),
        ("t2", "article", '"a album"'),
        ("t2", "punctuation", "' ?'"),
    ]
    # the paper's own `?"?`: a title ending in "?" before the question's "?"
    paper = check(kg, "paper")
    assert {(flag.template_id, flag.detail) for flag in paper.flags} == {("t1", '?"?')}
    assert check(kg).flags == ()


def test_a_verb_that_does_not_agree_with_a_plural_name() -> None:
    plain = TemplateSet(
        "places",
        (
            Template("t1", {"contains": "Is {child} in {parent}?"}),
            Template("t2", {"contains": "Does {parent} contain {child}?"}),
        ),
        "contains",
    )
    kg = graph(
        [("uk", "United Kingdom", "country"), ("or", "Orkney Islands", "council area")],
        [("uk", "or")],
    )
    found = {(flag.template_id, flag.reason, flag.detail) for flag in check(kg, plain).flags}
    assert found == {
        ("t1", "article", "Is Orkney Islands"),
        ("t1", "the", "the Orkney Islands"),
        ("t1", "the", "the United Kingdom"),
        ("t2", "the", "the Orkney Islands"),
        ("t2", "the", "the United Kingdom"),
    }
    assert check(kg).flags == ()


@pytest.mark.parametrize(
    ("sample", "natural", "paper"),
    [("places", 0, 265), ("music", 0, 49), ("subdivisions", 0, 2494)],
)
def test_bundled_samples(sample: str, natural: int, paper: int) -> None:
    kg = load_graph(sample)
    assert check(kg).flagged_relations == natural
    assert check(kg, "paper").flagged_relations == paper


def test_generate_check_prints_a_report_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["generate", "--kg", "places", "--templates", "paper", "--check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Question check: places paper templates t1, t2, 265 relations")
    assert "Flagged: 265 of 265 relations (100.0%), 530 questions" in out
    assert "self-named pair (2 questions, 1 relation)" in out
    assert "  Is there a Garnich in Garnich?  [Garnich in Garnich]" in out
    assert run_cli(["generate", "--kg", "music", "--check", "--format", "jsonl"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["flagged_relations"] == 0 and report["relations"] == 146
    assert set(REASONS) >= set(report["reasons"])
