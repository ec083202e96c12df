"""Fixtures for model tests: a real `kontest sim serve` subprocess and a tiny misbehaving server."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.models.model_test_servers import (
    LeakyHandler,
    MisbehavingHandler,
    ProxyHandler,
    running_sim_server,
    serving,
)


@pytest.fixture(scope="session")
def sim_url() -> Iterator[str]:
    """Base URL of a `kontest sim serve` subprocess (default profile, seed 0)."""
    with running_sim_server() as url:
        yield url


@pytest.fixture(scope="session")
def bad_url() -> Iterator[str]:
    """Base URL of a tiny local server that fails on purpose (see MisbehavingHandler)."""
    with serving(MisbehavingHandler) as url:
        yield url


@pytest.fixture()
def refused_url() -> str:
    """A 127.0.0.1 URL where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture()
def leaky_url() -> Iterator[str]:
    """Base URL of a local server that echoes the API key in its errors (see LeakyHandler)."""
    LeakyHandler.calls = 0
    with serving(LeakyHandler) as url:
        yield url


@pytest.fixture(scope="session")
def proxy_url() -> Iterator[str]:
    """Base URL of a local server speaking Ollama and OpenAI like proxies do (ProxyHandler)."""
    with serving(ProxyHandler) as url:
        yield url
