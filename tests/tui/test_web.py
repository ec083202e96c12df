"""`kontest --web`: the page and the websocket are refused without the per-launch token and
from a foreign Origin, over real HTTP on 127.0.0.1 (textual-serve's own application with the
token middleware, and the real `kontest --web` process)."""

from __future__ import annotations

import asyncio
import gc
import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from kontest_tui.tui.web import TokenServer, is_loopback

TOKEN = "test-token-0123456789"


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, TokenServer]]:
    """A TokenServer on a free loopback port, its page and socket real HTTP."""
    command = shlex.join([sys.executable, "-c", "import time; time.sleep(30)"])
    server = TokenServer(command, host="127.0.0.1", port=0, token=TOKEN)
    app = await server._make_app()
    app.on_startup.clear()  # the banner: printed by `kontest --web`, tested below
    test_server = TestServer(app, host="127.0.0.1", port=0)
    await test_server.start_server()
    server.public_url = f"http://127.0.0.1:{test_server.port}"  # the page names the real port
    try:
        yield f"127.0.0.1:{test_server.port}", server
    finally:
        await test_server.close()


async def status_of(url: str, headers: dict[str, str] | None = None) -> int:
    async with (
        aiohttp.ClientSession() as client,
        client.get(url, headers=headers or {}, allow_redirects=False) as response,
    ):
        return response.status


async def socket_status(url: str, headers: dict[str, str]) -> int:
    """101 when the websocket opened, else the HTTP status it was refused with."""
    async with aiohttp.ClientSession() as client:
        try:
            async with client.ws_connect(url, headers=headers) as ws:
                await ws.close()
                return 101
        except aiohttp.WSServerHandshakeError as refused:
            return refused.status


async def test_page_needs_the_token(served: tuple[str, TokenServer]) -> None:
    address, _ = served
    assert await status_of(f"http://{address}/") == 403
    assert await status_of(f"http://{address}/?token=wrong") == 403
    assert await status_of(f"http://{address}/?token={TOKEN}") == 200
    # the page's own static files are the same for everyone
    assert await status_of(f"http://{address}/static/js/textual.js") == 200


async def test_page_sets_a_strict_cookie_that_opens_the_socket(
    served: tuple[str, TokenServer],
) -> None:
    address, _ = served
    jar = aiohttp.CookieJar(unsafe=True)  # keep cookies of an IP address, as a browser does
    async with aiohttp.ClientSession(cookie_jar=jar) as client:
        async with client.get(f"http://{address}/?token={TOKEN}") as page:
            cookie = page.headers["Set-Cookie"]
            body = await page.text()
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert f"ws://{address}/ws" in body
        origin = {"Origin": f"http://{address}"}
        async with client.ws_connect(f"ws://{address}/ws?width=80&height=24", headers=origin):
            pass  # the cookie the page set is the token


async def test_socket_refused_without_token_or_from_another_origin(
    served: tuple[str, TokenServer],
) -> None:
    address, _ = served
    own = {"Origin": f"http://{address}"}
    evil = {"Origin": "http://evil.example"}
    assert await socket_status(f"ws://{address}/ws", own) == 403
    assert await socket_status(f"ws://{address}/ws?token=nope", own) == 403
    assert await socket_status(f"ws://{address}/ws?token={TOKEN}", evil) == 403
    cookie = {**evil, "Cookie": f"kontest_token={TOKEN}"}
    assert await socket_status(f"ws://{address}/ws", cookie) == 403
    assert await socket_status(f"ws://{address}/ws?token={TOKEN}", own) == 101


async def test_rebound_host_name_is_refused_on_loopback(served: tuple[str, TokenServer]) -> None:
    address, _ = served
    port = address.rsplit(":", 1)[1]
    rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    assert await status_of(f"http://{address}/?token={TOKEN}", rebound) == 403


def test_loopback_names() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("[::1]")
    assert is_loopback("127.5.0.1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")
    assert not is_loopback("example.org")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def until_listening(port: int) -> None:
    """Wait (bounded) for the server to accept connections: it prints its address as it
    starts, a moment before its socket listens."""
    for _ in range(200):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise AssertionError(f"nothing listens on port {port}")


def kontest(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-m", "kontest_tui.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


async def test_kontest_web_prints_a_fresh_token_and_refuses_without_it() -> None:
    port = free_port()
    process = kontest("--web", "--port", str(port))
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]{20,})", line)
        assert found, line
        assert int(found.group(1)) == port
        await until_listening(port)
        assert await status_of(f"http://127.0.0.1:{port}/") == 403
        assert await status_of(found.group(0)) == 200
    finally:
        process.terminate()
        process.communicate(timeout=30)


