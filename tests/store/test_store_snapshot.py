"""A session's KG snapshot is stored from the graph's dict or already written as text alike,
with the name and counts its JSON gives (taken from the object it was written from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kontest_tui.errors import StoreError
from kontest_tui.kg.io import graph_to_dict, load_graph
from kontest_tui.store import Store
from kontest_tui.store.records import NewSession, SnapshotText, dump_json
from kontest_tui.store.schema import kg_summary


def stored_snapshot(db: Path, kg_json: dict[str, object] | SnapshotText) -> tuple[object, ...]:
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


@pytest.mark.parametrize("written", [False, True])
def test_the_snapshot_keeps_the_graph_name_and_counts(tmp_path: Path, written: bool) -> None:
    kg = load_graph("places")
    data = graph_to_dict(kg)
    name, nodes, edges, text = stored_snapshot(
        tmp_path / "s.db", SnapshotText.of(data) if written else data
    )
    assert text == dump_json(data)
    assert (name, nodes, edges) == kg_summary(str(text)) == (kg.name, len(kg.nodes), len(kg.edges))
    assert isinstance(nodes, int) and nodes > 100 and name == "places"


def test_a_snapshot_without_a_name_or_edges_counts_none(tmp_path: Path) -> None:
    row = stored_snapshot(tmp_path / "s.db", {"nodes": [{"id": "A", "label": "A"}]})
    assert row[:3] == ("", 1, 0) == kg_summary(str(row[3]))


def session_with_snapshot(db: Path, text: str) -> tuple[Store, str]:
    store = Store(db)
    session = store.sessions.create(
        NewSession(
            kg_name="k",
            kg_json=SnapshotText(text, "k", 0, 0),
            templates_json={"domain": "places"},
            template_ids=["t1"],
            model="sim",
            options={},
            labels={},
        )
    )
    return store, session


def test_node_labels_are_read_a_node_at_a_time_as_sqlite_reads_them(tmp_path: Path) -> None:
    kg = load_graph("places")
    text = dump_json(graph_to_dict(kg))
    store, session = session_with_snapshot(tmp_path / "s.db", text)
    with store:
        labels = store.sessions.node_labels(session)
        assert labels == {node.id: node.label for node in kg.nodes.values()}
        assert labels == dict(store.conn.execute(store.sessions._NODES, (session,)).fetchall())


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        # spaces anywhere JSON allows them, members before and after the nodes, odd nodes
        (
            ' { "name" : "k" , "edges" : [ {"parent": "a"} ] , "nodes" : [ {"id": "a",'
            ' "label": "A"} , {"id": 7, "label": null} , {"label": "no id"} , 3 , [] ] ,'
            ' "after": {"x": [1, 2]} } ',
            {"a": "A", "7": ""},
        ),
        ('{"name": "k", "nodes": []}', {}),
        ('{"name": "k"}', {}),
    ],
)
def test_node_labels_of_any_json_layout(tmp_path: Path, text: str, labels: dict[str, str]) -> None:
    store, session = session_with_snapshot(tmp_path / "s.db", text)
    with store:
        assert store.sessions.node_labels(session) == labels


@pytest.mark.parametrize(
    "text", ['{"nodes": [{"id": "a"} {"id": "b"}]}', '{"nodes": [{"id": "a"}', "[1]", '{"a" 1}']
)
def test_a_damaged_snapshot_is_one_store_error(tmp_path: Path, text: str) -> None:
    store, session = session_with_snapshot(tmp_path / "s.db", text)
    with store, pytest.raises(StoreError, match="damaged row in kg_snapshots"):
        store.sessions.node_labels(session)
