"""Fixtures for the Wikidata builder tests: a real SPARQL endpoint on 127.0.0.1 (pyoxigraph)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from kontest_tui.kg.sparql_client import SparqlClient
from tests.support.sparql_local import LocalSparqlEndpoint, make_store

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "wikidata"


@pytest.fixture
def endpoint() -> Iterator[LocalSparqlEndpoint]:
    """The places + music test triples served over HTTP; counts requests, can inject faults."""
    store = make_store(DATA_DIR / "places.ttl", DATA_DIR / "music.ttl")
    with LocalSparqlEndpoint(store) as server:
        yield server


@pytest.fixture
def wide() -> Iterator[LocalSparqlEndpoint]:
    """Q1 with 250 children, each with one child (501 nodes), served on 127.0.0.1."""
    with LocalSparqlEndpoint(make_store(synthetic_turtle(250))) as server:
        yield server


def synthetic_turtle(children: int) -> bytes:
    """Q1 with `children` children, each with one child of its own."""
    lines = [
        "PREFIX wd: <http://www.wikidata.org/entity/>",
        "PREFIX wdt: <http://www.wikidata.org/prop/direct/>",
        "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>",
        'wd:Q1 rdfs:label "Root"@en .',
    ]
    for i in range(children):
        child, grandchild = 1000 + i, 100000 + i
        lines.append(f'wd:Q{child} wdt:P31 wd:Q56061 ; wdt:P131 wd:Q1 ; rdfs:label "C{i}"@en .')
        lines.append(
            f'wd:Q{grandchild} wdt:P31 wd:Q56061 ; wdt:P131 wd:Q{child} ; rdfs:label "G{i}"@en .'
        )
    return "\n".join(lines).encode()


@pytest.fixture
def sleeps() -> list[float]:
    """Waits a client asked for (recorded instead of slept)."""
    return []


@pytest.fixture
def make_client(endpoint: LocalSparqlEndpoint, sleeps: list[float]):
    """A SparqlClient for the local endpoint that records its backoff waits."""

    def make(url: str | None = None, **options) -> SparqlClient:
        options.setdefault("sleep", sleeps.append)
        options.setdefault("timeout", 10.0)
        return SparqlClient(url or endpoint.url, **options)

    return make


@pytest.fixture
def dead_url() -> str:
    """A 127.0.0.1 URL where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/sparql"
