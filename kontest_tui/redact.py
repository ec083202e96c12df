"""The one secret scrubber: every error text from a model server or SPARQL endpoint passes here.

`scrub(text)` replaces, with `***`:

- the values of the API key variables in use: `OPENAI_API_KEY` and any environment variable
  whose name ends in `_API_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD` (values of 6+ characters),
  plus any value a client registered with `register_secret` (a key passed in code);
- `Bearer <token>` and `Basic <token>` credentials, wherever they appear;
- the value after `Authorization`, `Proxy-Authorization`, `X-API-Key`, `api_key`, `api-key`,
  `apikey`, `access_token`, `token`, `secret`, `password` followed by `:` or `=` (headers,
  query strings, JSON members: `"api_key": "..."`);
- OpenAI-shaped keys (`sk-` followed by 16+ key characters);
- the values in use in encoded forms, any character of them in any of these (mixed as a
  re-encoding proxy mixes them): percent-encoded once or more (`%73`, `%2573`), JSON-
  escaped (`\\u0073`), `\\x73`, HTML character references (`&#115;`, `&#x73;`,
  `&lowbar;`); the whole value as hex (`736b2d...`, bytes apart or not: `73 6b 2d`, `73:6b`);
  and base64 (a `user:key` Basic credential, with or without its `Basic ` prefix).

`KontestError` runs every message through it, so a `ModelError` or `WikidataError` is clean
from the moment it exists: what is stored (`responses.error`, the session message), exported,
logged or printed comes from there. The HTTP clients also scrub a server's error body before
quoting it. Stdlib only: this module sits below everything else.
"""

from __future__ import annotations

import base64
import functools
import html.entities
import os
import re
import threading

MASK = "***"
KEY_VARIABLES = ("OPENAI_API_KEY",)
_SECRET_NAME = re.compile(r"(?:_API_KEY|_APIKEY|_TOKEN|_SECRET|_PASSWORD)$", re.I)
_MIN_SECRET = 6

_CREDENTIAL = re.compile(r"\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=:\-]+", re.I)
_NAMED = re.compile(
    r"""(?P<name>\b(?:proxy-)?authorization|\bx-api-key|\bapi[-_]?key|\bapikey|\baccess[-_]?token
        |\brefresh[-_]?token|\btoken|\bsecret|\bpassword|\bpasswd)
        (?P<sep>["']?\s*[:=]\s*["']?)
        (?:(?:Bearer|Basic)\s+)?
        (?P<value>[^\s"',;&}\]<>]+)""",
    re.I | re.X,
)
_OPENAI_KEY = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")

