"""Variant conversations from IPMs and the JSON-Boolean postfix parser."""

from __future__ import annotations

import itertools

import pytest

from kontest_tui.domain.extras import VariantExtras
from kontest_tui.domain.records import Answer, Relation, TestKind
from kontest_tui.generate.ipm import ipm_for_query
from kontest_tui.generate.templates import load_template_set
from kontest_tui.generate.variants import (
    add_postfix,
    build_variant_conversations,
    parse_json_boolean,
    variants_for_ipm,
)
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from tests.support.records import extras_of


def kg() -> KnowledgeGraph:
    nodes = {
        "Q27": Node("Q27", "Ireland", ("Éire", "Republic of Ireland"), "country"),
        "Q1": Node("Q1", "Ulster", ("Cúige Uladh", "Ulaidh"), "province"),
    }
    return KnowledgeGraph("t", "places", nodes, [Edge("Q27", "Q1")])


REL = Relation("Q27>Q1", "Q27", "Q1", "contains", ("Q27", "Q1"))


def test_variants_cover_all_pairs_of_words() -> None:
    template = load_template_set("places").get("t1")
    ipm = ipm_for_query(kg(), REL, template, "places", realise=True)
    conversations = variants_for_ipm(ipm, strength=2, seed=1)
    assert len(conversations) == 9  # three 3-valued words: 3 x 3 is optimal
    first = conversations[0]
    assert first.id == "Q27>Q1/t1~v0" and first.label == "t1 v0"
    assert first.turns[0].text == "Does Ireland contain Ulster?"
    assert extras_of(first, VariantExtras).changed == {}
    assert all(c.test_kind is TestKind.VARIANT and c.kind == "atomic" for c in conversations)
    assert all(c.turns[0].template_id == "t1" and c.relation_id == "Q27>Q1" for c in conversations)
    rows = [extras_of(c, VariantExtras).row for c in conversations]
    names = extras_of(conversations[0], VariantExtras).parameters
    for a, b in itertools.combinations(range(len(names)), 2):
        want = {(x, y) for x in range(ipm.levels[a]) for y in range(ipm.levels[b])}
        assert {(r[a], r[b]) for r in rows} == want
    texts = {c.turns[0].text for c in conversations}
    assert any("Éire contain" in t for t in texts)  # the pair (Éire, contain) is covered
    assert len(texts) == 9


def test_limit_seed_and_postfix() -> None:
    ipm = ipm_for_query(kg(), REL, load_template_set("places").get("t2"), "places", realise=True)
    a = variants_for_ipm(ipm, seed=7, limit=4, postfix=True)
    b = variants_for_ipm(ipm, seed=7, limit=4, postfix=True)
    assert [c.turns[0].text for c in a] == [c.turns[0].text for c in b]
    assert len(a) == 4
    assert a[0].turns[0].text == "Is Ulster in Ireland? Return a JSON Boolean."
    assert extras_of(a[0], VariantExtras).answer_format == "json_boolean"


def test_build_variant_conversations_for_relations() -> None:
    conversations = build_variant_conversations(
        kg(), [REL], load_template_set("places"), ["t1", "t2"]
    )
    ids = [c.id for c in conversations]
    assert ids[0] == "Q27>Q1/t1~v0"
    assert "Q27>Q1/t2~v0" in ids
    assert len(ids) == len(set(ids))


def test_add_postfix() -> None:
    assert add_postfix("can you drink alcohol in public in denmark") == (
        "can you drink alcohol in public in denmark? Return a JSON Boolean."
    )
    assert add_postfix("Is it? ") == "Is it? Return a JSON Boolean."


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("True", Answer.YES),
        ("true", Answer.YES),
        (" false\n", Answer.NO),
        ("`true`", Answer.YES),
        ("```json\nfalse\n```", Answer.NO),
        ("True.", Answer.YES),
        ('"false"', Answer.NO),
        ('{"response":{"canDrinkAlc":true,"message":"Yes, you can"}}', Answer.INVALID),
        ("Yes", Answer.INVALID),
        ("undefined", Answer.INVALID),
        ("", Answer.INVALID),
        ("true false", Answer.INVALID),
        ("null", Answer.INVALID),
        ("1", Answer.INVALID),
    ],
)
def test_parse_json_boolean(text: str, answer: Answer) -> None:
    assert parse_json_boolean(text) is answer


def test_preview_variants_matches_the_variant_conversations() -> None:
    """The explorer's preview is the same covering array the VARIANT kind asks: row 0 the
    original words, one sentence per row, the levels of the IPM."""
    from kontest_tui.generate.variants import preview_variants

    template = load_template_set("places").get("t1")
    preview = preview_variants(kg(), REL, template, "places", strength=2, seed=1, realise=True)
    ipm = ipm_for_query(kg(), REL, template, "places", realise=True)
    asked = variants_for_ipm(ipm, strength=2, seed=1)
    assert preview.sentences == [c.turns[0].text for c in asked]
    assert preview.sentences[0] == "Does Ireland contain Ulster?"
    assert preview.levels == tuple(ipm.levels) and len(preview.rows) == 9
    assert preview.parameters == [parameter.word for parameter in ipm.parameters]
    assert all(len(row) == len(preview.parameters) for row in preview.rows)
