"""Query text and domain files: validated ids only, standard SPARQL with explicit prefixes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kontest_tui.errors import InvalidInputError
from kontest_tui.kg.domains import Domain, DomainError, Level, list_domains, load_domain
from kontest_tui.kg.sparql import (
    build_children_query,
    build_labels_query,
    qid_from_iri,
    validate_lang,
    validate_qid,
)


def test_places_children_query_text():
    level = load_domain("places").levels[0]
    query = build_children_query(level, ["Q27", "Q183"], 1000)
    assert "PREFIX wd: <http://www.wikidata.org/entity/>" in query
    assert "PREFIX wdt: <http://www.wikidata.org/prop/direct/>" in query
    assert "VALUES ?parent { wd:Q27 wd:Q183 }" in query
    assert "?child wdt:P131 ?parent ." in query
    assert "?child wdt:P31/wdt:P279* wd:Q56061 ." in query
    assert "FILTER NOT EXISTS { ?child wdt:P576 ?excludedP576 . }" in query
    assert query.rstrip().endswith("LIMIT 1000")
    assert "wikibase:label" not in query  # no service extension: runs on any SPARQL 1.1 store


def test_several_classes_use_a_values_block():
    level = Level("P361", instance_of=("Q7366", "Q134556"))
    query = build_children_query(level, ["Q1"], 10)
    assert "VALUES ?class { wd:Q7366 wd:Q134556 }" in query
    assert "?child wdt:P31/wdt:P279* ?class ." in query


def test_labels_query_text():
    query = build_labels_query(["Q1", "Q2"], "pt-br", 50)
    assert "VALUES ?item { wd:Q1 wd:Q2 }" in query
    assert "rdfs:label" in query and "skos:altLabel" in query
    assert 'FILTER(LANG(?text) = "pt-br")' in query


@given(st.text(max_size=12))
def test_only_qids_pass_validation(text):
    try:
        qid = validate_qid(text)
    except InvalidInputError:
        return
    assert qid[0] == "Q" and qid[1:].isdigit() and qid[1] != "0" and qid.isascii()


@given(st.text(max_size=12))
def test_only_safe_language_tags_pass(text):
    try:
        lang = validate_lang(text)
    except InvalidInputError:
        return
    assert set(lang) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")


def test_query_builders_refuse_unvalidated_ids():
    with pytest.raises(InvalidInputError):
        build_children_query(Level("P131"), ["Q1 } DELETE {"], 10)
    with pytest.raises(InvalidInputError):
        build_labels_query(["Q1"], 'en") } #', 10)


def test_qid_from_iri():
    assert qid_from_iri("http://www.wikidata.org/entity/Q27") == "Q27"
    assert qid_from_iri("http://www.wikidata.org/entity/L1") is None
    assert qid_from_iri("http://example.org/Q27") is None


def node_type_at(domain: Domain, depth: int) -> str:
    level = domain.level(depth)
    assert level is not None, f"no level at depth {depth}"
    return level.node_type(depth)


def test_shipped_domains():
    assert list_domains() == ["music", "places"]
    places = load_domain("places")
    assert places.seed_type == "country" and places.templates == "places"
    assert [node_type_at(places, d) for d in (1, 2, 3, 4, 7)] == [
        "region",
        "district",
        "municipality",
        "locality",
        "locality",
    ]
    music = load_domain("music")
    assert [lvl.property for lvl in music.levels] == ["P175", "P361"]
    assert music.level(3) is None
    assert [node_type_at(music, d) for d in (1, 2)] == ["album", "song"]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('name = "x"\n', "levels"),
        ('[[levels]]\nproperty = "131"\n', "property"),
        ('[[levels]]\nproperty = "P131"\ndirection = "up"\n', "direction"),
        ('[[levels]]\nproperty = "P131"\ninstance_of = ["Q1 }"]\n', "instance_of"),
        ('[[levels]]\nproperty = "P131"\nexclude_properties = ["P5 ."]\n', "exclude_properties"),
        ("[[levels]\n", "cannot read"),
    ],
)
def test_bad_domain_files(tmp_path, toml, message):
    path = tmp_path / "bad.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(DomainError, match=message):
        load_domain(path)


def test_unknown_domain_name():
    with pytest.raises(DomainError, match="unknown domain 'sports'.*music, places"):
        load_domain("sports")
