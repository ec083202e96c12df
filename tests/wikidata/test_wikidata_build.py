"""build_graph against a real SPARQL endpoint on 127.0.0.1: exact graphs, batching, cache, guards."""

from __future__ import annotations

import pytest

from kontest_tui.errors import InvalidInputError, WikidataError
from kontest_tui.kg.domains import load_domain
from kontest_tui.kg.io import dumps_graph, graph_to_dict, load_graph, save_graph
from kontest_tui.kg.wikidata import BuildProgress, MaxNodesError, build_graph, build_with_summary
from tests.support.sparql_local import LocalSparqlEndpoint, make_store

IRELAND_ALIASES = ("Republic of Ireland", "Éire")
DEPTH1_NODES = [
    ("Q27", "Ireland", IRELAND_ALIASES, "country"),
    ("Q20", "Munster", (), "region"),
    ("Q100", "Leinster", ("Laighin",), "region"),
    ("Q300", "Ulster", (), "region"),
]
DEPTH2_NODES = [
    ("Q2001", "County Cork", (), "district"),
    ("Q2002", "County Tipperary", (), "district"),
    ("Q1001", "County Dublin", (), "district"),
    ("Q1002", 'Dún Laoghaire "Rathdown"', (), "district"),
    ("Q3001", "County Cavan", (), "district"),
    # Q3002 (Monaghan) has no English label: left out (test_items_without_a_label_are_skipped_and_counted)
]
DEPTH3_NODES = [
    ("Q10001", "Dublin City", (), "municipality"),
    ("Q30001", "Kinawley", (), "municipality"),
    ("Q30002", "Loopville", (), "municipality"),
]
DEPTH1_EDGES = [("Q27", "Q20"), ("Q27", "Q100"), ("Q27", "Q300")]
DEPTH2_EDGES = [
    ("Q20", "Q2001"),
    ("Q20", "Q2002"),
    ("Q100", "Q1001"),
    ("Q100", "Q1002"),
    ("Q300", "Q3001"),
]
DEPTH3_EDGES = [("Q1001", "Q10001"), ("Q3001", "Q30001"), ("Q3001", "Q30002")]


def node_rows(kg) -> list[tuple]:
    return [(n.id, n.label, n.aliases, n.type) for n in kg.nodes.values()]


def edge_rows(kg) -> list[tuple]:
    return [(e.parent, e.child) for e in kg.edges]


@pytest.mark.parametrize(
    ("depth", "nodes", "edges", "requests"),
    [
        (1, DEPTH1_NODES, DEPTH1_EDGES, 2),
        (2, DEPTH1_NODES + DEPTH2_NODES, DEPTH1_EDGES + DEPTH2_EDGES, 3),
        (
            3,
            DEPTH1_NODES + DEPTH2_NODES + DEPTH3_NODES,
            DEPTH1_EDGES + DEPTH2_EDGES + DEPTH3_EDGES,
            4,
        ),
    ],
)
def test_places_graph_is_exact_at_each_depth(endpoint, make_client, depth, nodes, edges, requests):
    kg = build_graph("places", ["Q27"], depth, client=make_client())
    assert node_rows(kg) == nodes
    assert edge_rows(kg) == edges
    assert {e.relation for e in kg.edges} == {"contains"}
    assert kg.domain == "places"
    assert kg.name == f"places: Ireland (depth {depth})"
    assert kg.source == f"wikidata:{endpoint.url}"
    # one children query per level (a single chunk each) + one labels query
    assert endpoint.requests == requests


def test_dissolved_wrong_type_and_second_parent_are_handled(endpoint, make_client):
    kg = build_graph("places", ["Q27"], 3, client=make_client())
    assert "Q400" not in kg.nodes  # dissolved (P576)
    assert "Q1009" not in kg.nodes  # dissolved county
    assert "Q1010" not in kg.nodes  # an airport is not an administrative entity
    parents_of_tipperary = [e.parent for e in kg.edges if e.child == "Q2002"]
    assert parents_of_tipperary == ["Q20"]  # first parent in build order wins, not Q100


def test_cycles_do_not_loop_and_each_node_is_visited_once(endpoint, make_client):
    kg = build_graph("places", ["Q27"], 6, client=make_client())
    # Cork -> Ireland is skipped (Ireland already visited); Loopville <-> Circleton stops.
    assert edge_rows(kg)[-1] == ("Q30002", "Q30003")
    assert len(kg.edges) == 12
    assert len(kg.nodes) == 13
    assert kg.nodes["Q30003"].type == "locality"
    children = [e.child for e in kg.edges]
    assert len(children) == len(set(children))
    assert kg.roots() == ["Q27"]
    # levels 1..5 have parents; level 6 has an empty frontier, so no query: 5 + 1 labels
    assert endpoint.requests == 6


