"""search_entities: a fake wbsearchentities API on 127.0.0.1, and the offline fuzzy fallback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from kontest_tui.kg.cache import built_kgs_dir
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import save_graph
from kontest_tui.kg.search import EntityMatch, search_entities

HITS = [
    {
        "id": "Q27",
        "label": "Ireland",
        "description": "country in north-western Europe",
        "aliases": ["Éire"],
    },
    {"id": "Q22890", "label": "Ireland", "description": "island in north-western Europe"},
    {"id": "Q1234", "description": "no label here"},
]


class FakeApi:
    """Answers like Wikidata's wbsearchentities; `body` overrides the answer."""

    def __init__(self) -> None:
        self.calls: list[dict[str, list[str]]] = []
        self.body: bytes | None = None
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_GET(self) -> None:  # noqa: N802
                params = parse_qs(urlparse(self.path).query)
                api.calls.append(params)
                limit = int(params["limit"][0])
                body = api.body or json.dumps({"search": HITS[:limit], "success": 1}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/w/api.php"


@pytest.fixture
def api() -> Iterator[FakeApi]:
    fake = FakeApi()
    thread = threading.Thread(
        target=fake.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def test_online_search_uses_the_api(api):
    matches = search_entities("  ireland ", api_url=api.url, limit=3)
    assert matches == [
        EntityMatch("Q27", "Ireland", "country in north-western Europe", ("Éire",)),
        EntityMatch("Q22890", "Ireland", "island in north-western Europe"),
        EntityMatch("Q1234", "Q1234", "no label here"),
    ]
    params = api.calls[0]
    assert params["action"] == ["wbsearchentities"]
    assert params["search"] == ["ireland"]
    assert params["language"] == ["en"] and params["type"] == ["item"] and params["limit"] == ["3"]


def test_online_search_respects_limit(api):
    assert [m.id for m in search_entities("ireland", api_url=api.url, limit=1)] == ["Q27"]


def built_kg() -> KnowledgeGraph:
    nodes = {
        "Q27": Node("Q27", "Ireland", ("Republic of Ireland", "Éire"), "country"),
        "Q30001": Node("Q30001", "Kinawley", (), "municipality"),
    }
    return KnowledgeGraph(
        "places: Ireland (depth 1)", "places", nodes, [Edge("Q27", "Q30001", "contains")]
    )


def test_offline_fallback_when_api_unreachable(dead_url):
    save_graph(built_kg(), built_kgs_dir() / "ireland.json")
    matches = search_entities("kinawley", api_url=dead_url)
    assert matches[0] == EntityMatch(
        "Q30001",
        "Kinawley",
        "municipality in places: Ireland (depth 1)",
        (),
        "built:ireland",
        100.0,
    )


def test_offline_fallback_when_api_answers_nonsense(api):
    save_graph(built_kg(), built_kgs_dir() / "ireland.json")
    api.body = b"<html>maintenance</html>"
    matches = search_entities("kinawley", api_url=api.url)
    assert len(api.calls) == 1
    assert matches[0].id == "Q30001" and matches[0].source == "built:ireland"


def test_offline_matches_aliases_and_samples():
    save_graph(built_kg(), built_kgs_dir() / "ireland.json")
    matches = search_entities("eire", online=False, limit=50)
    assert matches[0].id == "Q27" and matches[0].source == "built:ireland"
    sources = {m.source for m in search_entities("Ireland", online=False, limit=50)}
    assert {"built:ireland", "sample:places", "sample:subdivisions"} <= sources


def test_offline_ranking_is_best_first_and_limited():
    matches = search_entities("Kinawley", online=False, limit=2)
    save_graph(built_kg(), built_kgs_dir() / "ireland.json")
    after = search_entities("Kinawley", online=False, limit=2)
    assert len(after) <= 2
    assert after[0].id == "Q30001" and after[0].score == 100.0
    assert all(a.score >= b.score for a, b in zip(after, after[1:], strict=False))
    assert "Q30001" not in [m.id for m in matches]


def test_empty_text_gives_nothing(api):
    assert search_entities("   ", api_url=api.url) == []
    assert api.calls == []
