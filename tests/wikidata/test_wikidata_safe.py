"""The builder on the Wikidata Query Service's terms, checked against the local endpoint.

Blazegraph's optimizer hint, timed-out chunks split in halves (injected: the endpoint answers
HTTP 500 with a java TimeoutException, or nothing at all, when a VALUES list is too long), the
client timeout below the server's, the User-Agent contact and the 403 message, and items
without a label left out and counted.
"""

from __future__ import annotations

import re

import pytest

from kontest_tui import __version__
from kontest_tui.cli import run_cli
from kontest_tui.errors import InvalidInputError, WikidataError
from kontest_tui.kg.domains import load_domain
from kontest_tui.kg.io import graph_to_dict
from kontest_tui.kg.sparql import build_children_query, build_labels_query
from kontest_tui.kg.sparql_client import (
    SERVER_TIME_LIMIT,
    USER_AGENT_POLICY,
    QueryTimeoutError,
    SparqlClient,
    display_endpoint,
    is_blazegraph,
    scrub_endpoint_text,
    validate_contact,
)
from kontest_tui.kg.wikidata import build_graph, build_with_summary
from tests.support.sparql_local import TIMEOUT_BODY, values_items

QUERY = (
    "PREFIX wd: <http://www.wikidata.org/entity/>\n"
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    'SELECT ?label WHERE { VALUES ?item { wd:Q27 } ?item rdfs:label ?label . FILTER(LANG(?label) = "en") }'
)
HINT_LINE = '  hint:Query hint:optimizer "None" .\n'


def sizes(queries: list[str], marker: str) -> list[int]:
    """How many items each query of one kind (children: "?parent ?child", labels: "?kind") asked for."""
    return [len(values_items(query)) for query in queries if marker in query]


def without_built(kg) -> dict:
    data = graph_to_dict(kg)
    data.pop("built")
    return data


# -- the optimizer hint -------------------------------------------------------------------


def test_queries_carry_the_optimizer_hint_before_the_values_list():
    children = build_children_query(load_domain("places").levels[0], ["Q27"], 10)
    labels = build_labels_query(["Q27"], "en", 10)
    for query in (children, labels):
        assert "PREFIX hint: <http://www.bigdata.com/queryHints#>\n" in query
        head, _, body = query.partition("WHERE {\n")
        assert body.startswith(HINT_LINE + "  VALUES ?")
    # Blazegraph joins in the order written: parents, link, class path from the bound child
    lines = [line.strip() for line in children.splitlines()]
    assert lines.index("?child wdt:P131 ?parent .") < lines.index(
        "?child wdt:P31/wdt:P279* wd:Q56061 ."
    )
    plain = build_children_query(load_domain("places").levels[0], ["Q27"], 10, optimizer_hint=False)
    assert "hint:" not in plain and "hint:" not in build_labels_query(
        ["Q27"], "en", 10, optimizer_hint=False
    )


@pytest.mark.parametrize(
    ("url", "blazegraph"),
    [
        ("https://query.wikidata.org/sparql", True),
        ("https://query-main.wikidata.org/sparql", True),
        ("https://commons-query.wikimedia.org/sparql", True),
        ("http://localhost:9999/bigdata/namespace/wdq/sparql", True),
        ("https://qlever.cs.uni-freiburg.de/api/wikidata", False),
        ("http://127.0.0.1:7878/query", False),
        ("https://wikidata.org.example.com/sparql", False),
    ],
)
def test_hint_goes_only_to_blazegraph_endpoints(url, blazegraph):
    assert is_blazegraph(url) is blazegraph


def test_hinted_build_gives_the_same_graph_on_the_local_store(endpoint, make_client):
    plain = build_graph("places", ["Q27"], 6, client=make_client(use_cache=False))
    assert not any(
        "hint:" in query for query in endpoint.queries
    )  # auto: 127.0.0.1 is no Blazegraph
    sent = len(endpoint.queries)
    hinted = build_graph(
        "places", ["Q27"], 6, client=make_client(use_cache=False), optimizer_hint=True
    )
    assert all(HINT_LINE in query for query in endpoint.queries[sent:])
    assert without_built(hinted) == without_built(plain)
    assert len(hinted.nodes) == 13


# -- timeouts: split in halves, never repeated ---------------------------------------------


def test_a_timed_out_chunk_is_split_in_halves_and_the_graph_is_complete(wide, make_client, sleeps):
    reference = build_graph("places", ["Q1"], 2, client=make_client(wide.url, use_cache=False))
    wide.queries.clear()
    wide.requests = 0
    wide.time_out_above(60)
    result = build_with_summary(
        "places", ["Q1"], 2, client=make_client(wide.url), optimizer_hint=True
    )
    # level 1: 1 parent; level 2: 200 -> 100 -> 50 + 50, 100 -> 50 + 50, then the last 50
    assert sizes(wide.queries, "?parent ?child") == [1, 200, 100, 50, 50, 100, 50, 50, 50]
    # labels of 501 items: 500 -> 250 -> 125 -> 63 -> 32 + 31, 62 -> 31 + 31, ... then 1
    labels = sizes(wide.queries, "?kind")
    assert labels[:6] == [500, 250, 125, 63, 32, 31] and labels[-1] == 1
    assert (
        sum(size for size in labels if size <= 60) == 501
    )  # every item asked once in a chunk that answered
    assert wide.timeouts == 3 + labels.count(500) + labels.count(250) + labels.count(
        125
    ) + labels.count(63) + labels.count(62)
    assert len(set(wide.queries)) == len(wide.queries)  # no query was sent twice
    assert sleeps == []  # and none waited for a retry
    assert without_built(result.graph) == without_built(reference)
    assert len(result.graph.nodes) == 501
    assert result.splits == wide.timeouts and result.timed_out == ()


