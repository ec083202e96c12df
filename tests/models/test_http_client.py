"""The model clients' HTTP client: requests in flight together, connections kept, errors as httpx's."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import httpx
import pytest

from kontest_tui.models.http_client import ShardedClient
from tests.models.model_test_servers import serving

WAVE = 16


class BarrierHandler(BaseHTTPRequestHandler):
    """Answers a POST only when WAVE requests are being handled at once (else 503), and
    records the client port of each request: one port per TCP connection."""

    protocol_version = "HTTP/1.1"
    barrier: ClassVar[threading.Barrier] = threading.Barrier(WAVE, timeout=10)
    ports: ClassVar[list[int]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.lock:
            self.ports.append(self.client_address[1])
        try:
            self.barrier.wait()
            status, reply = 200, {"echo": body["n"], "path": self.path}
        except threading.BrokenBarrierError:
            status, reply = 503, {"error": "the requests did not arrive together"}
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return


@pytest.fixture()
def barrier_url() -> Iterator[str]:
    BarrierHandler.barrier = threading.Barrier(WAVE, timeout=10)
    BarrierHandler.ports = []
    with serving(BarrierHandler) as url:  # its listen backlog takes 16 connections at once
        yield url


def test_requests_are_in_flight_together_and_their_connections_are_kept(barrier_url: str) -> None:
    async def two_waves() -> list[httpx.Response]:
        client = ShardedClient(barrier_url + "/v1", max_connections=WAVE, shard_connections=4)
        try:
            responses = []
            for wave in range(2):
                responses += await asyncio.gather(
                    *(client.post("/chat", json={"n": wave * WAVE + i}) for i in range(WAVE))
                )
            return responses
        finally:
            await client.aclose()

    responses = asyncio.run(two_waves())
    assert [r.status_code for r in responses] == [200] * 2 * WAVE
    assert sorted(r.json()["echo"] for r in responses) == list(range(2 * WAVE))
    assert {r.json()["path"] for r in responses} == {"/v1/chat"}  # base URL path kept
    # 16 at once need 16 connections (4 shards of 4); the second wave reuses them.
    assert len(BarrierHandler.ports) == 2 * WAVE
    assert len(set(BarrierHandler.ports)) == WAVE


def test_more_requests_than_connections_wait_for_a_free_one(barrier_url: str) -> None:
    async def squeezed() -> list[int]:
        # 8 connections for 16 requests that each wait for all 16: the barrier breaks.
        client = ShardedClient(barrier_url, max_connections=8, shard_connections=4)
        BarrierHandler.barrier = threading.Barrier(WAVE, timeout=0.5)
        try:
            replies = await asyncio.gather(
                *(client.post("/chat", json={"n": i}) for i in range(WAVE))
            )
            return [r.status_code for r in replies]
        finally:
            await client.aclose()

    statuses = asyncio.run(squeezed())
    assert 503 in statuses
    assert len(set(BarrierHandler.ports)) <= 8


def test_a_refused_connection_is_an_httpx_connect_error(refused_url: str) -> None:
    async def refused() -> None:
        client = ShardedClient(refused_url)
        try:
            await client.get("/api/tags", timeout=2.0)
        finally:
            await client.aclose()

    with pytest.raises(httpx.ConnectError):
        asyncio.run(refused())


def test_a_server_that_never_answers_is_an_httpx_read_timeout() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)  # accepts connections (in the backlog), never reads or answers

        async def hang() -> None:
            client = ShardedClient(f"http://127.0.0.1:{silent.getsockname()[1]}")
            try:
                await client.post("/api/chat", json={}, timeout=0.3)
            finally:
                await client.aclose()

        with pytest.raises(httpx.ReadTimeout):
            asyncio.run(hang())
