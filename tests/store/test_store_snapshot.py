"""A session's KG snapshot is stored from the graph's dict or from its JSON text alike, with
the name and counts the JSON gives (read by SQLite, not by a Python object per node)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kontest_tui.kg.io import graph_to_dict, load_graph
from kontest_tui.store import Store
from kontest_tui.store.records import NewSession, dump_json
from kontest_tui.store.schema import kg_summary


def stored_snapshot(db: Path, kg_json: dict[str, object] | str) -> tuple[object, ...]:
    with Store(db) as store:
        session = store.sessions.create(
            NewSession(
                kg_name="places.json",
                kg_json=kg_json,
                templates_json={"domain": "places"},
                template_ids=["t1", "t2"],
                model="sim",
                options={},
                labels={},
            )
        )
        row = store.conn.execute("SELECT name, nodes, edges, json FROM kg_snapshots").fetchone()
        assert store.sessions.kg_titles() == {session: row[0]}
        return tuple(row)


@pytest.mark.parametrize("as_text", [False, True])
def test_the_snapshot_keeps_the_graph_name_and_counts(tmp_path: Path, as_text: bool) -> None:
    kg = load_graph("places")
    data = graph_to_dict(kg)
    name, nodes, edges, text = stored_snapshot(
        tmp_path / "s.db", dump_json(data) if as_text else data
    )
    assert text == dump_json(data)
    assert (name, nodes, edges) == kg_summary(str(text)) == (kg.name, len(kg.nodes), len(kg.edges))
    assert nodes > 100 and name == "places"


def test_a_snapshot_without_a_name_or_edges_counts_none(tmp_path: Path) -> None:
    row = stored_snapshot(tmp_path / "s.db", {"nodes": [{"id": "A", "label": "A"}]})
    assert row[:3] == ("", 1, 0) == kg_summary(str(row[3]))
