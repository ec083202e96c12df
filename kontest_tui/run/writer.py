"""The run's writer: answers and cache entries stored in small transactions grouped by time.

The executor hands every response (and every answer it caches) to a `BatchWriter`, which
keeps them in memory and stores them together (`store.responses.save_batch`: one
transaction, one commit) at most `FLUSH_AFTER_S` after the first of them arrived, or as soon as `MAX_ROWS`
wait, and at the end of the run. A run killed with `kill -9` therefore loses at most the
answers of its last `FLUSH_AFTER_S` (50 ms; a little more while the event loop is busy with
one step, since the timer fires between steps), and never half of a batch: the rows are
stored in order, so a later turn of a conversation is never stored without the earlier one
it was asked after. A resume asks the lost ones again.

Cache entries (SHA-256 keys: random places in the cache's index) are kept until
`CACHE_CHUNK` of them wait, then stored sorted by key in the batch of that moment, so each
index page is written once per chunk instead of once per answer's batch (at 100k relations
this was most of the store's time). A `kill -9` may therefore lose up to `CACHE_CHUNK`
cache entries: never an answer (those are in `responses`), only the chance for a later
session to reuse them with `--reuse-cache`. Cache lookups read the entries not yet stored
first, then the store (one indexed SELECT, no commit). A failed write is kept and raised by
the next `save_response` or by `flush()`, so the run stops with the store's one-line error.
"""

from __future__ import annotations

import asyncio
import time

from kontest_tui.domain.records import Response
from kontest_tui.errors import StoreError
from kontest_tui.store.database import Store
from kontest_tui.store.schema import iso_at

FLUSH_AFTER_S = 0.05  # the longest an answer waits in memory before its transaction
MAX_ROWS = 2000  # a batch this long is stored at once
# Cache entries stored together, sorted by key. A chunk writes about every page of the
# cache's key index (SHA-256 keys fall everywhere), so the fewer chunks the better: at 100k
# relations (400k entries), chunks of 20k made 20 passes over a growing index and took 7 s.
# 200k entries wait in ~40 MB.
CACHE_CHUNK = 200_000


class BatchWriter:
    """The executor's sink and cache for one session: writes grouped by time."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        *,
        flush_after: float = FLUSH_AFTER_S,
        max_rows: int = MAX_ROWS,
        cache_chunk: int = CACHE_CHUNK,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.flush_after = flush_after
        self.max_rows = max_rows
        self.cache_chunk = cache_chunk
        self._responses: list[tuple[Response, bool, float]] = []  # (.., .., time.time())
        self._cache: dict[str, tuple[str, str, str, int]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._error: StoreError | None = None
        self.batches = 0  # transactions made (for tests and benchmarks)

    @property
    def pending(self) -> int:
        """Rows received and not stored yet."""
        return len(self._responses) + len(self._cache)

    # -- ResponseSink and ResponseCache (run.executor) -------------------------------------

    def save_response(self, response: Response, *, cached: bool = False) -> None:
        self._raise_failure()
        self._responses.append((response, cached, time.time()))
        self._added()

    def cache_put(self, key: str, model: str, raw: str, tokens: int) -> None:
        self._raise_failure()
        self._cache[key] = (key, model, raw, tokens)
        if len(self._cache) >= self.cache_chunk:
            self.flush(cache=True)

    def cache_get(self, key: str) -> tuple[str, int] | None:
        waiting = self._cache.get(key)
        if waiting is not None:
            return waiting[2], waiting[3]
        return self.store.cache.get(key)

    # -- writing ---------------------------------------------------------------------------

    def _added(self) -> None:
        if len(self._responses) >= self.max_rows:
            self.flush()
            return
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # called outside a run's loop: store at once
                self.flush()
                return
            self._timer = loop.call_later(self.flush_after, self._flush_on_time)

    def _flush_on_time(self) -> None:
        self._timer = None
        try:
            self.flush()
        except StoreError as error:
            self._error = error  # raised in the run by the next save_response or flush()

    def _raise_failure(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def flush(self, *, cache: bool = False) -> None:
        """Store the responses waiting (and the cache entries, when `cache`) in one
        transaction. A StoreError of the transaction keeps the rows for the next flush; rows
        refused one by one are dropped and the first refusal raised (the others are stored)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._raise_failure()
        entries = sorted(self._cache.values()) if cache else []
        if not self._responses and not entries:
            return
        responses = [(response, cached, iso_at(at)) for response, cached, at in self._responses]
        failures = self.store.responses.save_batch(self.session_id, responses, entries)
        self._responses = []
        if cache:
            self._cache = {}
        self.batches += 1
        if failures:
            raise failures[0]

    def close(self) -> None:
        """Store what waits, cache entries too, and stop the timer (the end of a run, also a
        cancelled or failed one)."""
        self.flush(cache=True)