async def test_kontest_web_warns_off_loopback_and_says_a_taken_port_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = kontest("--web", "--port", str(port))
        out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "token=" not in out  # no address to open for a server that never listened
    assert err.startswith("kontest: error: --web: cannot listen on 127.0.0.1:")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1

    process = kontest("--web", "--host", "0.0.0.0", "--port", str(free_port()))
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline(), process.stdout.readline()]
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert "token=" in lines[0]
    assert lines[1].startswith("warning: listening on 0.0.0.0")


async def app_processes_ended(patience_s: float = 20.0) -> None:
    """Wait (bounded) for the explorer processes textual-serve started in this loop to end,
    then close their transports (textual-serve leaves them to the collector, whose __del__
    would then fail on a closed loop)."""
    loop = asyncio.get_running_loop()
    transports = [
        found
        for found in gc.get_objects()
        if isinstance(found, asyncio.SubprocessTransport) and getattr(found, "_loop", None) is loop
    ]
    deadline = loop.time() + patience_s
    while any(t.get_returncode() is None for t in transports) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    for transport in transports:
        if transport.get_returncode() is None:
            transport.kill()
        transport.close()


OPEN_RESULTS = """
import sys
from kontest_tui.tui.app import KontestApp


class OnResults(KontestApp):
    def on_mount(self) -> None:  # after the app's own (Textual calls both): results on top
        self.call_later(self.open_results, sys.argv[2])


OnResults(db=sys.argv[1]).run()
"""


async def test_a_card_saved_in_the_browser_arrives_as_downloads(tmp_path, db_path: str) -> None:  # noqa: ANN001
    """In --web, `s` sends the card to the browser (writing it on the server's disk would
    give the user nothing). Through textual-serve's own page protocol (the websocket a
    browser opens, then /download/KEY): the explorer on a session's results, `n` then `s`, and the card's three
    files arrive as downloads."""
    from tests.support.sessions import store_sessions

    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)])
    script = tmp_path / "on_results.py"
    script.write_text(OPEN_RESULTS, encoding="utf-8")
    command = shlex.join([sys.executable, str(script), db_path, session_id])
    server = TokenServer(command, host="127.0.0.1", port=0, token=TOKEN)
    app = await server._make_app()
    app.on_startup.clear()
    test_server = TestServer(app, host="127.0.0.1", port=0)
    await test_server.start_server()
    address = f"127.0.0.1:{test_server.port}"
    origin = {"Origin": f"http://{address}"}
    screen = ""  # what the terminal received, as text
    keys: list[str] = []
    delivered: dict[str, str] = {}  # file name -> content
    try:
        async with (
            aiohttp.ClientSession() as client,
            client.ws_connect(
                f"ws://{address}/ws?token={TOKEN}&width=120&height=36", headers=origin
            ) as ws,
        ):
            await ws.send_json(["resize", {"width": 120, "height": 36}])
            deadline = asyncio.get_running_loop().time() + 60
            while len(delivered) < 3:
                left = deadline - asyncio.get_running_loop().time()
                assert left > 0, f"timed out: keys {keys}, files {sorted(delivered)}"
                message = await ws.receive(timeout=left)
                if message.type == aiohttp.WSMsgType.BINARY:
                    screen = (screen + message.data.decode("utf-8", "replace"))[-200_000:]
                elif message.type == aiohttp.WSMsgType.TEXT:
                    kind, *rest = message.json()
                    if kind == "deliver_file_start":
                        async with client.get(
                            f"http://{address}/download/{rest[0]}?token={TOKEN}"
                        ) as download:
                            assert download.status == 200
                            disposition = download.headers["Content-Disposition"]
                            name = disposition.split("filename=")[1]
                            delivered[name] = await download.text()
                else:
                    raise AssertionError(f"the socket closed: {message}")
                if not keys and "Next error" in screen:  # the results' footer is drawn
                    keys.append("n")
                    await ws.send_json(["stdin", "n"])
                elif keys == ["n"] and "Fact tested" in screen:  # the error's card is shown
                    keys.append("s")
                    await ws.send_json(["stdin", "s"])
            # ctrl+q: the explorer ends and the server closes the socket (its process waited).
            await ws.send_json(["stdin", "\x11"])
            while not ws.closed:
                message = await ws.receive(timeout=30)
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    break
    finally:
        await app_processes_ended()
        await test_server.close()
    stem = f"kontest-{session_id}-error-1"
    assert sorted(delivered) == [f"{stem}.html", f"{stem}.md", f"{stem}.svg"]
    assert "Fact tested" in delivered[f"{stem}.md"]
    assert delivered[f"{stem}.html"].lstrip().lower().startswith("<!doctype html")
