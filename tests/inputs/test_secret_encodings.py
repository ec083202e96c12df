"""A key in any encoding a server or a re-encoding proxy may echo (percent-encoded once or
twice, hex, HTML character references, JSON escapes, base64) is masked: in error texts
(responses.error, the connection check's message), in answers, exports, reports and
everything printed. First the scrubber on each form, then a run over real HTTP against a
local server that echoes the key in every form."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.redact import scrub, scrub_values
from tests.models.model_test_servers import serving

KEY = "kt-9f8e7d6c5b4a3210QQzz_x.y"  # not sk- shaped: only the env-value rule catches it


def encodings(key: str) -> dict[str, str]:
    """Every form of `key` the scrubber must catch, by name."""
    data = key.encode()
    return {
        "raw": key,
        "percent": "".join(f"%{byte:02X}" for byte in data),
        "percent, some": key.replace("-", "%2d").replace("_", "%5F"),
        "percent twice": "".join(f"%25{byte:02X}" for byte in data),
        "percent twice, some": key.replace("-", "%252D").replace(".", "%252e"),
        "percent three times": "".join(f"%2525{byte:02x}" for byte in data),
        "hex": data.hex(),
        "HEX": data.hex().upper(),
        "hex bytes apart": " ".join(f"{byte:02x}" for byte in data),
        "hex with colons": ":".join(f"{byte:02X}" for byte in data),
        "backslash x": "".join(f"\\x{byte:02x}" for byte in data),
        "html decimal": "".join(f"&#{ord(char)};" for char in key),
        "html hex": "".join(f"&#x{ord(char):X};" for char in key),
        "html without semicolons": "".join(f"&#{ord(char)}" for char in key),
        "html zero-padded": "".join(f"&#x00{ord(char):x};" for char in key),
        "html named": key.replace("_", "&lowbar;").replace(".", "&period;"),
        "html mixed": key.replace("k", "&#107;").replace("f", "&#x66;").replace("-", "%2D"),
        "json": "".join(f"\\u{ord(char):04x}" for char in key),
        "base64 basic": base64.b64encode(f"user:{key}".encode()).decode(),
        "base64 url-safe": base64.urlsafe_b64encode(f"me:{key}".encode()).decode(),
    }


@pytest.mark.parametrize("form", list(encodings(KEY)))
def test_every_encoding_of_a_key_is_masked(monkeypatch, form) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    encoded = encodings(KEY)[form]
    for text in (f"echo {encoded} end", f'{{"detail": "{encoded}"}}', encoded):
        for scrubber in (scrub_values, scrub):
            masked = scrubber(text)
            assert "***" in masked and encoded not in masked, (form, masked)
            assert masked.replace("***", "") in ("echo  end", '{"detail": ""}', ""), masked


def test_ordinary_text_with_hex_entities_and_percents_is_left_alone(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    plain = "Yes &amp; no: 100% sure &#233;t&#xe9; 6b74 %25 \\x41 deadbeef 6b:74"
    assert scrub_values(plain) == plain


class EchoingHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that echoes the caller's key in every form: under /deny/
    a 401 holding them all (the connection check), under /v1/ chat calls that alternate a 500
    whose body holds one form and an answer ("Yes, ...") that holds the next."""

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

    def _forms(self) -> list[str]:
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        return list(encodings(key).values())

    def do_GET(self) -> None:
        if self.path.startswith("/deny/"):
            self._send(401, f"bad key: {' | '.join(self._forms())}".encode(), "text/plain")
            return
        self._send(200, json.dumps({"data": [{"id": "echo"}]}).encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/deny/"):
            self.do_GET()
            return
        forms = self._forms()
        step = type(self).calls
        type(self).calls += 1
        form = forms[(step // 2) % len(forms)]
        if step % 2 == 0:
            refusal = {"error": {"message": f"upstream refused {form}"}}
            self._send(500, json.dumps(refusal).encode())
            return
        chunk = {"choices": [{"delta": {"content": f"Yes, {form}"}, "finish_reason": "stop"}]}
        body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
        self._send(200, body, "text/event-stream")


@pytest.fixture
def echoing_url() -> Iterator[str]:
    EchoingHandler.calls = 0
    with serving(EchoingHandler) as url:
        yield url


def test_no_encoding_of_the_key_rests_or_prints(
    echoing_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    db = str(tmp_path / "echo.db")
    printed: list[str] = []

    def kontest(*argv: str) -> int:
        code = run_cli(list(argv))
        out, err = capsys.readouterr()
        printed.extend((out, err))
        assert "Traceback" not in err
        return code

    common = ["--kg", "places", "--limit", "7", "--db", db, "--no-cache"]
    assert kontest("run", *common, "--model", f"openai:echo@{echoing_url}/deny/v1", "-q") != 0
    assert "HTTP 401" in printed[-1]
    # 42 turns, one attempt each; a conversation's first turn shares its call with the same
    # question asked alone (run.executor), so about 30 calls: half failed with a form in the
    # error, half answers holding one
    kontest("run", *common, "--model", f"openai:echo@{echoing_url}/v1", "--max-attempts", "1")
    kontest("run", "--resume", "--db", db, "--max-attempts", "1", "-q")
    for fmt in ("text", "json", "markdown", "csv"):
        kontest("report", "--db", db, "--format", fmt)
    for fmt in ("jsonl", "csv"):
        kontest("export", "--db", db, "--format", fmt)
        kontest("export", "--db", db, "--format", fmt, "--out", str(tmp_path / f"x.{fmt}"))
    kontest("sessions", "--db", db, "--json")
    assert EchoingHandler.calls >= 30
    everything = "\n".join(printed)
    assert everything.count("***") >= 20
    files = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    for name, form in encodings(KEY).items():
        assert form not in everything, name
        assert form.encode() not in files, name
