"""`kontest --web` under hostile or careless requests, over real HTTP on 127.0.0.1 (the real
process): its terminal never shows the token again after the address it prints (the access
log printed `GET /?token=...` and the Referer on every load), a request without a Host
header is one line (it was a 40-line traceback with the request's bytes), `/static/` lists
no folder, and the page loads nothing from another host (its font came from Google Fonts)."""

from __future__ import annotations

import asyncio
import re
from urllib.parse import urlsplit

import aiohttp

from tests.tui.test_web import free_port, kontest, until_listening

LOADED = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)|url\(\s*["']?([^"')]+)""")


def hosts_loaded(page: str) -> set[str]:
    """The hosts of every address the page loads (scripts, styles, fonts, images)."""
    return {urlsplit(a or b).netloc for a, b in LOADED.findall(page)}


async def raw_request(port: int, request: bytes) -> bytes:
    """The status line a raw request gets (what a browser's request never lacks: Host)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    line = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    return line


async def test_web_terminal_page_and_static_files() -> None:
    port = free_port()
    process = kontest("--web", "--port", str(port))
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=([\w-]{20,})", banner)
        assert found, banner
        url, token = found.group(0), found.group(1)
        await until_listening(port)
        async with aiohttp.ClientSession() as client:
            async with client.get(url, headers={"Referer": url}) as page:
                assert page.status == 200
                body = await page.text()
            async with client.get(f"http://127.0.0.1:{port}/static/") as listing:
                assert listing.status == 404
            async with client.get(f"http://127.0.0.1:{port}/static/css") as listing:
                assert listing.status == 404
            font = f"http://127.0.0.1:{port}/static/fonts/RobotoMono-VariableFont_wght.ttf"
            async with client.get(font) as served:
                assert served.status == 200
        assert hosts_loaded(body) == {f"127.0.0.1:{port}"}, hosts_loaded(body)
        assert "fonts/RobotoMono-VariableFont_wght.ttf" in body
        no_host = await raw_request(port, b"GET /?token=" + token.encode() + b" HTTP/1.1\r\n\r\n")
        assert no_host.startswith(b"HTTP/1.0 400")
        await asyncio.sleep(0.3)  # the access log line of the last request
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    printed = out + err
    assert token not in printed, printed
    assert "Traceback" not in printed and "╭" not in printed, printed
    bad = [line for line in printed.splitlines() if "Host" in line]
    assert len(bad) == 1 and "Missing 'Host' header" in bad[0], printed
    assert "GET /?token=*** HTTP/1.1" in printed, printed
