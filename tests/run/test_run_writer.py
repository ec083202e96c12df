"""The run's writer (run.writer): answers stored in transactions grouped by time.

The bound a `kill -9` loses is FLUSH_AFTER_S of answers: the first row of a batch schedules
its transaction that far ahead (checked on the loop's timer, no sleeping); a batch is stored
whole, in order; a row the store refuses does not cost the others.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kontest_tui.domain.records import Answer, Response
from kontest_tui.errors import StoreError
from kontest_tui.run.executor import Executor, ExecutorConfig
from kontest_tui.run.writer import FLUSH_AFTER_S, BatchWriter
from kontest_tui.store import Store
from tests.run.run_toys import ToyModel, make_conversations, make_relations, store_session


def stored(store: Store, session: str) -> list[tuple[str, int]]:
    return [(row["conversation"], row["turn"]) for row in store.responses.rows(session)]


async def test_answers_wait_at_most_the_flush_bound(tmp_path: Path) -> None:
    relations = make_relations(2)
    conversations = make_conversations(relations)
    with Store(tmp_path / "w.db") as store, Store(tmp_path / "w.db") as reader:
        session = store_session(store, relations, conversations)
        writer = BatchWriter(store, session)
        loop = asyncio.get_running_loop()
        writer.save_response(Response(conversations[0].id, 0, "Yes", Answer.YES))
        writer.cache_put("key", "toy:model", "Yes", 1)
        assert stored(reader, session) == [] and writer.pending == 2
        timer = writer._timer
        assert timer is not None and timer.when() <= loop.time() + FLUSH_AFTER_S
        writer.save_response(Response(conversations[1].id, 0, "No", Answer.NO))
        assert writer._timer is timer  # one transaction for everything received meanwhile
        assert writer.cache_get("key") == ("Yes", 1)  # a lookup sees what is not stored yet
        timer._run()  # the timer fires: one transaction
        assert writer.batches == 1
        assert stored(reader, session) == [(conversations[0].id, 0), (conversations[1].id, 0)]
        # cache entries wait for a chunk (stored sorted by key) or the end of the run
        assert writer.pending == 1 and reader.cache.get("key") is None
        assert writer.cache_get("key") == ("Yes", 1)
        writer.close()
        assert writer.pending == 0 and reader.cache.get("key") == ("Yes", 1)


def test_cache_entries_are_stored_in_sorted_chunks(tmp_path: Path) -> None:
    relations = make_relations(1)
    with Store(tmp_path / "w.db") as store:
        session = store_session(store, relations, make_conversations(relations))
        writer = BatchWriter(store, session, cache_chunk=3)
        for key in ("c", "a", "d", "b"):
            writer.cache_put(key, "toy:model", key.upper(), 1)
        assert writer.pending == 1 and writer.batches == 1  # a, c, d stored; b waits
        rows = store.conn.execute("SELECT key FROM response_cache ORDER BY rowid").fetchall()
        assert [row[0] for row in rows] == ["a", "c", "d"]


async def test_a_run_commits_in_few_transactions_and_keeps_every_answer(tmp_path: Path) -> None:
    relations = make_relations(20)
    conversations = make_conversations(relations)
    with Store(tmp_path / "w.db") as store:
        session = store_session(store, relations, conversations)
        writer = BatchWriter(store, session, flush_after=600.0, max_rows=50)
        executor = Executor(
            ToyModel(), config=ExecutorConfig(concurrency=4), sink=writer, cache=writer
        )
        result = await executor.run(conversations)
        writer.close()
        turns = sum(len(c.turns) for c in conversations)
        assert result.progress.done == turns == len(stored(store, session)) == 120
        assert store.conn.execute("SELECT COUNT(*) FROM response_cache").fetchone()[0] > 0
        assert writer.batches == 3  # 50 + 50 answers, then the rest and the cache at the end


def test_a_refused_row_costs_only_itself(tmp_path: Path) -> None:
    relations = make_relations(1)
    conversations = make_conversations(relations)
    with Store(tmp_path / "w.db") as store:
        session = store_session(store, relations, conversations)
        writer = BatchWriter(store, session)  # outside a loop: stored at once
        writer.save_response(Response(conversations[0].id, 0, "Yes", Answer.YES))
        writer = BatchWriter(store, session, max_rows=10)
        writer._responses = [
            (Response(conversations[1].id, 0, "No", Answer.NO), False, 1_767_225_600.0),
            (Response(conversations[0].id, 0, "Yes", Answer.YES), False, 1_767_225_600.0),  # twice
            (Response("nope", 0, "No", Answer.NO), False, 1_767_225_600.0),  # no such conversation
            (Response(conversations[2].id, 0, "Yes \udcff", Answer.YES), True, 1_767_225_600.0),
        ]
        with pytest.raises(StoreError, match=f"response to {conversations[0].id} turn 0"):
            writer.flush()
        assert writer.pending == 0
        assert stored(store, session) == [(c.id, 0) for c in conversations[:3]]
        assert [row["raw"] for row in store.responses.rows(session)][2] == "Yes \ufffd"


async def test_the_lease_renews_while_answers_are_batched(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The heartbeat and the writer share the run's connection: renewals keep succeeding
    between batches (the renewal period is made 0 so every loop turn renews)."""
    from kontest_tui.run import session as session_module
    from kontest_tui.run.session import run_session
    from kontest_tui.store.leases import Leases

    renewals: list[bool] = []
    real = Leases.renew

    def counting(self: Leases, lease):  # noqa: ANN001, ANN202
        renewals.append(real(self, lease))
        return renewals[-1]

    monkeypatch.setattr(session_module, "RENEW_EVERY_S", 0.0)
    monkeypatch.setattr(Leases, "renew", counting)
    relations = make_relations(10)
    conversations = make_conversations(relations)
    with Store(tmp_path / "w.db") as store:
        session = store_session(store, relations, conversations)
        outcome = await run_session(store, session, ToyModel())
        assert outcome.status == "done" and len(stored(store, session)) == 60
    assert len(renewals) > 0 and all(renewals)
