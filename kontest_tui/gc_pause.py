"""Pause Python's cyclic garbage collector around bursts of many small acyclic objects.

Loading a 200k-node KG or evaluating a large session allocates millions of records; each
allocation burst would otherwise trigger full collections that rescan the whole growing
heap (about a third of the load time). Memory is still freed by reference counting, and
the collector resumes afterwards, also on an error.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the block (when it was enabled before)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# Young-generation threshold while a run allocates its per-turn records (the default, 700,
# runs a collection every few turns, and each full one rescans the run's whole heap). At
# 50k, a streamed run still collected about once per chunk of relations, each time rescanning
# the chunk's live records (~6% of its time at 100k relations); 500k young objects are more
# than a chunk holds, so its records go by reference counting before one is due.
RUN_THRESHOLD = (500_000, 50, 100)


_rare: list[tuple[int, ...]] = []  # the thresholds before each block still open


@contextmanager
def rare_gc() -> Iterator[None]:
    """Collect cycles rarely inside the block (a long run: unlike paused_gc, cycles made by
    failed calls are still collected). Blocks may overlap (runs side by side in one event
    loop): the thresholds from before the first are restored when the last one ends."""
    _rare.append(gc.get_threshold())
    gc.set_threshold(*RUN_THRESHOLD)
    try:
        yield
    finally:
        before = _rare.pop()
        if not _rare:
            gc.set_threshold(*before)