def test_an_item_that_times_out_alone_is_given_up_and_counted(wide, make_client):
    wide.time_out_above(
        None, always_for=["Q1005"], matching="?parent ?child"
    )  # its label query answers
    result = build_with_summary("places", ["Q1"], 2, client=make_client(wide.url))
    # Q1005 is the 6th of the first 200 parents: 200 -> 100 -> 50 -> 25 -> 13 -> 7 -> 4 (answers)
    # + 3 -> 2 -> Q1004 (answers) + Q1005 (given up); then Q1006, and the other halves answer
    assert sizes(wide.queries, "?parent ?child") == [
        1,
        200,
        100,
        50,
        25,
        13,
        7,
        4,
        3,
        2,
        1,
        1,
        1,
        6,
        12,
        25,
        50,
        100,
        50,
    ]
    assert result.splits == 8 and wide.timeouts == 9
    assert result.timed_out == ("Q1005",)
    kg = result.graph
    assert "Q1005" in kg.nodes and "Q100005" not in kg.nodes  # kept, but its child is missing
    assert len(kg.nodes) == 500
    assert "Q100006" in kg.nodes and "Q100004" in kg.nodes


def test_a_rebuild_from_the_cache_splits_again_without_asking(wide, make_client):
    wide.time_out_above(60)
    first = build_with_summary("places", ["Q1"], 2, client=make_client(wide.url))
    asked = wide.requests
    offline = make_client(wide.url, retries=0)
    wide.stop()
    second = build_with_summary("places", ["Q1"], 2, client=offline)
    assert offline.requests == 0 and offline.cache_hits == asked
    assert graph_to_dict(second.graph) == graph_to_dict(first.graph)
    assert second.splits == first.splits


def test_a_client_timeout_splits_too(endpoint, make_client):
    endpoint.time_out_above(3, stall=True)  # no answer at all for 4+ items
    # (SPARQLWrapper takes whole seconds: 1 s is the shortest client timeout)
    result = build_with_summary("places", ["Q27"], 1, client=make_client(timeout=1))
    # labels of 4 items: 4 (no answer within 1 s) -> 2 + 2
    assert sizes(endpoint.queries, "?kind") == [4, 2, 2]
    assert [node.label for node in result.graph.nodes.values()] == [
        "Ireland",
        "Munster",
        "Leinster",
        "Ulster",
    ]
    assert result.splits == 1 and endpoint.timeouts == 1


def test_a_server_timeout_is_not_retried(endpoint, make_client, sleeps):
    endpoint.inject(500, body=TIMEOUT_BODY)
    with pytest.raises(QueryTimeoutError, match=r"timed out \(HTTP 500, the server's 60 s limit\)"):
        make_client().select(QUERY)
    assert endpoint.requests == 1 and sleeps == []
    # another 500 is still retried
    endpoint.inject(500, body=b"java.lang.IllegalStateException: busy")
    assert make_client(refresh=True).select(QUERY) == [{"label": "Ireland"}]
    assert sleeps == [1.0]


def test_a_timeout_in_the_middle_of_the_answer_is_a_timeout(endpoint, make_client, sleeps):
    body = b'{"head": {"vars": ["label"]}, "results": {"bindings": [\n' + TIMEOUT_BODY
    endpoint.inject(200, headers={"Content-Type": "application/sparql-results+json"}, body=body)
    with pytest.raises(QueryTimeoutError, match="mid-answer"):
        make_client().select(QUERY)
    assert sleeps == []


def test_client_timeout_is_below_the_servers_limit():
    assert SparqlClient().timeout == 55.0 < SERVER_TIME_LIMIT


# -- the User-Agent contact and HTTP 403 -----------------------------------------------------


def test_user_agent_names_the_contact(endpoint, make_client, monkeypatch):
    monkeypatch.delenv("KONTEST_USER_AGENT", raising=False)
    make_client(contact="me@example.org").select(QUERY)
    monkeypatch.setenv("KONTEST_CONTACT", "https://example.org/me")
    make_client(refresh=True).select(QUERY)
    assert endpoint.user_agents == [
        f"kontest-tui/{__version__} (me@example.org; KONTEST knowledge-graph consistency testing of language "
        "models; batched queries, cached results) SPARQLWrapper/2",
        f"kontest-tui/{__version__} (https://example.org/me; KONTEST knowledge-graph consistency testing of "
        "language models; batched queries, cached results) SPARQLWrapper/2",
    ]


