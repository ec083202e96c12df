"""The loader's fast path for well-formed records agrees with the validating readers."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from kontest_tui.errors import GraphError
from kontest_tui.kg import io
from kontest_tui.kg.validate import RecordNames

NODE_RECORDS = [
    {"id": "Q1", "label": "A"},
    {"id": " Q1 ", "label": "A", "aliases": None, "type": ""},
    {"id": "Q1", "label": "A", "aliases": [], "type": "country"},
    {"id": "Q1", "label": "A", "aliases": ["x", "y"]},
    {"id": "Q1", "label": "A", "extra": 1},
]
BAD_NODE_RECORDS = [
    "Q1",
    {"id": "", "label": "A"},
    {"id": "Q1", "label": " "},
    {"id": 1, "label": "A"},
    {"id": "Q1", "label": "A", "aliases": ""},
    {"id": "Q1", "label": "A", "aliases": {}},
    {"id": "Q1", "label": "A", "aliases": ["x", 2]},
    {"id": "Q1", "label": "A", "type": None},
]


@pytest.mark.parametrize("record", NODE_RECORDS)
def test_well_formed_node_matches_read_node(record: dict) -> None:
    assert io._well_formed_node(record) == io._read_node(record, "n")


@pytest.mark.parametrize("record", BAD_NODE_RECORDS)
def test_fast_path_declines_what_read_node_rejects(record: object) -> None:
    assert io._well_formed_node(record) is None
    with pytest.raises(GraphError):
        io._read_node(record, "n")


@pytest.mark.parametrize(
    "record",
    [{"parent": "a", "child": "b"}, {"parent": "a", "child": "b", "relation": "r"}],
)
def test_well_formed_edge_matches_read_edge(record: dict) -> None:
    assert io._well_formed_edge(record) == io._read_edge(record, "e")


@pytest.mark.parametrize(
    "record",
    [
        [],
        {"parent": "a"},
        {"parent": " ", "child": "b"},
        {"parent": "a", "child": "b", "relation": 1},
    ],
)
def test_fast_path_declines_bad_edges(record: object) -> None:
    assert io._well_formed_edge(record) is None
    with pytest.raises(GraphError):
        io._read_edge(record, "e")


def test_record_names_are_made_on_demand() -> None:
    names = RecordNames("edge", 3)
    assert list(names) == ["edge 1", "edge 2", "edge 3"]
    assert names[-1] == "edge 3"
    assert names[1:] == ["edge 2", "edge 3"]
    with pytest.raises(IndexError):
        names[3]


def test_load_graph_leaves_the_collector_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"nodes": [], "edges": []}', encoding="utf-8")
    assert gc.isenabled()
    with pytest.raises(GraphError):
        io.load_graph(path)
    assert gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(GraphError):
            io.load_graph(path)
        assert not gc.isenabled()
    finally:
        gc.enable()
