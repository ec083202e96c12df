"""Real local HTTP servers for the model tests: `kontest sim serve` and a misbehaving one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from kontest_tui.models.sim.server import SimServer

ROOT = Path(__file__).resolve().parents[2]


def start_sim_server(*args: str) -> tuple[subprocess.Popen[str], str]:
    """Start `kontest sim serve --port 0 ARGS` and return the process and its URL (first line)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "kontest_tui.cli", "sim", "serve", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("http://127.0.0.1:"):
        process.kill()
        error = process.stderr.read() if process.stderr is not None else ""
        raise RuntimeError(f"sim server did not start: {line!r} {error!r}")
    return process, line


@contextmanager
def running_sim_server(*args: str) -> Iterator[str]:
    """`start_sim_server` as a context: yields the base URL, stops the process after."""
    process, url = start_sim_server(*args)
    try:
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextmanager
def sim_server_thread(profile: str = "default", **switches: object) -> Iterator[SimServer]:
    """A `SimServer` with `switches` (models/sim/switches.py) on 127.0.0.1, in a thread with an
    event loop of its own (so a command run in the test's thread can reach it): yields the
    server (`url`, `posts` by path), stops it after. Cheaper than a `kontest sim serve`
    subprocess."""
    import asyncio

    from kontest_tui.models.sim.switches import ServeSwitches

    server = SimServer(profile=profile, switches=ServeSwitches(**switches))  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 resets connections when 16 arrive at once


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threaded 127.0.0.1 server for `handler`: yields its base URL, shuts it down after."""
    server = _Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class MisbehavingHandler(BaseHTTPRequestHandler):
    """Answers according to the request's model name: status-401, status-404, status-500,
    status-429 (Retry-After: 7), sleep (3 s), garbage (not JSON), truncated (body cut),
    alternate-401 (401 and "Yes" in turn). `posts` counts the POSTs per model name;
    /models/NAME (the connection check) knows the status-*, alternate-* and truncated names."""

    protocol_version = "HTTP/1.1"
    posts: Counter[str] = Counter()

    def log_message(self, format: str, *args: object) -> None:  # silence
        return

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout test)

    def do_GET(self) -> None:
        if self.path.endswith("/models") or self.path.endswith("/api/tags"):
            auth = self.headers.get("Authorization")
            if auth != "Bearer good-key":
                self._send(401, b'{"error": {"message": "Incorrect API key provided"}}')
                return
            body = {"data": [{"id": "known"}], "models": [{"name": "known:latest"}]}
            self._send(200, json.dumps(body).encode())
            return
        if any(f"/models/{name}" in self.path for name in ("status-", "alternate-", "truncated")):
            self._send(200, json.dumps({"id": self.path.rsplit("/", 1)[1]}).encode())
            return
        self._send(404, b'{"error": "not found"}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        data = json.loads(self.rfile.read(length) or b"{}")
        model = str(data.get("model", ""))
        type(self).posts[model] += 1
        if model == "alternate-401":
            if type(self).posts[model] % 2:
                model = "status-401"
            else:
                chunk = {"choices": [{"delta": {"content": "Yes"}, "finish_reason": "stop"}]}
                body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
                self._send(200, body)
                return
        if model.startswith("status-"):
            status = int(model.removeprefix("status-"))
            headers = {"Retry-After": "7"} if status == 429 else {}
            message = f"model '{model}' not found" if status == 404 else "failure"
            self._send(status, json.dumps({"error": {"message": message}}).encode(), headers)
        elif model == "sleep":
            time.sleep(3)
            self._send(200, b"{}")
        elif model == "garbage":
            self._send(200, b"<html>not json</html>")
        elif model == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"choices": [')
            self.wfile.flush()
            self.close_connection = True
        else:
            self._send(200, b'{"choices": [{"message": {"content": "Yes"}}]}')


class LeakyHandler(BaseHTTPRequestHandler):
    """An OpenAI-style server that echoes the caller's credentials in its errors, as careless
    proxies do. Under /deny/ every request is a 401 quoting the Authorization header (the
    connection check); under /v1/ the chat calls cycle through a 401 body with the header, a
    500 body with the bare key, a 400 body with the header as a Python dict, an in-stream
    error with `api_key=KEY`, and a plain "Yes" answer."""

    protocol_version = "HTTP/1.1"
    calls = 0

    def log_message(self, format: str, *args: object) -> None:  # silence
        return

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _auth(self) -> str:
        return self.headers.get("Authorization", "")

    def _key(self) -> str:
        return self._auth().removeprefix("Bearer ")

    def do_GET(self) -> None:
        if self.path.startswith("/deny/"):
            self._send(401, f"Unauthorized: Authorization: {self._auth()}".encode(), "text/plain")
            return
        body = {"data": [{"id": "leaky"}]}
        self._send(200, json.dumps(body).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        if self.path.startswith("/deny/"):
            self._send(401, f"Unauthorized: Authorization: {self._auth()}".encode(), "text/plain")
            return
        step = type(self).calls % 5
        type(self).calls += 1
        if step == 0:
            message = f"invalid credentials {self._auth()}"
            self._send(401, json.dumps({"error": {"message": message}}).encode())
        elif step == 1:
            message = f"upstream failed for key {self._key()} (quota)"
            self._send(500, json.dumps({"error": {"message": message}}).encode())
        elif step == 2:
            headers = {"authorization": self._auth(), "content-type": "application/json"}
            self._send(400, json.dumps({"error": f"bad request, headers: {headers!r}"}).encode())
        elif step == 3:
            error = {"error": {"message": f"quota exceeded for api_key={self._key()}"}}
            body = f"data: {json.dumps(error)}\n\n".encode()
            self._send(200, body, "text/event-stream")
        else:
            chunk = {"choices": [{"delta": {"content": "Yes"}, "finish_reason": "stop"}]}
            body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
            self._send(200, body, "text/event-stream")


class ProxyHandler(BaseHTTPRequestHandler):
    """Ollama- and OpenAI-style endpoints that behave like the proxies and servers met in use,
    chosen by the request's model name; every chat request body is kept in `payloads`.

    Ollama (/api/...): GET /api/tags lists the models below; POST /api/show answers 200 for
    any name (a lying proxy); under /none/ every path is 404 (no Ollama API there).
    Models: generate-proxy (`{"response": ..., "done": ...}` lines, no `message`), slow ("Yes"
    then a 3 s hang), stall ("Ye" then a 3 s hang), length (done_reason "length"), empty (an
    empty `message`), thinker (Ollama: it thinks until the length limit unless the request
    says `"think": false`), anything else answers "Yes". OpenAI (/v1/...): the same names on /v1/chat/completions (SSE),
    and overloaded (HTTP 503 to every chat), parrot (the question and the chat template's
    tokens: a base model in chat mode), nologprobs (HTTP 400 to a request asking for logprobs).
    A chat POSTed under /as/NAME/ behaves as model NAME whatever the request names (a pool's
    replicas share one model name).
    """

    protocol_version = "HTTP/1.1"
    payloads: list[dict[str, Any]] = []
    authorizations: list[str] = []  # the Authorization header of every chat request
    TAGS = (
        "generate-proxy",
        "slow",
        "stall",
        "length",
        "empty",
        "thinker",
        "webpage",
        "good",
        "overloaded",
        "parrot",
        "nologprobs",
    )

    def log_message(self, format: str, *args: object) -> None:  # silence
        return

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):  # a client that gave up (a stopped run)
            self.close_connection = True

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, lines: list[bytes], hang: float = 0.0) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for line in lines:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
            time.sleep(hang)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self) -> None:
        if self.path.startswith("/none/"):
            self._send(404, b"404 page not found")
        elif self.path == "/api/tags":
            models = [{"name": f"{name}:latest", "model": f"{name}:latest"} for name in self.TAGS]
            self._send(200, json.dumps({"models": models}).encode())
        elif self.path == "/v1/models":
            self._send(200, json.dumps({"data": [{"id": name} for name in self.TAGS]}).encode())
        else:
            self._send(404, b'{"error": "not found"}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        data = json.loads(self.rfile.read(length) or b"{}")
        if self.path.startswith("/none/"):
            self._send(404, b"404 page not found")
            return
        if self.path == "/api/show":
            self._send(200, json.dumps({"modelfile": "FROM anything"}).encode())
            return
        type(self).payloads.append(data)
        type(self).authorizations.append(self.headers.get("Authorization", ""))
        model = str(data.get("model", "")).removesuffix(":latest")
        if self.path.startswith("/as/"):  # /as/NAME/api/chat: as model NAME (a pool's replica)
            _, _, model, rest = self.path.split("/", 3)
            self.path = f"/{rest}"
        if self.path == "/api/chat" and model == "webpage":  # a web server, not Ollama
            self.send_response(200)
            body = b"<html><body>Welcome</body></html>"
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/api/chat":
            self._ollama(model, data)
        elif self.path == "/v1/chat/completions":
            self._openai(model, data)
        else:
            self._send(404, b'{"error": "not found"}')

    def _ollama(self, model: str, data: dict[str, object]) -> None:
        stream = bool(data.get("stream", True))

        def message(text: str, done: bool, **extra: object) -> bytes:
            body = {"model": model, "message": {"role": "assistant", "content": text}}
            return json.dumps({**body, "done": done, **extra}).encode() + b"\n"

        if model == "generate-proxy":
            lines = [
                json.dumps({"model": model, "response": "Yes", "done": False}).encode() + b"\n",
                json.dumps({"model": model, "response": "", "done": True}).encode() + b"\n",
            ]
        elif model in ("slow", "stall"):
            self._stream([message("Yes" if model == "slow" else "Ye", False)], hang=3.0)
            return
        elif model == "thinker" and data.get("think") is not False:
            thought = {"role": "assistant", "content": "", "thinking": "Ireland is an island"}
            lines = [
                json.dumps({"model": model, "message": thought, "done": False}).encode() + b"\n",
                message("", True, done_reason="length", eval_count=64),
            ]
        elif model == "length":
            lines = [
                message("Yes", False),
                message(", because", False),
                message("", True, done_reason="length", eval_count=2),
            ]
        elif model == "empty":
            lines = [message("", True, done_reason="stop", eval_count=0)]
        else:
            lines = [message("Yes", False), message("", True, done_reason="stop", eval_count=1)]
        if stream:
            self._stream(lines)
        else:
            self._send(200, lines[-1] if model != "generate-proxy" else lines[0])

    def _openai(self, model: str, data: dict[str, object]) -> None:
        def chunk(text: str, finish: str | None = None) -> bytes:
            body = {"choices": [{"delta": {"content": text}, "finish_reason": finish}]}
            return f"data: {json.dumps(body)}\n\n".encode()

        if model == "nologprobs" and "logprobs" in data:  # OpenAI's reasoning models
            message = "logprobs are not supported with this model"
            self._send(400, json.dumps({"error": {"message": message}}).encode())
            return
        if model == "parrot":  # a base model asked in chat mode: it goes on with the template
            messages = data.get("messages")
            last = messages[-1] if isinstance(messages, list) and messages else {}
            question = str(last.get("content", "")) if isinstance(last, dict) else ""
            text = f"{question}<|im_end|>\n<|im_start|>user\n"
            self._stream([chunk(text, "length"), b"data: [DONE]\n\n"])
            return

        if model in ("slow", "stall"):
            self._stream([chunk("Yes" if model == "slow" else "Ye")], hang=3.0)
        elif model == "overloaded":
            self._send(503, b'{"error": {"message": "overloaded"}}')
        elif model == "length":
            self._stream([chunk("Yes"), chunk(", because", "length"), b"data: [DONE]\n\n"])
        else:
            self._stream([chunk("Yes", "stop"), b"data: [DONE]\n\n"])
