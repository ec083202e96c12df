"""IPMs of the sample templates: curated + WordNet synonyms, aliases, fixed words, pins and bans."""

from __future__ import annotations

import pytest

from kontest_tui.domain.records import Relation
from kontest_tui.generate.ipm import ipm_for_query, ipm_for_text, tokenize
from kontest_tui.generate.synonyms import (
    ban_value,
    load_synonym_lists,
    pin_value,
    unpin_value,
    user_synonyms_path,
    wordnet_synonyms,
)
from kontest_tui.generate.templates import Template, load_template_set
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node

# Drifted senses that must never be offered for the sample templates' words.
DRIFTED = {
    "capital letter",
    "have got",
    "experience",
    "receive",
    "feature",
    "vocal",
    "strain",
    "execute",
    "executed",
    "relinquished",
    "freed",
    "telephoned",
    "phoned",
    "placed",
    "turned",
    "let go",
    "turn up",
    "record album",
}


def ireland_kg() -> KnowledgeGraph:
    nodes = {
        "Q27": Node("Q27", "Ireland", ("Éire", "Republic of Ireland", "ireland"), "country"),
        "Q1": Node("Q1", "Ulster", ("Cúige Uladh",), "province"),
    }
    return KnowledgeGraph("t", "places", nodes, [Edge("Q27", "Q1")])


REL = Relation("Q27>Q1", "Q27", "Q1", "contains", ("Q27", "Q1"))


def test_tokenize_is_lossless() -> None:
    text = 'Does {parent} have a song called "{child}"?'
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert "{parent}" in tokens and "{child}" in tokens and "called" in tokens


def test_places_t1_ipm() -> None:
    templates = load_template_set("paper", "places")
    ipm = ipm_for_query(ireland_kg(), REL, templates.get("t1"), "places")
    assert ipm.text == "Does Ireland have a Ulster?"
    by_word = {p.word: p for p in ipm.parameters}
    assert by_word["Does"].values == ("Does",) and by_word["Does"].kind == "fixed"
    # "a" is not varied: "one Ulster" or "any Ulster" asks something else.
    assert by_word["a"].kind == "stop" and by_word["a"].values == ("a",)
    assert by_word["have"].values == ("have", "contain", "include")
    assert by_word["have"].sources == ("original", "curated", "curated")
    # Entity slots take KG aliases; "ireland" is a near-duplicate of "Ireland" and dropped.
    assert by_word["Ireland"].values == ("Ireland", "Éire", "Republic of Ireland")
    assert by_word["Ireland"].kind == "parent"
    assert by_word["Ulster"].values == ("Ulster", "Cúige Uladh")
    assert ipm.levels == (1, 3, 3, 1, 2)
    values = ["Does", "Éire", "contain", "a", "Cúige Uladh"]
    assert ipm.render(values) == "Does Éire contain a Cúige Uladh?"


def test_a_realised_ipm_varies_the_words_said_in_context() -> None:
    """A realised set's IPM is built on the realised question: the slots hold the words said
    for each node ("the Grand Duchy of Luxembourg" takes "the" as the label's phrase does), a
    row renders a realised question, and the alias that is the label less its generic word
    (Canton of Capellen -> Capellen, the commune) is not offered."""
    from kontest_tui.generate.conversations import build_suite
    from kontest_tui.generate.variants import build_variant_conversations
    from kontest_tui.kg.io import load_graph

    kg = load_graph("places")
    suite = build_suite(kg)
    relation = next(
        r for r in suite.relations if r.id == "luxembourg>luxembourg.canton-of-capellen"
    )
    ipm = ipm_for_query(kg, relation, suite.template_set.get("t1"), "places", realise=True)
    assert ipm.text == suite.conversations[0].turns[0].text
    assert ipm.text == "Does Luxembourg contain the Canton of Capellen?"
    varying = {p.word: p.values for p in ipm.parameters if len(p.values) > 1}
    assert varying == {
        "Luxembourg": ("Luxembourg", "the Grand Duchy of Luxembourg"),
        "contain": ("contain", "comprise", "encompass"),
    }
    assert {p.word: p.values for p in ipm.parameters}["the Canton of Capellen"] == (
        "the Canton of Capellen",
    )
    rows = build_variant_conversations(kg, [relation], suite.template_set, ["t1"], strength=2)
    assert len(rows) == 6  # 2 x 3: every pair of the two words' values
    assert "Does the Grand Duchy of Luxembourg contain the Canton of Capellen?" in [
        c.turns[0].text for c in rows
    ]


