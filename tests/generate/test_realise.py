"""Realisation (generate/realise.py): labels said as in context, articles and agreement, titles
quoted cleanly; hand-made graphs whose right questions were written out by hand."""

from __future__ import annotations

import pytest

from kontest_tui.domain.records import Relation
from kontest_tui.generate.conversations import build_suite
from kontest_tui.generate.realise import (
    Realiser,
    parse_name,
    realise_question,
    variant_aliases,
)
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.templates import load_template_set
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node


def graph(nodes: list[tuple[str, str, str]], edges: list[tuple[str, str]], domain: str = "places"):
    """A KG of (id, label, type) nodes and (parent, child) edges."""
    return KnowledgeGraph(
        "hand",
        domain,
        {node_id: Node(node_id, label, type=kind) for node_id, label, kind in nodes},
        [Edge(parent, child) for parent, child in edges],
    )


def questions(kg: KnowledgeGraph, template_set: str | None = None) -> dict[str, list[str]]:
    """Each relation's id -> its questions under t1 and t2."""
    suite = build_suite(kg, template_set=template_set)
    asked: dict[str, list[str]] = {}
    for conversation in suite.conversations:
        if conversation.kind == "atomic":
            asked.setdefault(conversation.relation_id, []).append(conversation.turns[0].text)
    return asked


@pytest.mark.parametrize(
    ("label", "base", "qualifier", "takes_the", "generic", "plural"),
    [
        ("Ulster", "Ulster", "", False, False, False),
        ("United States of America", "United States of America", "", True, False, False),
        ("Netherlands", "Netherlands", "", True, False, False),
        ("Canton of Capellen", "Canton of Capellen", "", True, False, False),
        ("Central Region", "Central Region", "", True, True, False),
        ("South West", "South West", "", True, True, False),
        ("Central Singapore", "Central Singapore", "", False, False, False),
        ("North Denmark Region", "North Denmark Region", "", True, False, False),
        ("Southern Denmark", "Southern Denmark", "", False, False, False),
        ("Hüslers (AI-1755)", "Hüslers", "", False, False, False),
        ("Queenstown, Singapore", "Queenstown", "Singapore", False, False, False),
        ("Ballintra (Ballyshannon)", "Ballintra", "Ballyshannon", False, False, False),
        ("Svalbard (Arctic Region)", "Svalbard", "", False, False, False),
        ("Wales [Cymru GB-CYM]", "Wales", "", False, False, False),
        ("Bristol, City of", "City of Bristol", "", True, False, False),
        ("Durham, County", "County Durham", "", False, False, False),
        ("Vale of Glamorgan, The [Bro Morgannwg GB-BMG]", "Vale of Glamorgan", "", True, False, False),
        ("Bournemouth, Christchurch and Poole", "Bournemouth, Christchurch and Poole", "", False, False, False),
        ("Virgin Islands, U.S.", "Virgin Islands", "United States", True, False, True),
        ("Orkney Islands", "Orkney Islands", "", True, False, True),
        ("La Union", "La Union", "", False, False, False),
        ("The Hague", "The Hague", "", False, False, False),
    ],
)  # fmt: skip
def test_a_label_said_with_no_context(
    label: str, base: str, qualifier: str, takes_the: bool, generic: bool, plural: bool
) -> None:
    name = parse_name(label)
    assert (name.base, name.qualifier, name.takes_the, name.generic, name.plural) == (
        base,
        qualifier,
        takes_the,
        generic,
        plural,
    )


def test_the_before_names_that_take_it_and_no_article_before_a_name() -> None:
    kg = graph(
        [("us", "United States of America", "country"), ("ks", "Kansas", "region")],
        [("us", "ks")],
    )
    assert questions(kg)["us>ks"] == [
        "Does the United States of America contain Kansas?",
        "Is Kansas in the United States of America?",
    ]
    assert questions(kg, "paper")["us>ks"] == [
        "Does United States of America have a Kansas?",
        "Is there a Kansas in United States of America?",
    ]


def test_a_generic_name_gets_its_country_unless_the_question_names_it() -> None:
    kg = graph(
        [
            ("sg", "Singapore", "country"),
            ("cr", "Central Region", "region"),
            ("qt", "Queenstown, Singapore", "district"),
            ("hp", "Haw Par Villa", "locality"),
        ],
        [("sg", "cr"), ("cr", "qt"), ("qt", "hp")],
    )
    asked = questions(kg)
    assert asked["sg>cr"] == [
        "Does Singapore contain the Central Region?",
        "Is the Central Region in Singapore?",
    ]
    assert asked["cr>hp"] == [
        "Does the Central Region of Singapore contain Haw Par Villa?",
        "Is Haw Par Villa in the Central Region of Singapore?",
    ]
    # the qualifier Singapore: dropped where the other node gives it, kept where not
    assert asked["sg>qt"] == ["Does Singapore contain Queenstown?", "Is Queenstown in Singapore?"]
    assert asked["cr>qt"][1] == "Is Queenstown in the Central Region of Singapore?"
    assert asked["qt>hp"][1] == "Is Haw Par Villa in Queenstown, Singapore?"


