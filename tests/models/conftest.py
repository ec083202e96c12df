"""Fixtures for model tests: a real `kontest sim serve` subprocess and a tiny misbehaving server."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest
from model_test_servers import LeakyHandler, MisbehavingHandler, ProxyHandler, start_sim_server


@pytest.fixture(scope="session")
def sim_url() -> Iterator[str]:
    """Base URL of a `kontest sim serve` subprocess (default profile, seed 0)."""
    process, url = start_sim_server()
    try:
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="session")
def bad_url() -> Iterator[str]:
    """Base URL of a tiny local server that fails on purpose (see MisbehavingHandler)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), MisbehavingHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


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
    server = ThreadingHTTPServer(("127.0.0.1", 0), LeakyHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def proxy_url() -> Iterator[str]:
    """Base URL of a local server speaking Ollama and OpenAI like proxies do (ProxyHandler)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ProxyHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
