"""The question check (generate.check) on graphs built from Wikidata-shaped triples (a real
SPARQL endpoint on 127.0.0.1): a label with quotes, shared and self-named titles."""

from __future__ import annotations

from kontest_tui.generate.check import check_questions
from kontest_tui.generate.conversations import build_suite
from kontest_tui.generate.templates import load_template_set
from kontest_tui.kg.wikidata import build_graph


def checked(kg, name: str):  # noqa: ANN001, ANN201
    template_set = load_template_set(name, kg.domain)
    suite = build_suite(kg, template_set=template_set, template_ids=["t1", "t2", "t3"])
    return suite, check_questions(kg, suite.relations, template_set, ["t1", "t2", "t3"])


def test_wikidata_graphs_read_cleanly_under_the_natural_sets(endpoint, make_client) -> None:
    places = build_graph("places", ["Q27"], 3, client=make_client())
    suite, natural = checked(places, "natural")
    assert (natural.relations, natural.flagged_relations) == (22, 0)
    texts = {c.turns[0].text for c in suite.conversations if c.kind == "atomic"}
    assert 'Is Dún Laoghaire "Rathdown" in Leinster?' in texts
    _, paper = checked(places, "paper")
    assert paper.flagged_relations == 22  # "a" before every name
    assert set(paper.by_reason()) == {"article"}

    music = build_graph("music", ["Q5000"], 3, client=make_client())
    suite, natural = checked(music, "natural")
    assert (natural.relations, natural.flagged_relations) == (8, 0)
    texts = {c.turns[0].text for c in suite.conversations if c.kind == "atomic"}
    assert 'Does the album "Let It Be" have a song called "Let It Be"?' in texts
    _, paper = checked(music, "paper")
    # the stray comma of "the album, \"{parent}\"": 3 album->song relations x 3 templates
    assert {r: len(f) for r, f in paper.by_reason().items()} == {"punctuation": 9}
