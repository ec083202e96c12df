"""SparqlClient error paths against the local endpoint: retries, Retry-After, down, malformed JSON."""

from __future__ import annotations

import pytest

from kontest_tui.errors import WikidataError
from kontest_tui.kg.cache import QueryCache, query_key
from kontest_tui.kg.sparql_client import parse_results, parse_retry_after
from kontest_tui.kg.wikidata import build_graph

QUERY = (
    "PREFIX wd: <http://www.wikidata.org/entity/>\n"
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    'SELECT ?label WHERE { wd:Q27 rdfs:label ?label . FILTER(LANG(?label) = "en") }'
)


def test_select_returns_rows_and_sends_a_descriptive_user_agent(endpoint, make_client):
    client = make_client()
    assert client.select(QUERY) == [{"label": "Ireland"}]
    assert endpoint.requests == 1 and client.requests == 1
    assert endpoint.user_agents[0].startswith("kontest-tui/")
    assert "consistency testing" in endpoint.user_agents[0]


def test_user_agent_can_be_overridden_by_env(endpoint, make_client, monkeypatch):
    monkeypatch.setenv("KONTEST_USER_AGENT", "my-study/1.0 (me@example.org)")
    make_client().select(QUERY)
    assert endpoint.user_agents == ["my-study/1.0 (me@example.org)"]


def test_429_then_success_honours_retry_after(endpoint, make_client, sleeps):
    endpoint.inject(429, headers={"Retry-After": "7"})
    client = make_client()
    assert client.select(QUERY) == [{"label": "Ireland"}]
    assert endpoint.requests == 2
    assert sleeps == [7.0]


def test_5xx_retries_with_exponential_backoff(endpoint, make_client, sleeps):
    endpoint.inject(503, times=2)
    endpoint.inject(500)
    client = make_client(backoff=0.5)
    assert client.select(QUERY) == [{"label": "Ireland"}]
    assert endpoint.requests == 4
    assert sleeps == [0.5, 1.0, 2.0]


def test_persistent_errors_give_one_wikidata_error(endpoint, make_client, sleeps):
    endpoint.inject(503, times=10)
    with pytest.raises(WikidataError, match=r"failed after 3 attempts: HTTP 503"):
        make_client(retries=2).select(QUERY)
    assert endpoint.requests == 3 and len(sleeps) == 2


def test_400_is_not_retried(endpoint, make_client, sleeps):
    with pytest.raises(WikidataError, match="rejected the query"):
        make_client().select("SELECT nonsense {")
    assert endpoint.requests == 1 and sleeps == []


def test_endpoint_down_is_one_clear_error(dead_url, make_client, sleeps):
    with pytest.raises(WikidataError, match=r"cannot reach the endpoint") as caught:
        build_graph("places", ["Q27"], 1, client=make_client(dead_url, retries=2))
    assert dead_url in str(caught.value)
    assert "\n" not in str(caught.value)
    assert sleeps == [1.0, 2.0]


def test_malformed_json_is_a_clear_error_and_not_cached(endpoint, make_client):
    endpoint.inject(
        200, headers={"Content-Type": "application/sparql-results+json"}, body=b'{"head": {"vars"'
    )
    with pytest.raises(WikidataError, match="malformed JSON"):
        make_client().select(QUERY)
    # nothing was cached: the next client asks again and gets the real answer
    assert make_client().select(QUERY) == [{"label": "Ireland"}]
    assert endpoint.requests == 2


def test_json_without_bindings_is_malformed():
    with pytest.raises(WikidataError, match="malformed JSON"):
        parse_results(b'{"head": {"vars": []}, "results": {}}')
    with pytest.raises(WikidataError, match="malformed JSON"):
        parse_results(b"<html>busy</html>")
    assert parse_results(
        b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "1"}}, {}]}}'
    ) == [
        {"x": "1"},
        {},
    ]


def test_retry_after_parsing():
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a past date: no wait


def test_cache_is_keyed_by_endpoint_and_query(tmp_path):
    cache = QueryCache(tmp_path)
    cache.put("http://a/sparql", "Q", [{"x": "1"}])
    cached = cache.get("http://a/sparql", "Q")
    assert cached is not None and cached.rows == [{"x": "1"}]
    assert cache.get("http://b/sparql", "Q") is None
    assert cache.get("http://a/sparql", "Q ") is None
    assert query_key("http://a/sparql", "Q") != query_key("http://b/sparql", "Q")
    # a corrupt entry is a miss, not a crash
    path = next(tmp_path.rglob("*.json"))
    path.write_text("{broken", encoding="utf-8")
    assert cache.get("http://a/sparql", "Q") is None


def test_non_http_endpoint_is_rejected():
    from kontest_tui.kg.sparql_client import SparqlClient

    with pytest.raises(WikidataError, match="http"):
        SparqlClient("file:///etc/passwd")
