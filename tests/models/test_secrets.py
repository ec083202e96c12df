"""Secrets never rest or print: the scrubber on hand-worked texts, then a run against a local
server that echoes the API key (401 body, 500 body, 400 body, in-stream error, connection
check), grepping the database, the exports, the reports and the CLI output for the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from kontest_tui.errors import ModelError, ModelSpecError, WikidataError
from kontest_tui.models.specs import parse_model_spec
from kontest_tui.redact import register_secret, scrub, scrub_values
from tests.support.cli import kontest

KEY = "kt-9f8e7d6c5b4a3210QQzz"  # not sk- shaped: only the env-value rule can catch it bare


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("invalid credentials Bearer abc.DEF-123", "invalid credentials Bearer ***"),
        ("Authorization: Bearer abc123", "Authorization: Bearer ***"),
        ("{'authorization': 'Basic dXNlcjpw'}", "{'authorization': 'Basic ***'}"),
        ('{"api_key": "zz-top-secret"}', '{"api_key": "***"}'),
        ("GET /v1?api_key=abc123&x=1", "GET /v1?api_key=***&x=1"),
        ("x-api-key: abcdef", "x-api-key: ***"),
        ("access_token=eyJhbGci.x.y;", "access_token=***;"),
        ("Authorization: secretvalue", "Authorization: ***"),
        ("your key sk-proj-ABCDEFGHIJKLMNOP1234 is wrong", "your key *** is wrong"),
    ],
)
def test_patterns_are_masked(text: str, expected: str) -> None:
    assert scrub(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Does Ireland have a Ulster?",
        "max_tokens=5 is too small; tokens: 3",
        "server error (HTTP 500) from openai at http://127.0.0.1:8000/v1: failure",
        "the token limit was reached",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert scrub(text) == text


def test_values_of_key_variables_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-424242")
    monkeypatch.setenv("KONTEST_PLAIN_SETTING", "ordinary-value")
    text = f"key {KEY} token tok-424242 home ordinary-value"
    assert scrub(text) == "key *** token *** home ordinary-value"
    assert scrub_values(f"answer: {KEY}") == "answer: ***"
    register_secret("registered-in-code-77")
    assert scrub("x registered-in-code-77 y") == "x *** y"


def test_every_kontest_error_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert KEY not in str(ModelError(f"upstream said {KEY}"))
    assert "***" in str(WikidataError("endpoint https://q.example/sparql?apikey=abc failed"))


def test_a_key_in_a_model_url_is_refused() -> None:
    with pytest.raises(ModelSpecError, match="credentials in the URL") as caught:
        parse_model_spec("openai:m@http://127.0.0.1:9/v1?api_key=abcdef123")
    assert "abcdef123" not in str(caught.value)


def test_an_echoed_key_never_rests_or_prints(
    leaky_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    db = tmp_path / "leak.db"
    printed: list[str] = []
    # the connection check: a 401 whose body quotes the Authorization header
    code, out, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "2",
        "--model",
        f"openai:leaky@{leaky_url}/deny/v1",
        "--db",
        db,
        "-q",
    )
    printed += [out, err]
    assert code != 0 and "unauthorized (HTTP 401)" in err and "Traceback" not in err
    # a run whose calls fail with the key in 401 / 500 / 400 bodies and in-stream errors
    code, out, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "2",
        "--model",
        f"openai:leaky@{leaky_url}/v1",
        "--db",
        db,
        "--max-attempts",
        "1",
        "--concurrency",
        "1",
        "--no-cache",
    )
    printed += [out, err]
    assert "Traceback" not in err
    for fmt in ("text", "json", "markdown", "csv"):
        code, out, err = kontest(capsys, "report", "--db", db, "--format", fmt)
        assert code == 0, err
        printed += [out, err]
    for fmt in ("jsonl", "csv"):
        code, out, err = kontest(capsys, "export", "--db", db, "--format", fmt)
        printed += [out, err]
        code, _, err = kontest(
            capsys, "export", "--db", db, "--format", fmt, "--out", tmp_path / f"x.{fmt}"
        )
        assert code == 0, err
    code, out, err = kontest(capsys, "sessions", "--db", db, "--json")
    printed += [out, err]
    everything = "\n".join(printed)
    # the server did echo it, and we saw each fault, masked
    assert everything.count("***") >= 4
    for fault in ("HTTP 401", "HTTP 500", "HTTP 400", "quota exceeded for api_key=***"):
        assert fault in everything
    assert KEY not in everything
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_encoded_forms_of_a_key_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Percent-encoded (canonical or not), JSON-escaped and base64 of `user:key` (with or
    without `Basic`, standard or URL-safe alphabet, any user length): each masked whole."""
    import base64
    import json as json_module
    from urllib.parse import quote

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    json_escaped = "".join(f"\\u{ord(char):04x}" for char in KEY)
    cases = {
        f"echo {quote(KEY, safe='')} end": "echo *** end",
        f"echo {''.join(f'%{ord(c):02X}' for c in KEY)} end": "echo *** end",
        f"echo {json_escaped} end": "echo *** end",
        f"body {json_module.dumps({'key': KEY})}": 'body {"key": "***"}',
    }
    for user in ("u", "ab", "alice", "bob1"):
        credential = base64.b64encode(f"{user}:{KEY}".encode()).decode()
        cases[f"auth {credential} end"] = "auth *** end"
        urlsafe = base64.urlsafe_b64encode(f"{user}:{KEY}".encode()).decode()
        cases[f"auth={urlsafe}"] = "auth=***"
    for text, expected in cases.items():
        assert scrub_values(text) == expected, text
        assert scrub(text) == expected, text
    plain = "Does Ireland have a Ulster? 100% yes \\u0041 QUJD"
    assert scrub_values(plain) == plain


