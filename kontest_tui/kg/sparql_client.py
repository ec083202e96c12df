"""A polite SPARQL client: SPARQLWrapper with JSON results, retries, timeouts and a cache.

`SparqlClient.select(query)` returns the rows of a SELECT as `{variable: value}` dicts. It
sends a descriptive User-Agent, POSTs the query (long VALUES lists fit), retries 429 and 5xx
answers and connection failures with exponential backoff honouring Retry-After, and turns
every failure into one `WikidataError`. Results are cached per query (see `kg.cache`).
"""

from __future__ import annotations

import email.utils
import json
import os
import time
import urllib.error
from collections.abc import Callable
from datetime import UTC, datetime

from SPARQLWrapper import JSON, POST, URLENCODED, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

from kontest_tui import __version__
from kontest_tui.errors import WikidataError

from .cache import QueryCache

WIKIDATA_ENDPOINT = "https://query.wikidata.org/sparql"
USER_AGENT = (
    f"kontest-tui/{__version__} (KONTEST knowledge-graph consistency testing of language models; "
    "batched queries, cached results) SPARQLWrapper/2"
)
_RETRY_STATUSES = {429, 500, 502, 503, 504}
_MAX_WAIT = 120.0


def default_user_agent() -> str:
    """The User-Agent sent to Wikidata; `KONTEST_USER_AGENT` (e.g. with your contact) overrides it."""
    return os.environ.get("KONTEST_USER_AGENT", "").strip() or USER_AGENT


class SparqlClient:
    """Runs SELECT queries against one endpoint; counts the HTTP requests it sends."""

    def __init__(
        self,
        endpoint: str = WIKIDATA_ENDPOINT,
        *,
        cache: QueryCache | None = None,
        use_cache: bool = True,
        refresh: bool = False,
        timeout: float = 90.0,
        retries: int = 4,
        backoff: float = 1.0,
        sleep: Callable[[float], None] | None = None,
        user_agent: str | None = None,
    ) -> None:
        if not endpoint.startswith(("http://", "https://")):
            raise WikidataError(f"the SPARQL endpoint must be an http(s) URL, got {endpoint!r}")
        self.endpoint = endpoint
        self.cache = (cache or QueryCache()) if use_cache else None
        self.refresh = refresh
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep or (lambda seconds: time.sleep(seconds))
        self.user_agent = user_agent or default_user_agent()
        self.requests = 0
        self.cache_hits = 0
        self.fetched: list[str] = []

    def select(self, query: str) -> list[dict[str, str]]:
        """The rows of a SELECT query, from the cache when present (unless `refresh`)."""
        if self.cache is not None and not self.refresh:
            cached = self.cache.get(self.endpoint, query)
            if cached is not None:
                self.cache_hits += 1
                self.fetched.append(cached.fetched)
                return cached.rows
        rows = self._fetch(query)
        if self.cache is not None:
            self.fetched.append(self.cache.put(self.endpoint, query, rows).fetched)
        else:
            self.fetched.append(datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        return rows

    def _fetch(self, query: str) -> list[dict[str, str]]:
        attempt = 0
        while True:
            try:
                return parse_results(self._send(query), self.endpoint)
            except _Retryable as problem:
                if attempt >= self.retries:
                    raise WikidataError(
                        f"SPARQL endpoint {self.endpoint} failed after {attempt + 1} attempts: {problem.reason}"
                    ) from None
                wait = problem.retry_after
                if wait is None:
                    wait = self.backoff * (2**attempt)
                self.sleep(min(max(wait, 0.0), _MAX_WAIT))
                attempt += 1

    def _send(self, query: str) -> bytes:
        wrapper = SPARQLWrapper(self.endpoint, agent=self.user_agent)
        wrapper.setQuery(query)
        wrapper.setMethod(POST)
        wrapper.setRequestMethod(URLENCODED)
        wrapper.setReturnFormat(JSON)
        wrapper.setTimeout(self.timeout)
        self.requests += 1
        try:
            response = wrapper.query().response
            return response.read()
        except urllib.error.HTTPError as error:
            if error.code in _RETRY_STATUSES:
                raise _Retryable(f"HTTP {error.code}", parse_retry_after(error.headers.get("Retry-After"))) from None
            raise WikidataError(f"SPARQL endpoint {self.endpoint} answered HTTP {error.code}") from None
        except SPARQLWrapperException as error:
            name = type(error).__name__
            if name == "EndPointInternalError":
                raise _Retryable("HTTP 500 (internal error)", None) from None
            if name == "QueryBadFormed":
                raise WikidataError(f"SPARQL endpoint {self.endpoint} rejected the query as malformed (HTTP 400)") from None
            if name == "EndPointNotFound":
                raise WikidataError(f"SPARQL endpoint {self.endpoint} not found (HTTP 404)") from None
            raise WikidataError(f"SPARQL endpoint {self.endpoint} failed: {name}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            raise _Retryable(f"cannot reach the endpoint ({reason})", None) from None


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def parse_results(raw: bytes, endpoint: str = "endpoint") -> list[dict[str, str]]:
    """Rows of a SPARQL JSON result document; a clear WikidataError when it is malformed."""
    try:
        data = json.loads(raw)
        variables = data["head"]["vars"]
        bindings = data["results"]["bindings"]
        if not isinstance(variables, list) or not isinstance(bindings, list):
            raise TypeError("vars/bindings are not lists")
        return [
            {name: str(cell["value"]) for name, cell in binding.items()}
            for binding in bindings
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise WikidataError(
            f"SPARQL endpoint {endpoint} returned malformed JSON results ({type(error).__name__})"
        ) from None