_lock = threading.Lock()
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Scrub `value` from now on (a key given to a client in code, not through the env)."""
    if value and len(value) >= _MIN_SECRET:
        with _lock:
            _registered.add(value)


def secrets_in_use() -> list[str]:
    """The secret values to mask, longest first (so a key containing another goes whole).

    Reading the whole environment costs ~20 us, paid for every answer, so the list is kept
    until the environment's size, one of the secret variables found or the registered set
    changes (what setting, changing or removing a variable does)."""
    global _cached
    names, values, size, registered, secrets = _cached
    if (
        size == len(os.environ)
        and registered == len(_registered)
        and all(os.environ.get(name) == value for name, value in zip(names, values, strict=True))
    ):
        return secrets
    found = {
        name: value
        for name, value in os.environ.items()
        if (name in KEY_VARIABLES or _SECRET_NAME.search(name)) and len(value) >= _MIN_SECRET
    }
    with _lock:
        everything = set(found.values()) | _registered
        count = len(_registered)
    secrets = sorted(everything, key=len, reverse=True)
    _cached = (tuple(found), tuple(found.values()), len(os.environ), count, secrets)
    return secrets


# (secret variable names, their values, environment size, registered count, the list)
_cached: tuple[tuple[str, ...], tuple[str, ...], int, int, list[str]] = ((), (), -1, -1, [])


def scrub_values(text: str) -> str:
    """`text` with only the secret values in use masked (for answers: no pattern guessing),
    also where they are encoded: any character percent-encoded once or more (`%XX`,
    `%25XX`), JSON-escaped (`\\uXXXX`, `\\/`), as `\\xXX` or as an HTML character reference
    (`&#DDD;`, `&#xHH;`, `&name;`); the whole value as hex; and inside base64 (a Basic
    credential's `user:key`: the run of base64 text that holds the key's encoding at any
    alignment goes whole)."""
    for value in secrets_in_use() if text else ():
        if value in text:
            text = text.replace(value, MASK)
        escaped, hexed, fragments = _encoded_forms(value)
        if "%" in text or "\\" in text or "&" in text:
            text = escaped.sub(MASK, text)
        text = hexed.sub(MASK, text)
        for fragment in fragments:
            if fragment in text:
                text = _mask_runs_holding(text, fragment)
    return text


def _mask_runs_holding(text: str, fragment: str) -> str:
    """`text` with each run of base64 characters that holds `fragment` masked whole."""

    def mask(match: re.Match[str]) -> str:
        return MASK if fragment in match.group(0) else match.group(0)

    return _BASE64_RUN.sub(mask, text)


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]+=*")


def _entity_names() -> dict[str, list[str]]:
    """The HTML named character references of each ASCII character (`_`: `&lowbar;`)."""
    names: dict[str, list[str]] = {}
    for name, char in html.entities.html5.items():
        if len(char) == 1 and ord(char) < 0x80 and name.endswith(";"):
            names.setdefault(char, []).append(re.escape(f"&{name}"))
    return names


_ENTITY_NAMES = _entity_names()


@functools.lru_cache(maxsize=64)
def _encoded_forms(value: str) -> tuple[re.Pattern[str], re.Pattern[str], tuple[str, ...]]:
    """A pattern matching `value` with any of its characters encoded (percent-encoded once or
    more, JSON-escaped, `\\xXX`, an HTML character reference), a pattern matching its UTF-8
    bytes as hex (together, or apart by a space, `:` or `-`), and the base64 text its bytes
    encode to wherever they sit in a longer string (three alignments, standard and URL-safe
    alphabets; only the characters no neighbour changes)."""
    parts = []
    for char in value:
        code = ord(char)
        options = [re.escape(char)]
        if code < 0x80:
            options += [
                f"%(?:25)*{code:02x}",
                f"\\\\u{code:04x}",
                f"\\\\x{code:02x}",
                f"&#0*{code};?",
                f"&#x0*{code:x};?",
                *_ENTITY_NAMES.get(char, ()),
            ]
        if char == "/":
            options.append(r"\\/")
        parts.append(f"(?:{'|'.join(options)})")
    pattern = re.compile("".join(parts), re.I)
    data = value.encode("utf-8")
    hexed = re.compile("[ :-]?".join(f"{byte:02x}" for byte in data), re.I)
    fragments: list[str] = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode("ascii")
        stable = encoded[4 if shift else 0 : 4 * ((shift + len(data)) // 3)]
        if len(stable) >= 8:
            fragments += [stable, stable.replace("+", "-").replace("/", "_")]
    return pattern, hexed, tuple(dict.fromkeys(fragments))


def scrub(text: str) -> str:
    """`text` with every secret replaced by `***` (see the module docstring)."""
    if not text:
        return text
    text = scrub_values(text)
    text = _CREDENTIAL.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    text = _NAMED.sub(_mask_named, text)
    return _OPENAI_KEY.sub(MASK, text)


def _mask_named(match: re.Match[str]) -> str:
    if match.group("value") == MASK:
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{MASK}"


def has_secret(text: str) -> bool:
    """True when `scrub` would change `text` (a URL or spec carrying a credential)."""
    return scrub(text) != text
