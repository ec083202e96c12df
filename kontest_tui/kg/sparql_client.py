"""A polite SPARQL client: SPARQLWrapper with JSON results, retries, timeouts and a cache.

`SparqlClient.select(query)` returns the rows of a SELECT as `{variable: value}` dicts. It
sends a User-Agent naming a contact (Wikimedia's User-Agent policy), POSTs the query (long
VALUES lists fit), retries 429 and 5xx answers and connection failures with exponential
backoff honouring Retry-After, and turns every failure into one `WikidataError`.

A query the server gave up on (Blazegraph answers HTTP 500 with a java `TimeoutException`
after its 60 s limit) or that outlasted the client's timeout (55 s, below the server's) is
not repeated: it raises `QueryTimeoutError` at once, so the builder can split the chunk
instead of spending the service's query-time quota on the same query again. Results, and
such timeouts, are cached per query (see `kg.cache`).
"""

from __future__ import annotations

import ast
import email.utils
import json
import os
import re
import time
import urllib.error
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

from SPARQLWrapper import JSON, POST, URLENCODED, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

from kontest_tui import __version__
from kontest_tui.errors import InvalidInputError, WikidataError
from kontest_tui.redact import scrub

from .cache import QueryCache

WIKIDATA_ENDPOINT = "https://query.wikidata.org/sparql"
USER_AGENT_POLICY = "https://meta.wikimedia.org/wiki/User-Agent_policy"
SERVER_TIME_LIMIT = 60.0  # seconds: the Wikidata Query Service stops a query after this
DEFAULT_TIMEOUT = 55.0  # below the server's limit, so the client never waits for a dead query
_PURPOSE = "KONTEST knowledge-graph consistency testing of language models; batched queries, cached results"
USER_AGENT = f"kontest-tui/{__version__} ({_PURPOSE}) SPARQLWrapper/2"
_RETRY_STATUSES = {429, 500, 502, 503, 504}
_MAX_WAIT = 120.0
_TIMEOUT_MARKERS = ("TimeoutException", "Query deadline is expired")
_CONTACT = re.compile(r"^[!-~](?:[ -~]{0,198}[!-~])?$")  # printable ASCII, no edge spaces


class QueryTimeoutError(WikidataError):
    """The endpoint (or the client's timeout) gave up on a query; it is not repeated."""

    title = "Query timeout"


def validate_contact(text: str) -> str:
    """A contact for the User-Agent (e-mail, URL or wiki user page) on one line, else an error."""
    contact = text.strip() if isinstance(text, str) else ""
    if not _CONTACT.fullmatch(contact) or any(char in contact for char in "()\\"):
        raise InvalidInputError(
            f"the contact must be an e-mail address or URL in printable ASCII without parentheses, got {text!r}"
        )
    return contact


def default_user_agent(contact: str | None = None) -> str:
    """The User-Agent sent to the endpoint: names `contact` (else `KONTEST_CONTACT`) when given.

    Wikimedia asks for `client/version (contact) library/version`; `KONTEST_USER_AGENT`
    replaces the whole string.
    """
    override = os.environ.get("KONTEST_USER_AGENT", "").strip()
    if override:
        return override
    contact = contact if contact is not None else os.environ.get("KONTEST_CONTACT", "")
    if not contact.strip():
        return USER_AGENT
    return f"kontest-tui/{__version__} ({validate_contact(contact)}; {_PURPOSE}) SPARQLWrapper/2"


def contact_warning(endpoint: str, contact: str | None = None) -> str | None:
    """The one line saying that Wikimedia wants a contact, when a Wikimedia service is asked
    without one (no `contact`, KONTEST_CONTACT or KONTEST_USER_AGENT); else None."""
    host = (urlsplit(endpoint).hostname or "").lower()
    if not host.endswith((".wikidata.org", ".wikimedia.org")):
        return None
    if (contact or os.environ.get("KONTEST_CONTACT", "").strip()) or os.environ.get(
        "KONTEST_USER_AGENT", ""
    ).strip():
        return None
    return (
        f"{host} asks every client for a contact (Wikimedia's User-Agent policy) and may "
        "throttle or block those without: set KONTEST_CONTACT=you@example.org or pass --contact"
    )


