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
