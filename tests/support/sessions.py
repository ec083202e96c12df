"""Stored sessions made by the engine for tests that open them (compare, ensemble)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from kontest_tui.domain.records import TestKind
from kontest_tui.kg.io import load_graph
from kontest_tui.run.session import create_session, open_session_model, run_session
from kontest_tui.store import Store


def store_sessions(
    db: str,
    runs: Sequence[tuple[str, int | None]],
    kg_name: str = "places",
    kinds: Sequence[TestKind] = (TestKind.KONTEST,),
) -> list[str]:
    """Run each (simulated model spec, relation limit) on a sample with `kinds` of
    questions, each session stored in `db`; their ids, in order."""

    async def run_all() -> list[str]:
        kg = load_graph(kg_name)
        ids = []
        for spec, limit in runs:
            with Store(db) as store:
                session_id = create_session(
                    store, kg, spec, kg_name=kg_name, limit=limit, kinds=kinds
                )
                model = open_session_model(spec, kg)
                try:
                    await run_session(store, session_id, model)
                finally:
                    await model.aclose()
            ids.append(session_id)
        return ids

    return asyncio.run(run_all())