def is_blazegraph(endpoint: str) -> bool:
    """True for the Wikidata/Wikimedia query services and self-run WDQS (Blazegraph) endpoints."""
    parts = urlsplit(endpoint)
    host = (parts.hostname or "").lower()
    return host.endswith((".wikidata.org", ".wikimedia.org")) or "/bigdata/" in parts.path


def display_endpoint(endpoint: str) -> str:
    """The endpoint URL for messages, with any user:password@ part masked."""
    parts = urlsplit(endpoint)
    if "@" not in parts.netloc:
        return endpoint
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def scrub_endpoint_text(text: str, limit: int = 200) -> str:
    """An endpoint's error text made safe to show: one line, secrets masked (the project's
    scrubber, before cutting, so no half key survives), at most `limit` characters."""
    line = scrub(" ".join(text.split()))
    return line if len(line) <= limit else line[: limit - 3] + "..."


_JAVA_EXCEPTION = re.compile(r"(?:[a-z_][\w$]*\.)+[\w$]*(?:Exception|Error)\b[^\n]*")


def _excerpt(body: str) -> str:
    """The telling part of an error body: Blazegraph's bodies repeat the whole query first
    (`SPARQL-QUERY: queryStr=...`), so the first java exception line when there is one, else
    the first non-empty line."""
    found = _JAVA_EXCEPTION.search(body)
    if found:
        return found.group(0)
    return next((line for line in body.splitlines() if line.strip()), "")


def _is_timeout_text(text: str) -> bool:
    return any(marker in text for marker in _TIMEOUT_MARKERS)


def _response_text(error: SPARQLWrapperException) -> str:
    """The server's body that SPARQLWrapper folded into the exception's message (as a bytes repr)."""
    message = str(error)
    _, found, tail = message.partition("Response:\n")
    if not found:
        return ""
    try:
        body = ast.literal_eval(tail.strip())
    except (ValueError, SyntaxError):
        return tail
    return body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)


