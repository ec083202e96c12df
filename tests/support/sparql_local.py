"""A local SPARQL 1.1 endpoint over a pyoxigraph store, served on 127.0.0.1.

For tests, benchmarks and offline demos: load Wikidata-shaped triples, start the server and
point `kontest kg build --endpoint` at `endpoint.url`. It answers GET and POST (form or
`application/sparql-query`) with `application/sparql-results+json`, counts requests, and can
inject failures (an HTTP status with headers, or a malformed body) for the next requests, or
act like Blazegraph at its time limit for every query whose VALUES list is too long
(`time_out_above`). pyoxigraph is a test extra, so it is imported only when a store is made.

Blazegraph's optimizer hint (`hint:Query hint:optimizer "None"`, see `kg.sparql`) is a triple
pattern to pyoxigraph, which would match nothing and empty every result. The endpoint adds
that one triple to its store, so the pattern matches once, binds no variable, and the exact
text the builder sends to Wikidata is what is evaluated here (nothing is stripped).
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

HINT_TRIPLE = (
    "http://www.bigdata.com/queryHints#Query",
    "http://www.bigdata.com/queryHints#optimizer",
    "None",
)
# What the Wikidata Query Service answers (HTTP 500) when a query runs past its 60 s limit.
TIMEOUT_BODY = (
    b"SPARQL-QUERY: queryStr=...\n"
    b"java.util.concurrent.TimeoutException\n"
    b"\tat java.util.concurrent.FutureTask.get(FutureTask.java:205)\n"
    b"\tat com.bigdata.rdf.sail.webapp.BigdataServlet.submitApiTask(BigdataServlet.java:292)\n"
)
_VALUES = re.compile(r"VALUES\s+\?(?!class\b)\w+\s*\{([^}]*)\}")


def values_items(query: str) -> list[str]:
    """The QIDs of a query's VALUES lists (the `?class` list not counted), in order."""
    return [
        token.removeprefix("wd:") for block in _VALUES.findall(query) for token in block.split()
    ]


@dataclass
class Fault:
    """One injected answer: an HTTP status with headers and a body."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def make_store(*sources: str | Path | bytes, fmt: str = "turtle") -> Any:
    """A pyoxigraph Store loaded from Turtle/N-Triples files or bytes."""
    import pyoxigraph

    formats = {"turtle": pyoxigraph.RdfFormat.TURTLE, "ntriples": pyoxigraph.RdfFormat.N_TRIPLES}
    store = pyoxigraph.Store()
    for source in sources:
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
        kind = fmt
        if not isinstance(source, bytes) and str(source).endswith(".nt"):
            kind = "ntriples"
        store.bulk_load(data, format=formats[kind])
    return store


class LocalSparqlEndpoint:
    """An HTTP SPARQL endpoint over `store` on 127.0.0.1 (a free port unless given)."""

    def __init__(self, store: Any, port: int = 0) -> None:
        import pyoxigraph

        subject, predicate, value = HINT_TRIPLE
        store.add(
            pyoxigraph.Quad(
                pyoxigraph.NamedNode(subject),
                pyoxigraph.NamedNode(predicate),
                pyoxigraph.Literal(value),
            )
        )
        self.store = store
        self.requests = 0
        self.queries: list[str] = []
        self.user_agents: list[str] = []
        self.timeouts = 0
        self._faults: deque[Fault] = deque()
        self._timeout_above: int | None = None
        self._always_for: frozenset[str] = frozenset()
        self._matching = ""
        self._stall = False
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}/sparql"

    def inject(
        self,
        status: int = 200,
        *,
        headers: dict[str, str] | None = None,
        body: bytes = b"",
        times: int = 1,
    ) -> None:
        """Answer the next `times` requests with this status/headers/body instead of a result."""
        with self._lock:
            for _ in range(times):
                self._faults.append(Fault(status, dict(headers or {}), body))

    def time_out_above(
        self,
        values: int | None,
        *,
        always_for: Iterable[str] = (),
        matching: str = "",
        stall: bool = False,
    ) -> None:
        """Time out every query whose VALUES list holds more than `values` items (None: never),
        and every query whose VALUES list holds one of the `always_for` QIDs, however short;
        with `matching`, only queries containing that text.

        Like the Wikidata Query Service past its limit: HTTP 500 with a java TimeoutException
        body, or with `stall` no answer at all until the client's own timeout gives up (the
        connection is released when the endpoint stops). Counted in `timeouts`.
        """
        with self._lock:
            self._timeout_above = values
            self._always_for = frozenset(always_for)
            self._matching = matching
            self._stall = stall

    def _times_out(self, query: str) -> bool:
        if self._matching not in query:
            return False
        items = values_items(query)
        if self._timeout_above is not None and len(items) > self._timeout_above:
            return True
        return not self._always_for.isdisjoint(items)

    def start(self) -> LocalSparqlEndpoint:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="sparql-local",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (safe to call twice)."""
        if self._thread is None:
            return
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._thread = None

    def __enter__(self) -> LocalSparqlEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, query: str | None, agent: str) -> Fault:
        with self._lock:
            self.requests += 1
            self.user_agents.append(agent)
            if query is not None:
                self.queries.append(query)
            if self._faults:
                return self._faults.popleft()
            stall = self._stall
            timed_out = query is not None and self._times_out(query)
            if timed_out:
                self.timeouts += 1
        if timed_out:
            if stall:
                self._released.wait(timeout=30)
            return Fault(500, {"Content-Type": "text/plain"}, TIMEOUT_BODY)
        if not query:
            return Fault(400, {"Content-Type": "text/plain"}, b"missing query")
        import pyoxigraph

        try:
            solutions = self.store.query(query)
            body = solutions.serialize(format=pyoxigraph.QueryResultsFormat.JSON)
        except (SyntaxError, ValueError, OSError) as error:
            return Fault(400, {"Content-Type": "text/plain"}, str(error).encode())
        return Fault(200, {"Content-Type": "application/sparql-results+json"}, body)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

            def _reply(self, query: str | None) -> None:
                fault = endpoint._answer(query, self.headers.get("User-Agent", ""))
                self.send_response(fault.status)
                for key, value in fault.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(fault.body)))
                self.end_headers()
                self.wfile.write(fault.body)

            def do_GET(self) -> None:  # noqa: N802
                params = parse_qs(urlparse(self.path).query)
                self._reply(params.get("query", [None])[0])

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                kind = self.headers.get("Content-Type", "")
                if kind.startswith("application/sparql-query"):
                    self._reply(raw)
                else:
                    self._reply(parse_qs(raw).get("query", [None])[0])

        return Handler
