"""The run's writer: answers and cache entries stored in small transactions grouped by time.

The executor hands every response (and every answer it caches) to a `BatchWriter`, which
keeps them in memory and stores them together (`Store.save_batch`: one transaction, one
commit) at most `FLUSH_AFTER_S` after the first of them arrived, or as soon as `MAX_ROWS`
wait, and at the end of the run. A run killed with `kill -9` therefore loses at most the
answers of its last `FLUSH_AFTER_S` (50 ms; a little more while the event loop is busy with
one step, since the timer fires between steps), and never half of a batch: the rows are
stored in order, so a later turn of a conversation is never stored without the earlier one
it was asked after. A resume asks the lost ones again.

Cache lookups (`kontest run --reuse-cache`) read the batch not yet stored first, then the
store (one indexed SELECT, no commit). A failed write is kept and raised by the next
`save_response` or by `flush()`, so the run stops with the store's one-line error.
"""

from __future__ import annotations

import asyncio

from kontest_tui.domain.records import Response
from kontest_tui.errors import StoreError
from kontest_tui.store.database import Store
from kontest_tui.store.schema import now_iso

FLUSH_AFTER_S = 0.05  # the longest an answer waits in memory before its transaction
MAX_ROWS = 2000  # a batch this long is stored at once


class BatchWriter:
    """The executor's sink and cache for one session: writes grouped by time."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        *,
        flush_after: float = FLUSH_AFTER_S,
        max_rows: int = MAX_ROWS,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.flush_after = flush_after
        self.max_rows = max_rows
        self._responses: list[tuple[Response, bool, str]] = []
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
        self._responses.append((response, cached, now_iso()))
        self._added()

    def cache_put(self, key: str, model: str, raw: str, tokens: int) -> None:
        self._raise_failure()
        self._cache[key] = (key, model, raw, tokens)
        self._added()

    def cache_get(self, key: str) -> tuple[str, int] | None:
        waiting = self._cache.get(key)
        if waiting is not None:
            return waiting[2], waiting[3]
        return self.store.cache_get(key)

    # -- writing ---------------------------------------------------------------------------

    def _added(self) -> None:
        if self.pending >= self.max_rows:
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

    def flush(self) -> None:
        """Store everything waiting in one transaction. A StoreError of the transaction keeps
        the rows for the next flush; rows refused one by one are dropped and the first
        refusal raised (the others are stored)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._raise_failure()
        if not self._responses and not self._cache:
            return
        responses, cache = self._responses, list(self._cache.values())
        failures = self.store.save_batch(self.session_id, responses, cache)
        self._responses, self._cache = [], {}
        self.batches += 1
        if failures:
            raise failures[0]

    def close(self) -> None:
        """Store what waits and stop the timer (the end of a run, also a cancelled one)."""
        self.flush()
