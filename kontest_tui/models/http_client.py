"""The HTTP client of the model clients: httpx transports in small shards, on asyncio sockets.

A model client asks for `get`, `post` and `stream` against one base URL; `ShardedClient`
sends each request through the httpx transport (the connection pool) with the fewest
requests in flight. Measured against `kontest sim serve` at 64 requests in flight on a 2-core
machine (benchmarks/throughput.py), the client's own CPU per request was what bounded the
run, and three things made it costly:

- one pool of 64 connections: httpcore checks every connection of a pool (a socket call
  each) whenever a request starts or ends, ~12 ms of CPU per request at 64 in flight (64 in
  flight ran slower than 8). Pools of 4 connections keep that check small.
- anyio under httpcore: its cancel scopes and typed attributes on every read and write.
  Plain-HTTP connections (local servers: Ollama, vLLM, llama.cpp, the simulator) use
  `AsyncioBackend`, asyncio's own streams; HTTPS keeps httpcore's default backend.
- `httpx.AsyncClient`'s per-request work the model clients do not use (cookies, auth,
  redirects, URL merging): requests are built here and sent to the transport directly.

Errors are httpx's own exceptions (the transport maps httpcore's), so callers handle them as
with an `httpx.AsyncClient`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
import ssl
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpcore
import httpx
from httpcore._utils import is_socket_readable

DEFAULT_TIMEOUT = 60.0
KEEPALIVE_SECONDS = 5.0
SHARD_CONNECTIONS = 4  # connections per transport (see the module docstring)
USER_AGENT = "kontest-tui"


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One TCP connection as asyncio's StreamReader/StreamWriter."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError:
            raise httpcore.ReadTimeout(f"no data in {timeout} s") from None
        except OSError as error:
            raise httpcore.ReadError(str(error) or type(error).__name__) from None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            self._writer.write(buffer)
            async with asyncio.timeout(timeout):
                await self._writer.drain()
        except TimeoutError:
            raise httpcore.WriteTimeout(f"could not send in {timeout} s") from None
        except OSError as error:
            raise httpcore.WriteError(str(error) or type(error).__name__) from None

    async def aclose(self) -> None:
        self._writer.close()

    def get_extra_info(self, info: str) -> Any:
        sock = self._writer.get_extra_info("socket")
        if info == "socket":
            return sock
        if info == "is_readable":
            return sock is not None and is_socket_readable(sock)
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network on asyncio's own streams (plain TCP only)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, local_addr=local)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection in {timeout} s") from None
        except OSError as error:
            raise httpcore.ConnectError(str(error) or type(error).__name__) from None
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ShardedClient:
    """Requests to one base URL over `max_connections` connections in shards (module doc)."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str] | None = None,
        *,
        max_connections: int = 64,
        shard_connections: int = SHARD_CONNECTIONS,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = httpx.Headers({"accept": "*/*", "user-agent": USER_AGENT, **(headers or {})})
        count = max(1, -(-max_connections // shard_connections))
        plain = httpx.URL(self.base_url).scheme == "http"
        self.transports = [_transport(shard_connections, plain) for _ in range(count)]
        self._busy = [0] * count
        self._urls: dict[str, httpx.URL] = {}

    def _request(
        self, method: str, path: str, json: object | None, timeout: float | None
    ) -> httpx.Request:
        url = self._urls.get(path)
        if url is None:  # parsing a URL is half the cost of building a request: once per path
            url = httpx.URL(path if "://" in path else f"{self.base_url}/{path.lstrip('/')}")
            self._urls[path] = url
        request = httpx.Request(method, url, json=json, headers=self.headers)
        request.extensions["timeout"] = httpx.Timeout(
            DEFAULT_TIMEOUT if timeout is None else timeout
        ).as_dict()
        return request

    async def _send(self, request: httpx.Request) -> tuple[int, httpx.Response]:
        busy = self._busy
        index = busy.index(min(busy))
        busy[index] += 1
        try:
            response = await self.transports[index].handle_async_request(request)
        except BaseException:
            busy[index] -= 1
            raise
        response.request = request
        return index, response

    async def _fetch(
        self, method: str, path: str, json: object | None, timeout: float | None
    ) -> httpx.Response:
        index, response = await self._send(self._request(method, path, json, timeout))
        try:
            await response.aread()
        finally:
            await response.aclose()
            self._busy[index] -= 1
        return response

    async def get(self, path: str, *, timeout: float | None = None) -> httpx.Response:
        """GET `path` (relative to the base URL), the whole body read."""
        return await self._fetch("GET", path, None, timeout)

    async def post(
        self, path: str, *, json: object | None = None, timeout: float | None = None
    ) -> httpx.Response:
        """POST a JSON body to `path`, the whole answer read."""
        return await self._fetch("POST", path, json, timeout)

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, path: str, *, json: object | None = None, timeout: float | None = None
    ) -> AsyncIterator[httpx.Response]:
        """Send a request and give its response unread (read it with `aiter_bytes`)."""
        index, response = await self._send(self._request(method, path, json, timeout))
        try:
            yield response
        finally:
            await response.aclose()
            self._busy[index] -= 1

    async def aclose(self) -> None:
        for transport in self.transports:
            await transport.aclose()


def _transport(connections: int, plain: bool) -> httpx.AsyncHTTPTransport:
    limits = httpx.Limits(
        max_connections=connections,
        max_keepalive_connections=connections,
        keepalive_expiry=KEEPALIVE_SECONDS,
    )
    transport = httpx.AsyncHTTPTransport(verify=_ssl_context(), limits=limits, trust_env=False)
    # httpx offers no way to choose httpcore's network backend: its pool is replaced by one
    # with the same limits on asyncio's streams (kept as is if httpx ever stores it otherwise).
    if plain and isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        transport._pool = httpcore.AsyncConnectionPool(
            max_connections=connections,
            max_keepalive_connections=connections,
            keepalive_expiry=KEEPALIVE_SECONDS,
            network_backend=AsyncioBackend(),
        )
    return transport


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's CAs), built once: building one takes ~50 ms."""
    return httpx.create_ssl_context()