def test_music_artist_albums_songs(endpoint, make_client):
    kg = build_graph("music", ["Q5000"], 3, client=make_client())
    assert node_rows(kg) == [
        ("Q5000", "The Beatles", ("Beatles", "the Fab Four"), "artist"),
        ("Q5100", "Abbey Road", (), "album"),
        ("Q5101", "Let It Be", (), "album"),
        ("Q5200", "Come Together", (), "song"),
        ("Q5201", "Octopus's Garden", (), "song"),
        ("Q5202", "Let It Be", (), "song"),
    ]
    assert [(e.parent, e.child, e.relation) for e in kg.edges] == [
        ("Q5000", "Q5100", "artist->album"),
        ("Q5000", "Q5101", "artist->album"),
        ("Q5100", "Q5200", "album->song"),
        ("Q5100", "Q5201", "album->song"),
        ("Q5101", "Q5202", "album->song"),
    ]
    # the domain has two levels: depth 3 asks only two children queries + labels
    assert endpoint.requests == 3


def test_labels_in_another_language(endpoint, make_client):
    result = build_with_summary("places", ["Q27"], 1, lang="de", client=make_client())
    assert node_rows(result.graph) == [
        ("Q27", "Irland", ("Republik Irland",), "country"),
        ("Q20", "Munster", (), "region"),
        ("Q300", "Ulster (Provinz)", (), "region"),
    ]
    assert result.unlabelled == ("Q100",)  # Leinster has no German label


def test_several_seeds_keep_their_order_and_share_queries(endpoint, make_client):
    kg = build_graph("places", ["Q300", "Q100", "Q300"], 1, client=make_client())
    assert kg.roots() == ["Q300", "Q100"]
    assert edge_rows(kg) == [
        ("Q300", "Q3001"),
        ("Q100", "Q1001"),
        ("Q100", "Q1002"),
        ("Q100", "Q2002"),
    ]
    assert endpoint.requests == 2