def test_ids_are_dropped() -> None:
    kg = graph(
        [("ch", "Switzerland", "country"), ("hu", "Hüslers (AI-1755)", "locality")],
        [("ch", "hu")],
    )
    assert questions(kg)["ch>hu"] == [
        "Does Switzerland contain Hüslers?",
        "Is Hüslers in Switzerland?",
    ]


def test_equal_names_told_apart_by_type_and_no_place_asked_about_itself() -> None:
    kg = graph(
        [
            ("lu", "Luxembourg", "country"),
            ("gc", "Garnich", "commune"),
            ("gv", "Garnich", "village"),
            ("cl", "Luxembourg", "canton"),
        ],
        [("lu", "gc"), ("gc", "gv"), ("lu", "cl")],
    )
    asked = questions(kg)
    assert asked["lu>gc"][0] == "Does Luxembourg contain the commune of Garnich?"
    assert asked["lu>gv"][0] == "Does Luxembourg contain the village of Garnich?"
    assert asked["gc>gv"] == [
        "Does the commune of Garnich contain the village of Garnich?",
        "Is the village of Garnich in the commune of Garnich?",
    ]
    # the country keeps its bare name; the canton, named like it, says its type
    assert asked["lu>cl"][1] == "Is the canton of Luxembourg in Luxembourg?"
    texts = [text for pair in asked.values() for text in pair]
    assert len(texts) == len(set(texts))  # no two relations ask the same text


def test_a_plural_name_agrees_with_its_verb() -> None:
    kg = graph(
        [("uk", "United Kingdom", "country"), ("or", "Orkney Islands", "council area")],
        [("uk", "or")],
    )
    assert questions(kg)["uk>or"] == [
        "Does the United Kingdom contain the Orkney Islands?",
        "Are the Orkney Islands in the United Kingdom?",
    ]


def test_titles_in_quotes_end_the_question_and_never_carry_a_stray_comma() -> None:
    kg = graph(
        [
            ("be", "Billie Eilish", "artist"),
            ("al", "When We All Fall Asleep, Where Do We Go?", "album"),
            ("so", 'I Said "Love"', "song"),
        ],
        [("be", "al"), ("al", "so")],
        domain="music",
    )
    asked = questions(kg)
    assert asked["be>al"] == [
        'Does Billie Eilish have an album called "When We All Fall Asleep, Where Do We Go?"',
        'Is "When We All Fall Asleep, Where Do We Go?" an album by Billie Eilish?',
    ]
    assert asked["al>so"] == [
        'Does the album "When We All Fall Asleep, Where Do We Go?" have a song called '
        "\"I Said 'Love'\"?",
        'Is "I Said \'Love\'" a song on the album "When We All Fall Asleep, Where Do We Go?"',
    ]
    # the papers' set keeps the papers' texts, stray comma and `?"?` included
    assert questions(kg, "paper")["be>al"][0].endswith('Where Do We Go?"?')


def test_articles_before_a_slot_agree_with_the_words_put_in_it() -> None:
    """A realised user template that writes an article before its slots: none before a name,
    "the" said once, a/an by sound before a common noun."""
    kg = graph(
        [
            ("f", "fruit", ""),
            ("a", "apple", ""),
            ("u", "unicorn fruit", ""),
            ("n", "Netherlands", ""),
        ],
        [("f", "a"), ("f", "u"), ("n", "f")],
        domain="food",
    )
    places = load_template_set("places")
    text = "Does {parent} have a {child}?"
    realiser = Realiser(kg)
    relations = {relation.id: relation for relation in extract_relations(kg, template_set=places)}
    said = {
        key: realise_question(realiser, relations[key], "t1", text).text
        for key in ("f>a", "f>u", "n>f", "n>a")
    }
    assert said == {
        "f>a": "Does fruit have an apple?",
        "f>u": "Does fruit have a unicorn fruit?",
        "n>f": "Does the Netherlands have a fruit?",
        "n>a": "Does the Netherlands have an apple?",
    }
    name = Relation("x", "n", "n", "contains", ("n",))
    assert realise_question(realiser, name, "t2", "Is there a {child} in {parent}?").text == (
        "Is there the Netherlands in the Netherlands?"
    )


def test_variant_aliases_leave_out_the_label_less_its_generic_word() -> None:
    kg = KnowledgeGraph(
        "hand",
        "places",
        {
            "ie": Node("ie", "Ireland", ("Éire",), "country"),
            "dl": Node("dl", "County Donegal", ("Donegal", "Tír Chonaill"), "county"),
        },
        [Edge("ie", "dl")],
    )
    assert variant_aliases(kg, "dl") == ("Tír Chonaill",)
    assert variant_aliases(kg, "ie") == ("Éire",)