class SparqlClient:
    """Runs SELECT queries against one endpoint; counts the HTTP requests it sends."""

    def __init__(
        self,
        endpoint: str = WIKIDATA_ENDPOINT,
        *,
        cache: QueryCache | None = None,
        use_cache: bool = True,
        refresh: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 4,
        backoff: float = 1.0,
        sleep: Callable[[float], None] | None = None,
        user_agent: str | None = None,
        contact: str | None = None,
    ) -> None:
        if not endpoint.startswith(("http://", "https://")):
            raise WikidataError(
                f"the SPARQL endpoint must be an http(s) URL, got {display_endpoint(endpoint)!r}"
            )
        self.endpoint = endpoint
        self.cache = (cache or QueryCache()) if use_cache else None
        self.refresh = refresh
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep or (lambda seconds: time.sleep(seconds))
        self.user_agent = user_agent or default_user_agent(contact)
        self.requests = 0
        self.cache_hits = 0
        self.fetched: list[str] = []

    @property
    def shown(self) -> str:
        """The endpoint as messages show it (credentials masked)."""
        return display_endpoint(self.endpoint)

    def select(self, query: str) -> list[dict[str, str]]:
        """The rows of a SELECT query, from the cache when present (unless `refresh`).

        Raises `QueryTimeoutError` (without retrying) when the query timed out, now or (from
        the cache) before.
        """
        if self.cache is not None and not self.refresh:
            cached = self.cache.get(self.endpoint, query)
            if cached is not None:
                self.cache_hits += 1
                self.fetched.append(cached.fetched)
                if cached.timed_out:
                    raise QueryTimeoutError(
                        f"SPARQL endpoint {self.shown}: the query timed out (cached)"
                    )
                return cached.rows
        try:
            rows = self._fetch(query)
        except QueryTimeoutError:
            if self.cache is not None:
                self.fetched.append(
                    self.cache.put(self.endpoint, query, [], timed_out=True).fetched
                )
            raise
        if self.cache is not None:
            self.fetched.append(self.cache.put(self.endpoint, query, rows).fetched)
        else:
            self.fetched.append(datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        return rows

    def _fetch(self, query: str) -> list[dict[str, str]]:
        attempt = 0
        while True:
            try:
                raw = self._send(query)
                try:
                    return parse_results(raw, self.shown)
                except WikidataError:
                    # Blazegraph streams results: a timeout after the first rows ends the body
                    # with the exception text instead of closing the JSON.
                    if _is_timeout_text(raw[-4000:].decode("utf-8", "replace")):
                        raise self._timeout("the server's time limit (mid-answer)") from None
                    raise
            except _Retryable as problem:
                if attempt >= self.retries:
                    raise WikidataError(
                        f"SPARQL endpoint {self.shown} failed after {attempt + 1} attempts: {problem.reason}"
                    ) from None
                wait = problem.retry_after
                if wait is None:
                    wait = self.backoff * (2**attempt)
                self.sleep(min(max(wait, 0.0), _MAX_WAIT))
                attempt += 1

    def _timeout(self, reason: str) -> QueryTimeoutError:
        return QueryTimeoutError(f"SPARQL endpoint {self.shown}: the query timed out ({reason})")

    def _send(self, query: str) -> bytes:
        wrapper = SPARQLWrapper(self.endpoint, agent=self.user_agent)
        wrapper.setQuery(query)
        wrapper.setMethod(POST)
        wrapper.setRequestMethod(URLENCODED)
        wrapper.setReturnFormat(JSON)
        wrapper.setTimeout(
            max(1, int(self.timeout))
        )  # whole seconds; 0 would mean no timeout at all
        self.requests += 1
        try:
            response = wrapper.query().response
            return response.read()
        except urllib.error.HTTPError as error:
            body = _read_body(error)
            if error.code == 403:
                raise WikidataError(self._forbidden_message()) from None
            if error.code in _RETRY_STATUSES:
                if _is_timeout_text(body):
                    raise self._timeout(
                        f"HTTP {error.code}, the server's {SERVER_TIME_LIMIT:.0f} s limit"
                    ) from None
                raise _Retryable(
                    _status_reason(error.code, body),
                    parse_retry_after(error.headers.get("Retry-After")),
                ) from None
            raise WikidataError(
                f"SPARQL endpoint {self.shown} answered {_status_reason(error.code, body)}"
            ) from None
        except SPARQLWrapperException as error:
            name = type(error).__name__
            body = _response_text(error)
            if name == "EndPointInternalError":
                if _is_timeout_text(body):
                    raise self._timeout(
                        f"HTTP 500, the server's {SERVER_TIME_LIMIT:.0f} s limit"
                    ) from None
                raise _Retryable(_status_reason(500, body, "internal error"), None) from None
            if name == "QueryBadFormed":
                raise WikidataError(
                    f"SPARQL endpoint {self.shown} rejected the query as malformed ({_status_reason(400, body)})"
                ) from None
            if name == "EndPointNotFound":
                raise WikidataError(f"SPARQL endpoint {self.shown} not found (HTTP 404)") from None
            raise WikidataError(f"SPARQL endpoint {self.shown} failed: {name}") from None
        except TimeoutError:
            # No answer within the client's timeout after the request went out (a connect
            # timeout arrives wrapped in URLError below and is retried like a refused connection).
            raise self._timeout(f"no answer within the client's {self.timeout:g} s") from None
        except (urllib.error.URLError, ConnectionError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            raise _Retryable(
                f"cannot reach the endpoint ({scrub_endpoint_text(str(reason))})", None
            ) from None

    def _forbidden_message(self) -> str:
        named = self.user_agent != USER_AGENT
        if named:
            advice = (
                f"the User-Agent sent was {scrub_endpoint_text(self.user_agent)!r}; if it names your contact, "
                "the service may be blocking this address or agent for a while"
            )
        else:
            advice = (
                "Wikimedia refuses clients whose User-Agent names no contact: set KONTEST_CONTACT "
                "(or pass --contact) to your e-mail address or a web page where you can be reached"
            )
        return f"SPARQL endpoint {self.shown} refused the request (HTTP 403 Forbidden); {advice} (see {USER_AGENT_POLICY})"


def _read_body(error: urllib.error.HTTPError) -> str:
    try:
        return error.read(65536).decode("utf-8", "replace")
    except (OSError, ValueError, AttributeError):
        return ""


def _status_reason(code: int, body: str, default: str = "") -> str:
    detail = scrub_endpoint_text(_excerpt(body)) or default
    return f"HTTP {code}" + (f": {detail}" if detail else "")


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
            {name: str(cell["value"]) for name, cell in binding.items()} for binding in bindings
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise WikidataError(
            f"SPARQL endpoint {endpoint} returned malformed JSON results ({type(error).__name__})"
        ) from None