def test_cached_rebuild_sends_no_request_and_gives_identical_file(endpoint, make_client, tmp_path):
    first = build_graph("places", ["Q27"], 3, client=make_client())
    sent = endpoint.requests
    second_client = make_client()
    second = build_graph("places", ["Q27"], 3, client=second_client)
    assert endpoint.requests == sent
    assert second_client.requests == 0 and second_client.cache_hits == 4
    save_graph(first, tmp_path / "a.json")
    save_graph(second, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert graph_to_dict(load_graph(tmp_path / "a.json")) == graph_to_dict(first)


def test_cached_rebuild_works_offline(endpoint, make_client, dead_url):
    build_graph("places", ["Q27"], 2, client=make_client())
    # Same endpoint URL, server gone: every query is answered from the cache.
    url = endpoint.url
    endpoint.stop()
    offline = make_client(url, retries=0)
    kg = build_graph("places", ["Q27"], 2, client=offline)
    assert len(kg.nodes) == 9 and offline.requests == 0


def test_refresh_ignores_the_cache(endpoint, make_client):
    build_graph("places", ["Q27"], 1, client=make_client())
    build_graph("places", ["Q27"], 1, client=make_client(refresh=True))
    assert endpoint.requests == 4


def test_two_fresh_builds_of_the_same_data_are_identical(endpoint, make_client, tmp_path):
    first = build_graph("places", ["Q27"], 3, client=make_client(use_cache=False))
    second = build_graph("places", ["Q27"], 3, client=make_client(use_cache=False))
    assert endpoint.requests == 8
    one, two = graph_to_dict(first), graph_to_dict(second)
    one.pop("built"), two.pop("built")
    assert one == two


def test_max_nodes_guard(endpoint, make_client):
    with pytest.raises(
        MaxNodesError, match=r"at least 10 nodes at depth 2, more than --max-nodes 9"
    ):
        build_graph("places", ["Q27"], 3, max_nodes=9, client=make_client())
    # stopped before the depth-3 and label queries
    assert endpoint.requests == 2
    # the guard counts the items found, before those without a label are left out
    kg = build_graph("places", ["Q27"], 2, max_nodes=10, client=make_client())
    assert len(kg.nodes) == 9


def test_progress_reports_levels_parents_and_nodes(endpoint, make_client):
    steps: list[BuildProgress] = []
    build_graph("places", ["Q27"], 2, client=make_client(), progress=steps.append)
    assert steps == [
        BuildProgress("children", 1, 0, 1, 1),
        BuildProgress("children", 1, 1, 1, 4),
        BuildProgress("children", 2, 0, 3, 4),
        BuildProgress("children", 2, 3, 3, 10),
        BuildProgress("labels", 0, 10, 10, 10),
    ]


@pytest.mark.parametrize("seed", ["Q0", "q27", "Q27 ; DROP", "P31", "Q", "Q01", 'Q1"}', ""])
def test_bad_seeds_are_rejected_before_any_request(endpoint, make_client, seed):
    with pytest.raises(InvalidInputError, match="not a Wikidata item id"):
        build_graph("places", [seed], 1, client=make_client())
    assert endpoint.requests == 0


@pytest.mark.parametrize("lang", ['en") }', "e", "english1", "EN GB"])
def test_bad_language_is_rejected(endpoint, make_client, lang):
    with pytest.raises(InvalidInputError, match="not a language tag"):
        build_graph("places", ["Q27"], 1, lang=lang, client=make_client())
    assert endpoint.requests == 0


def test_bad_depth_and_max_nodes(make_client):
    with pytest.raises(InvalidInputError, match="depth"):
        build_graph("places", ["Q27"], 0, client=make_client())
    with pytest.raises(InvalidInputError, match="max-nodes"):
        build_graph("places", ["Q27"], 1, max_nodes=0, client=make_client())


def test_250_parents_at_one_level_take_two_queries(wide, make_client):
    server = wide
    kg = build_graph("places", ["Q1"], 2, client=make_client(server.url))
    assert len(kg.nodes) == 501
    assert kg.nodes["Q100249"].label == "G249"
    children_queries = [q for q in server.queries if "?parent ?child" in q]
    # level 1: 1 query; level 2: 250 parents -> chunks of 200 and 50
    assert len(children_queries) == 3
    assert [q.count("wd:Q") - 1 for q in children_queries[1:]] == [200, 50]
    # labels: 501 items -> chunks of 500 and 1
    assert server.requests == 5


def test_result_limit_hit_is_an_error_not_a_silent_truncation(endpoint, make_client):
    with pytest.raises(WikidataError, match="result limit"):
        build_graph("places", ["Q27"], 1, client=make_client(), result_limit=3)


def test_user_domain_file_parent_to_child(make_client, tmp_path):
    domain_file = tmp_path / "companies.toml"
    domain_file.write_text(
        'name = "companies"\nseed_type = "company"\n'
        '[[levels]]\nproperty = "P355"\ndirection = "parent_to_child"\n'
        'node_type = "subsidiary"\nrelation = "company->subsidiary"\nrepeat = true\n',
        encoding="utf-8",
    )
    data = (
        b"PREFIX wd: <http://www.wikidata.org/entity/>\n"
        b"PREFIX wdt: <http://www.wikidata.org/prop/direct/>\n"
        b"PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
        b'wd:Q95 wdt:P355 wd:Q9366, wd:Q21 ; rdfs:label "Google"@en .\n'
        b'wd:Q21 wdt:P355 wd:Q7 ; rdfs:label "DeepMind"@en .\n'
        b'wd:Q9366 rdfs:label "YouTube"@en .\nwd:Q7 rdfs:label "Lab"@en .\n'
    )
    with LocalSparqlEndpoint(make_store(data)) as server:
        kg = build_graph(load_domain(domain_file), ["Q95"], 2, client=make_client(server.url))
    assert [(e.parent, e.child, e.relation) for e in kg.edges] == [
        ("Q95", "Q21", "company->subsidiary"),
        ("Q95", "Q9366", "company->subsidiary"),
        ("Q21", "Q7", "company->subsidiary"),
    ]
    assert [(n.id, n.label, n.type) for n in kg.nodes.values()] == [
        ("Q95", "Google", "company"),
        ("Q21", "DeepMind", "subsidiary"),
        ("Q9366", "YouTube", "subsidiary"),
        ("Q7", "Lab", "subsidiary"),
    ]


def test_saved_file_loads_with_kg_io(endpoint, make_client, tmp_path):
    kg = build_graph("places", ["Q27"], 3, client=make_client())
    path = save_graph(kg, tmp_path / "ireland.json")
    loaded = load_graph(path)
    assert dumps_graph(loaded) == dumps_graph(kg)
    assert loaded.nodes["Q1002"].label == 'Dún Laoghaire "Rathdown"'
