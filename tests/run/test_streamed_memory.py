"""What a run evaluated in chunks keeps small: it stores its report without the explorer's
views (they hold the whole graph and a roll-up per node), which the first reader builds as a
whole run's; a session whose relations cannot be evaluated apart is evaluated whole at the
end, its report a whole run's."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from kontest_tui.generate.conversations import build_conversations, build_suite
from kontest_tui.kg.io import load_graph
from kontest_tui.kinds.registry import KindOptions
from kontest_tui.models.specs import open_model
from kontest_tui.results.evaluate import evaluation_engine
from kontest_tui.run.session import (
    _kontest_kinds_json,
    _store_session,
    create_session,
    run_session,
)
from kontest_tui.run.spec import SessionSpec, resolve_spec
from kontest_tui.store import Store
from kontest_tui.store.rollups import TABLES

VIEWS = [table for table in TABLES if table != "result_views"]


def run_and_read_views(db: Path, chunk: int | None) -> tuple[bool, dict[str, list[tuple]]]:
    """(whether the views were ready when the run ended, their rows once ensured)."""
    kg = load_graph("places")
    with Store(db) as store:
        session = create_session(
            store, SessionSpec(source=kg, model="sim:forgetful", seed=3, limit=40)
        )
        model = open_model("sim:forgetful", kg=kg, seed=3)
        asyncio.run(run_session(store, session, model, chunk=chunk))
        ready = store.views.ready(session)
        store.views.ensure(session, evaluation_engine())
        assert store.views.ready(session)
        rows = {
            table: sorted(
                tuple(row)[1:]  # without the session id
                for row in store.conn.execute(f"SELECT * FROM {table}")
            )
            for table in VIEWS
        }
    return ready, rows


def test_a_streamed_run_leaves_the_views_to_their_first_reader(tmp_path: Path) -> None:
    whole_ready, whole = run_and_read_views(tmp_path / "whole.db", None)
    streamed_ready, streamed = run_and_read_views(tmp_path / "streamed.db", 7)
    assert whole_ready and not streamed_ready
    assert streamed == whole
    assert whole["result_nodes"] and whole["result_errors"]


def report_of(db: Path, chunk: int | None) -> dict[str, object]:
    """The stored report of a places session whose 12th relation is asked twice (another id,
    the same parent and child), run whole or in chunks."""
    kg = load_graph("places")
    suite = build_suite(kg, limit=30)
    twice = replace(suite.relations[11], id=suite.relations[11].id + "#again")
    relations = [*suite.relations, twice]
    conversations = build_conversations(kg, relations, suite.template_set, suite.template_ids)
    with Store(db) as store:
        # the session door makes each pair once: the twice-asked pair is stored by hand
        spec = resolve_spec(SessionSpec(source=kg, model="sim:forgetful", seed=3))
        session = _store_session(
            store,
            spec,
            "sim:forgetful",
            suite.template_ids,
            _kontest_kinds_json(KindOptions(seed=3)),
            relations=relations,
            conversations=conversations,
        )
        model = open_model("sim:forgetful", kg=kg, seed=3)
        outcome = asyncio.run(run_session(store, session, model, chunk=chunk))
        assert not outcome.evaluation.streamed  # evaluated whole at the end
        stored = store.reports.read(session, engine=evaluation_engine())
        assert stored is not None
        # the repeated questions in another chunk are asked again, not taken from the memo
        return {**stored.report, "session": None, "answers_from_cache": None}


def test_a_pair_asked_twice_is_evaluated_whole_as_a_whole_run(tmp_path: Path) -> None:
    whole = report_of(tmp_path / "whole.db", None)
    assert report_of(tmp_path / "chunks.db", 5) == whole
    assert whole["relations"] == 31 and whole["errors"]["ontological"]  # type: ignore[index]