@pytest.mark.parametrize(
    "contact", ["me@example.org\r\nX-Evil: 1", "a (b)", "", "  ", "naïve@example.org", "x" * 201]
)
def test_bad_contacts_are_rejected(contact):
    with pytest.raises(InvalidInputError, match="contact"):
        validate_contact(contact)


def test_403_asks_for_a_contact_and_is_not_retried(endpoint, make_client, sleeps, monkeypatch):
    monkeypatch.delenv("KONTEST_CONTACT", raising=False)
    endpoint.inject(403, body=b"Please set a user-agent")
    with pytest.raises(WikidataError) as caught:
        make_client().select(QUERY)
    message = str(caught.value)
    assert "refused the request (HTTP 403 Forbidden)" in message
    assert (
        "set KONTEST_CONTACT" in message and "--contact" in message and USER_AGENT_POLICY in message
    )
    assert endpoint.requests == 1 and sleeps == []
    endpoint.inject(403)
    with pytest.raises(
        WikidataError, match=r"the User-Agent sent was .*me@example\.org.* may be blocking"
    ) as caught:
        make_client(contact="me@example.org").select(QUERY)


def test_cli_contact_and_403(endpoint, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KONTEST_CONTACT", raising=False)
    endpoint.inject(403)
    args = [
        "kg",
        "build",
        "--domain",
        "places",
        "--seed",
        "Q27",
        "--depth",
        "1",
        "--endpoint",
        endpoint.url,
    ]
    assert run_cli([*args, "--out", str(tmp_path / "a.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "KONTEST_CONTACT" in err
    assert run_cli([*args, "--out", str(tmp_path / "b.json"), "--contact", "me@example.org"]) == 0
    assert "(me@example.org;" in endpoint.user_agents[-1]
    assert run_cli([*args, "--out", str(tmp_path / "c.json"), "--contact", "me\nyou"]) == 2
    assert capsys.readouterr().err.startswith("kontest: error: the contact must be")


# -- items without a label -----------------------------------------------------------------


def test_items_without_a_label_are_skipped_and_counted(endpoint, make_client):
    result = build_with_summary("places", ["Q27"], 3, client=make_client())
    assert result.unlabelled == ("Q3002",)  # Monaghan: only an Irish label
    assert result.dropped_below == 1  # Clones, below it
    assert "Q3002" not in result.graph.nodes and "Q30010" not in result.graph.nodes
    assert all(node.label != node.id for node in result.graph.nodes.values())
    assert all(edge.child in result.graph.nodes for edge in result.graph.edges)


def test_build_summary_counts_the_skipped_items(endpoint, tmp_path, capsys):
    endpoint.time_out_above(2)
    out = tmp_path / "x.json"
    args = [
        "kg",
        "build",
        "--domain",
        "places",
        "--seed",
        "Q27",
        "--depth",
        "3",
        "--endpoint",
        endpoint.url,
    ]
    assert run_cli([*args, "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"wrote {out}: 12 nodes, 11 edges (")
    assert "; skipped 1 item without a label in 'en' (Q3002) and 1 item below it" in line
    assert re.search(r"; \d+ queries split in halves after a timeout\n$", line)


def test_a_seed_without_a_label_is_an_error(endpoint, make_client):
    with pytest.raises(WikidataError, match=r"no seed has a label in 'en' \(Q3002\)"):
        build_graph("places", ["Q3002"], 1, client=make_client())


# -- endpoint text in messages -----------------------------------------------------------------


def test_secrets_in_endpoint_error_text_are_masked(endpoint, make_client, monkeypatch):
    monkeypatch.setenv("WDQS_TOKEN", "tok-4f9a8b7c6d")
    endpoint.inject(400, body=b"bad request from tok-4f9a8b7c6d: Authorization: Bearer abc.def.ghi")
    with pytest.raises(WikidataError) as caught:
        make_client().select(QUERY)
    assert "tok-4f9a8b7c6d" not in str(caught.value) and "abc.def.ghi" not in str(caught.value)
    assert "bad request from ***" in str(caught.value)
    assert scrub_endpoint_text("token=" + "k" * 400).startswith("token=***")


def test_endpoint_error_text_is_one_short_line_and_credentials_are_masked(endpoint, make_client):
    body = b'SPARQL-QUERY: queryStr=PREFIX wd: ...\norg.openrdf.query.MalformedQueryException: Encountered " "}"\n\tat x\n'
    endpoint.inject(400, body=body)
    with pytest.raises(WikidataError) as caught:
        make_client().select(QUERY)
    assert "org.openrdf.query.MalformedQueryException: Encountered" in str(caught.value)
    assert "queryStr" not in str(caught.value)
    assert len(scrub_endpoint_text("x" * 500)) == 200 and scrub_endpoint_text("a\nb\tc") == "a b c"
    assert (
        display_endpoint("https://me:s3cret@example.org/sparql") == "https://***@example.org/sparql"
    )
    with pytest.raises(WikidataError) as caught:
        SparqlClient("http://me:s3cret@127.0.0.1:9/sparql", retries=0, use_cache=False).select(
            QUERY
        )
    assert "s3cret" not in str(caught.value)