def test_a_sample_music_question_varies_by_the_artists_alias() -> None:
    """The music sample's curated aliases (scripts/data/aliases_music.tsv) reach the IPM:
    "The Weeknd" varies with his birth names, and the t=2 array asks both names."""
    from kontest_tui.generate.conversations import build_suite
    from kontest_tui.generate.variants import build_variant_conversations
    from kontest_tui.kg.io import load_graph

    kg = load_graph("music")
    suite = build_suite(kg)
    relation = next(r for r in suite.relations if r.id == "the-weeknd>the-weeknd.after-hours")
    ipm = ipm_for_query(kg, relation, suite.template_set.get("t1"), "music")
    by_word = {p.word: p for p in ipm.parameters}
    # both sourced names in scripts/data/aliases_music.tsv (birth name, short birth name)
    assert by_word["The Weeknd"].values == ("The Weeknd", "Abel Makkonen Tesfaye", "Abel Tesfaye")
    assert by_word["The Weeknd"].sources == ("original", "alias", "alias")
    rows = build_variant_conversations(kg, [relation], suite.template_set, ["t1"], strength=2)
    texts = [c.turns[0].text for c in rows]
    assert texts[0] == 'Does The Weeknd have an album called "After Hours"?'
    assert any(text.startswith("Does Abel Tesfaye ") for text in texts)
    assert any(text.startswith("Does The Weeknd ") for text in texts[1:])


def test_wordnet_synonyms_inflected_and_single_word() -> None:
    assert wordnet_synonyms("called", "v") == ("named",)
    assert "situated" in wordnet_synonyms("located", "v", senses=2)
    assert wordnet_synonyms("capital", "n") == ()  # only "working_capital": multi-word


def test_inflection_of_consonant_y_lemmas() -> None:
    from kontest_tui.generate.synonyms import _inflect

    assert _inflect("unify", "united", "unite") == "unified"
    assert _inflect("unify", "unites", "unite") == "unifies"
    assert _inflect("obey", "heeded", "heed") == "obeyed"
    assert _inflect("contain", "has", "ha") == "contains"
    assert _inflect("locate", "placed", "place") == "located"


def test_sample_templates_have_no_drifted_synonyms() -> None:
    for domain in ("places", "music"):
        templates = load_template_set(domain)
        kg = ireland_kg()
        for template in templates.templates:
            rel = Relation("Q27>Q1", "Q27", "Q1", next(iter(template.texts)), ("Q27", "Q1"))
            ipm = ipm_for_query(kg, rel, template, domain, max_values=6, senses=3)
            offered = {v.lower() for p in ipm.parameters for v in p.values[1:] if p.kind == "word"}
            assert not offered & DRIFTED, (domain, template.id, offered & DRIFTED)
            for p in ipm.parameters:
                assert len({v.lower() for v in p.values}) == len(p.values)


def test_wordnet_used_when_no_curated_list() -> None:
    template = Template(
        "tx",
        {"contains": "Is {child} a district located in {parent}?"},
        pos={"district": "n", "located": "v"},
    )
    ipm = ipm_for_query(ireland_kg(), REL, template, "nodomain", max_values=3, senses=2)
    by_word = {p.word: p for p in ipm.parameters}
    assert by_word["located"].values == ("located", "situated")
    assert by_word["located"].sources == ("original", "wordnet")
    assert by_word["district"].values[0] == "district"


def test_pin_and_ban(isolated_home) -> None:
    templates = load_template_set("paper", "places")
    ban_value("places", "have", "contain")
    pin_value("places", "have", "own")
    pin_value("places", "Ireland", "Hibernia")
    path = user_synonyms_path("places")
    assert path.is_file() and str(isolated_home) in str(path)
    lists = load_synonym_lists("places")
    assert lists.bans == {"have": ["contain"]}
    ipm = ipm_for_query(ireland_kg(), REL, templates.get("t1"), "places")
    by_word = {p.word: p for p in ipm.parameters}
    assert by_word["have"].values == ("have", "own", "include")
    assert by_word["have"].sources[1] == "pinned"
    assert by_word["Ireland"].values[:2] == ("Ireland", "Hibernia")
    # Pinning a banned value lifts the ban; unpinning removes it again.
    pin_value("places", "have", "contain")
    assert load_synonym_lists("places").bans == {}
    unpin_value("places", "have", "contain")
    assert load_synonym_lists("places").pins["have"] == ["own"]


def test_ipm_for_query_and_text() -> None:
    places, paper = load_template_set("places"), load_template_set("paper", "places")
    ipms = [
        ipm_for_query(ireland_kg(), REL, places.get(t), "places", realise=places.realise)
        for t in ("t1", "t2", "t3")
    ]
    assert [i.template_id for i in ipms] == ["t1", "t2", "t3"]
    assert ipms[1].text == "Is Ulster in Ireland?"
    paper_t2 = ipm_for_query(ireland_kg(), REL, paper.get("t2"), "places", realise=paper.realise)
    assert paper_t2.text == "Is there a Ulster in Ireland?"
    free = ipm_for_text("can you drink alcohol in public in denmark", "q1")
    assert free.text == "can you drink alcohol in public in denmark"
    assert free.levels[0] == 1 and free.levels[1] == 1  # stop words
    assert max(free.levels) > 1


def test_bad_user_file(isolated_home) -> None:
    path = user_synonyms_path("places")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[pins]\nhave = 3\n", encoding="utf-8")
    from kontest_tui.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="pins.have"):
        load_synonym_lists("places")
