"""A minimal HTTP/1.1 server side on asyncio streams for `kontest sim serve`: read one request,
write a whole response or a chunked stream (which a fault may cut mid-way)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

MAX_BODY = 16 * 1024 * 1024
MAX_HEADER_LINES = 100
SERVER_NAME = "kontest-sim"

_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


@dataclass(slots=True)
class HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool


class BadRequest(Exception):
    """A request the server cannot parse (answered with 400/411/413 and the connection closed)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def encode_json(data: object) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8", "surrogateescape")  # hostile answers: raw invalid bytes
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


async def read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
    """One HTTP/1.1 request, or None at a clean end of the connection."""
    line = await reader.readline()
    if not line:
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        raise BadRequest(400, "malformed request line")
    method, target, version = parts
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    else:
        raise BadRequest(400, "too many headers")
    body = b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        raise BadRequest(411, "chunked request bodies are not supported; send Content-Length")
    if "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError:
            raise BadRequest(400, "bad Content-Length") from None
        if length < 0 or length > MAX_BODY:
            raise BadRequest(413, "request body too large")
        body = await reader.readexactly(length)
    connection = headers.get("connection", "").lower()
    keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
    return HttpRequest(method, target.split("?", 1)[0], headers, body, keep_alive)


class Reply:
    """Writes one response: a whole body, or a chunked stream that can be cut mid-way."""

    def __init__(self, writer: asyncio.StreamWriter, keep_alive: bool) -> None:
        self.writer = writer
        self.keep_alive = keep_alive
        self.started = False  # headers sent

    def _head(self, status: int, content_type: str, extra: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"Server: {SERVER_NAME}"]
        lines.append(f"Content-Type: {content_type}")
        lines += [f"{name}: {value}" for name, value in extra.items()]
        if not self.keep_alive:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        cut: bool = False,
    ) -> None:
        """A complete response; with `cut`, only half the body is sent before the connection drops."""
        extra = {"Content-Length": str(len(body)), **(headers or {})}
        self.started = True
        if cut:
            self.writer.write(self._head(status, content_type, extra) + body[: len(body) // 2])
            await self.writer.drain()
            self.writer.transport.abort()
            self.keep_alive = False
            return
        self.writer.write(self._head(status, content_type, extra) + body)
        await self.writer.drain()

    async def start_stream(self, content_type: str) -> None:
        self.started = True
        self.writer.write(self._head(200, content_type, {"Transfer-Encoding": "chunked"}))

    async def chunk(self, data: bytes) -> None:
        self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await self.writer.drain()

    async def end_stream(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()

    def abort(self) -> None:
        self.keep_alive = False
        self.writer.transport.abort()
