"""gc_pause: the collector paused around bursts of records, and made rare during runs."""

from __future__ import annotations

import asyncio
import gc

import pytest

from kontest_tui.gc_pause import RUN_THRESHOLD, paused_gc, rare_gc


def test_paused_gc_restores_the_collector_also_on_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(ValueError), paused_gc():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()


def test_overlapping_runs_restore_the_thresholds_from_before_the_first() -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []

    async def run(wait: float) -> None:
        with rare_gc():
            await asyncio.sleep(wait)
            seen.append(gc.get_threshold())

    async def both() -> None:  # the first to start ends first, the second ends last
        await asyncio.gather(run(0.01), run(0.05))

    asyncio.run(both())
    assert seen == [RUN_THRESHOLD, RUN_THRESHOLD]  # the second still had rare collections
    assert gc.get_threshold() == before
    with pytest.raises(KeyError), rare_gc():
        raise KeyError
    assert gc.get_threshold() == before