def test_a_stored_url_gets_the_key_only_when_it_is_the_key_s_host(
    proxy_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Resuming a session (someone else's DB may name any URL) sends OPENAI_API_KEY only to
    the host OPENAI_BASE_URL names (default api.openai.com), and says so in one line."""
    from tests.models.model_test_servers import ProxyHandler

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{proxy_url}/v1")
    db = tmp_path / "s.db"
    spec = f"openai:overloaded@{proxy_url}/v1"
    ProxyHandler.authorizations.clear()
    run = ["run", "--kg", "places", "--limit", "1", "--db", db, "-q", "--timeout", "0.2"]
    code, _, err = kontest(capsys, *run, "--model", spec, "--max-attempts", "1")
    assert code == 1, err  # every turn failed (HTTP 503): the session is left to resume
    assert ProxyHandler.authorizations and set(ProxyHandler.authorizations) == {f"Bearer {KEY}"}
    resume = ["run", "--resume", "", "--db", db, "-q", "--timeout", "0.2", "--max-attempts", "1"]
    ProxyHandler.authorizations.clear()
    code, _, err = kontest(capsys, *resume)
    assert "not sent" not in err  # the stored URL is the key's host
    assert set(ProxyHandler.authorizations) == {f"Bearer {KEY}"}
    monkeypatch.delenv("OPENAI_BASE_URL")  # the key is for api.openai.com now
    ProxyHandler.authorizations.clear()
    code, _, err = kontest(capsys, *resume)
    notes = [line for line in err.splitlines() if line.startswith("kontest: note:")]
    assert len(notes) == 1 and "OPENAI_API_KEY is not sent to 127.0.0.1" in notes[0]
    assert ProxyHandler.authorizations and set(ProxyHandler.authorizations) == {""}
    ProxyHandler.authorizations.clear()
    code, _, err = kontest(capsys, *resume, "--model", spec)  # named by hand: sent
    assert set(ProxyHandler.authorizations) == {f"Bearer {KEY}"}
