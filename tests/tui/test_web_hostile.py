"""`kontest --web` under hostile or careless requests, over real HTTP on 127.0.0.1
(textual-serve's application with the token middleware and the server's own logging): its
terminal never shows the token (the access log printed `GET /?token=...` and the Referer on
every load), a request without a Host header is one line (it was a 40-line traceback with
the request's bytes), `/static/` lists no folder, and the page loads nothing from another
host (its font came from Google Fonts)."""

from __future__ import annotations

import asyncio
import io
import logging
import re
import shlex
import sys
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from rich.console import Console

from kontest_tui.tui.web import SERVER_LOGGERS, TokenServer

TOKEN = "hostile-token-0123456789"
LOADED = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)|url\(\s*["']?([^"')]+)""")


def hosts_loaded(page: str) -> set[str]:
    """The hosts of every address the page loads (scripts, styles, fonts, images)."""
    return {urlsplit(a or b).netloc for a, b in LOADED.findall(page)}


@pytest.fixture
async def logged() -> AsyncIterator[tuple[int, io.StringIO]]:
    """A TokenServer on a free loopback port with the logging `kontest --web` sets up,
    writing to a buffer: (its port, what its terminal shows)."""
    saved = {
        name: (logger.handlers[:], logger.level, logger.propagate)
        for name in SERVER_LOGGERS
        for logger in [logging.getLogger(name)]
    }
    command = shlex.join([sys.executable, "-c", "import time; time.sleep(30)"])
    server = TokenServer(command, host="127.0.0.1", port=0, token=TOKEN)
    terminal = io.StringIO()
    server.console = Console(file=terminal, width=300)
    server.initialize_logging()
    app = await server._make_app()
    app.on_startup.clear()
    test_server = TestServer(app, host="127.0.0.1", port=0)
    await test_server.start_server()
    server.public_url = f"http://127.0.0.1:{test_server.port}"
    assert test_server.port is not None
    try:
        yield test_server.port, terminal
    finally:
        await test_server.close()
        for name, (handlers, level, propagate) in saved.items():
            logger = logging.getLogger(name)
            logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate


async def raw_status(port: int, request: bytes) -> bytes:
    """The status line a raw request gets (what a browser's request never lacks: Host)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    line = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    return line


async def test_web_terminal_page_and_static_files(logged: tuple[int, io.StringIO]) -> None:
    port, terminal = logged
    base = f"http://127.0.0.1:{port}"
    url = f"{base}/?token={TOKEN}"
    async with aiohttp.ClientSession() as client:
        async with client.get(url, headers={"Referer": url}) as page:
            assert page.status == 200
            body = await page.text()
        for folder in ("/static/", "/static/css", "/static/fonts/"):
            async with client.get(base + folder) as listing:
                assert listing.status == 404, folder
        async with client.get(f"{base}/static/fonts/RobotoMono-VariableFont_wght.ttf") as font:
            assert font.status == 200
    assert hosts_loaded(body) == {f"127.0.0.1:{port}"}, hosts_loaded(body)
    assert "fonts/RobotoMono-VariableFont_wght.ttf" in body
    request = b"GET /?token=" + TOKEN.encode() + b" HTTP/1.1\r\n\r\n"
    assert (await raw_status(port, request)).startswith(b"HTTP/1.0 400")
    await asyncio.sleep(0.2)  # the access log line of the last request
    printed = terminal.getvalue()
    assert TOKEN not in printed, printed
    assert "Traceback" not in printed and "╭" not in printed, printed
    assert 'GET /?token=*** HTTP/1.1" 200' in printed and f'"{base}/?token=***"' in printed
    bad = [line for line in printed.splitlines() if "Host" in line]
    assert len(bad) == 1 and "Missing 'Host' header" in bad[0], printed
