"""The spec shape of a model on an HTTP server, shared by the providers that have one.

    PREFIX:MODEL[@URL]                  one server (the provider's default URL when none)
    PREFIX:MODEL@URL1[*N],URL2[*N],...  one model on several endpoints (models/pool.py;
                                        *N caps the calls in flight on that endpoint)

The model name ends at the first `@`; a URL without scheme gets `http://`; credentials in a
URL are refused (keys come from the environment). The canonical text drops the default URL.
URLs are checked with the standard library, so a spec parses without importing httpx.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Protocol
from urllib.parse import urlsplit

from kontest_tui.errors import ModelSpecError
from kontest_tui.models.provider import ModelSpec
from kontest_tui.redact import has_secret
from kontest_tui.validate_input import check_port


class _ServerClient(Protocol):
    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...


async def served_models(client: _ServerClient) -> list[str]:
    """The models a server's client lists, the client closed after."""
    try:
        return await client.list_models()
    finally:
        await client.aclose()


_PORT = re.compile(r"-?\d+")
_DOTTED_NUMBERS = re.compile(r"[\d.]+")


def host_of(url: str) -> str:
    """The host of a URL, lower-cased ("" when there is none or the URL does not parse)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _port_of(netloc: str, spec: str) -> int | None:
    """The port written in a URL's authority (None: none written), checked for range."""
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):  # an IPv6 literal: the port follows its bracket
        end = hostport.find("]")
        if end < 0:
            raise ModelSpecError(f"bad URL in model spec {spec!r}")
        text = hostport[end + 1 :].removeprefix(":") if hostport[end + 1 :] else ""
    else:
        text = hostport.partition(":")[2] if ":" in hostport else ""
    if not text:
        return None
    if not _PORT.fullmatch(text):
        raise ModelSpecError(f"bad URL in model spec {spec!r}")
    return int(text)


def check_url(url: str, spec: str, key_env: str | None = None) -> str:
    """A server URL of a spec, checked: http(s) with a host, a port in range, no credentials
    (`key_env`: the environment variable a key goes in instead); `http://` added when there
    is no scheme, without a trailing slash."""
    if "://" not in url:
        url = f"http://{url}"
    if any(ord(char) <= 32 or ord(char) == 127 for char in url):
        raise ModelSpecError(f"bad URL in model spec {spec!r}")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        raise ModelSpecError(f"bad URL in model spec {spec!r}") from None
    if parts.scheme not in ("http", "https") or not host:
        raise ModelSpecError(f"bad URL in model spec {spec!r}: use http://HOST:PORT")
    if _DOTTED_NUMBERS.fullmatch(host) and host.count(".") == 3:
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ModelSpecError(f"bad URL in model spec {spec!r}") from None
    check_port(_port_of(parts.netloc, spec), f"bad URL in model spec {spec!r}", ModelSpecError)
    if "@" in parts.netloc or has_secret(url):
        instead = f"; use {key_env}" if key_env else ""
        raise ModelSpecError(f"credentials in the URL of model spec are not supported{instead}")
    return url.rstrip("/")


def normalise_base_url(url: str) -> str:
    """A base URL ending in /v1 when it was given without a path (http://host:8000 -> .../v1)."""
    url = url.rstrip("/")
    try:
        path = urlsplit(url).path
    except ValueError:
        return url
    return f"{url}/v1" if path in ("", "/") else url


def parse_server_spec(
    prefix: str,
    rest: str,
    text: str,
    default_url: str,
    *,
    base_path: bool = False,
    key_env: str | None = None,
) -> ModelSpec:
    """`MODEL[@URL[,URL...]]` after `prefix:`. `base_path`: a URL given without a path gets
    `/v1` (OpenAI-compatible servers); `key_env`: where the server's key goes."""
    name, at, url = rest.partition("@")
    name = name.strip()
    if not name:
        raise ModelSpecError(f"{prefix} needs a model name: {prefix}:MODEL[@URL]")
    if at and not url.strip():
        raise ModelSpecError(f"empty URL after '@' in model spec {text!r}")
    if "," in url:
        endpoints = (_pool_url(part, text, base_path, key_env) for part in url.split(","))
        return ModelSpec(prefix, name, ",".join(endpoints))
    if not at:
        return ModelSpec(prefix, name, default_url)
    checked = check_url(url.strip(), text, key_env)
    return ModelSpec(prefix, name, normalise_base_url(checked) if base_path else checked)


def _pool_url(part: str, spec: str, base_path: bool, key_env: str | None) -> str:
    """One endpoint of a pool spec, checked: URL[*N] with N >= 1 calls in flight at most."""
    url, star, cap = part.strip().partition("*")
    if not url.strip():
        raise ModelSpecError(f"empty URL in the endpoint list of model spec {spec!r}")
    if star and not (cap.strip().isdigit() and int(cap) >= 1):
        raise ModelSpecError(f"bad cap {cap!r} in model spec {spec!r}: use URL*N with N >= 1")
    checked = check_url(url.strip(), spec, key_env)
    if base_path:
        checked = normalise_base_url(checked)
    return f"{checked}*{int(cap)}" if star else checked


def server_spec_text(prefix: str, name: str, url: str | None, default_url: str) -> str:
    """`prefix:MODEL`, with `@URL` when the URL is not the default one."""
    if url and url != default_url:
        return f"{prefix}:{name}@{url}"
    return f"{prefix}:{name}"


def first_endpoint(spec: ModelSpec, default_url: str) -> str:
    """The URL of a spec's only (or first) endpoint, without its cap."""
    return (spec.url or default_url).split(",")[0].partition("*")[0]
