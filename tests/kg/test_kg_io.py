"""KG JSON files: deterministic save, round trip, sample names, and one clear error per bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kontest_tui.errors import GraphError
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import (
    dumps_graph,
    graph_from_dict,
    graph_to_dict,
    list_samples,
    load_graph,
    sample_path,
    save_graph,
)
from kontest_tui.resources import SAMPLE_KGS_DIR


def make_graph() -> KnowledgeGraph:
    nodes = {
        "Q27": Node("Q27", "Ireland", ("Éire", "Republic of Ireland"), "country"),
        "Q1": Node("Q1", "Ulster", (), "province"),
        "Q2": Node("Q2", 'Kinawley "{child}"\nline', (), "locality"),
    }
    edges = [Edge("Q27", "Q1", "contains"), Edge("Q1", "Q2", "contains")]
    return KnowledgeGraph("toy", "places", nodes, edges, source="hand-made", built="2026-01-01")


def write_json(tmp_path: Path, data: object, name: str = "kg.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def good_data() -> dict:
    return {
        "name": "toy",
        "domain": "places",
        "source": "",
        "built": "",
        "nodes": [
            {"id": "Q27", "label": "Ireland", "aliases": [], "type": "country"},
            {"id": "Q1", "label": "Ulster", "aliases": [], "type": ""},
            {"id": "Q2", "label": "Kinawley", "aliases": [], "type": ""},
        ],
        "edges": [
            {"parent": "Q27", "child": "Q1", "relation": "contains"},
            {"parent": "Q1", "child": "Q2", "relation": "contains"},
        ],
    }


def test_save_load_round_trip_is_byte_identical(tmp_path: Path) -> None:
    kg = make_graph()
    first = save_graph(kg, tmp_path / "a" / "kg.json")
    loaded = load_graph(first)
    assert loaded.nodes == kg.nodes
    assert loaded.edges == kg.edges
    assert (loaded.name, loaded.domain, loaded.source, loaded.built) == (
        "toy",
        "places",
        "hand-made",
        "2026-01-01",
    )
    second = save_graph(loaded, tmp_path / "b.json")
    assert first.read_bytes() == second.read_bytes()


def test_saved_file_is_utf8_not_ascii_escaped_and_plain_json(tmp_path: Path) -> None:
    path = save_graph(make_graph(), tmp_path / "kg.json")
    raw = path.read_bytes()
    assert "Éire".encode() in raw
    assert b"\\u00c9" not in raw
    assert raw.endswith(b"}\n")
    data = json.loads(raw.decode("utf-8"))
    assert list(data) == ["name", "domain", "source", "built", "nodes", "edges"]
    assert data["nodes"][0] == {
        "id": "Q27",
        "label": "Ireland",
        "aliases": ["Éire", "Republic of Ireland"],
        "type": "country",
    }
    assert data["edges"][1] == {"parent": "Q1", "child": "Q2", "relation": "contains"}
    assert data == graph_to_dict(make_graph())


def test_dumps_is_one_record_per_line() -> None:
    lines = dumps_graph(make_graph()).splitlines()
    assert lines[0] == "{"
    assert lines[5] == '  "nodes": ['
    assert (
        lines[6]
        == '    {"id": "Q27", "label": "Ireland", "aliases": ["Éire", "Republic of Ireland"], "type": "country"},'
    )
    assert len(lines) == 1 + 4 + 1 + 3 + 1 + 1 + 2 + 1 + 1


def test_optional_fields_default(tmp_path: Path) -> None:
    data = {
        "nodes": [{"id": "a", "label": "A"}, {"id": "b", "label": "B", "aliases": None}],
        "edges": [{"parent": "a", "child": "b"}],
    }
    kg = load_graph(write_json(tmp_path, data, "mini.json"))
    assert kg.name == "mini"
    assert kg.domain == ""
    assert kg.nodes["b"] == Node("b", "B", (), "")
    assert kg.edges == [Edge("a", "b", "")]


def test_graph_from_dict_keeps_file_order() -> None:
    kg = graph_from_dict(good_data(), origin="x")
    assert list(kg.nodes) == ["Q27", "Q1", "Q2"]
    assert kg.roots() == ["Q27"]
    assert kg.children("Q27") == ["Q1"]


def _mutate(change):
    data = good_data()
    change(data)
    return data


BAD_GRAPHS = [
    ("top level list", [1, 2], "top level must be a JSON object"),
    ("no nodes field", _mutate(lambda d: d.pop("nodes")), "missing field 'nodes'"),
    (
        "edges not list",
        _mutate(lambda d: d.update(edges={})),
        "field 'edges' must be a list, not an object",
    ),
    (
        "name mistyped",
        _mutate(lambda d: d.update(name=3)),
        "field 'name' must be a string, not a number",
    ),
    (
        "node not object",
        _mutate(lambda d: d["nodes"].append("Q9")),
        "node 4: must be an object, not a string",
    ),
    ("node missing id", _mutate(lambda d: d["nodes"][1].pop("id")), "node 2: missing field 'id'"),
    (
        "node id number",
        _mutate(lambda d: d["nodes"][1].update(id=7)),
        "node 2: field 'id' must be a string, not a number",
    ),
    (
        "node missing label",
        _mutate(lambda d: d["nodes"][2].pop("label")),
        "node 3 (Q2): missing field 'label'",
    ),
    (
        "node empty label",
        _mutate(lambda d: d["nodes"][2].update(label="  ")),
        "node 3 (Q2): field 'label' is empty",
    ),
    (
        "aliases not list",
        _mutate(lambda d: d["nodes"][0].update(aliases="Eire")),
        "node 1 (Q27): field 'aliases' must be a list of strings",
    ),
    (
        "type mistyped",
        _mutate(lambda d: d["nodes"][0].update(type=["x"])),
        "node 1 (Q27): field 'type' must be a string, not a list",
    ),
    (
        "duplicate node id",
        _mutate(lambda d: d["nodes"].append({"id": "Q1", "label": "Again"})),
        "node 4 (Q1): duplicate id, already used by node 2",
    ),
    (
        "edge missing child",
        _mutate(lambda d: d["edges"][1].pop("child")),
        "edge 2: missing field 'child'",
    ),
    (
        "edge relation mistyped",
        _mutate(lambda d: d["edges"][0].update(relation=None)),
        "edge 1 (Q27 -> Q1): field 'relation' must be a string, not null",
    ),
    (
        "unknown child",
        _mutate(lambda d: d["edges"].append({"parent": "Q1", "child": "Q99"})),
        "edge 3 (Q1 -> Q99): child Q99 is not a node",
    ),
    (
        "unknown parent",
        _mutate(lambda d: d["edges"].insert(0, {"parent": "Q98", "child": "Q1"})),
        "edge 1 (Q98 -> Q1): parent Q98 is not a node",
    ),
    (
        "self loop",
        _mutate(lambda d: d["edges"].append({"parent": "Q2", "child": "Q2"})),
        "edge 3 (Q2 -> Q2): self-loop",
    ),
    (
        "duplicate edge",
        _mutate(lambda d: d["edges"].append({"parent": "Q27", "child": "Q1", "relation": "x"})),
        "edge 3 (Q27 -> Q1): duplicate of edge 1",
    ),
    (
        "cycle",
        _mutate(lambda d: d["edges"].append({"parent": "Q2", "child": "Q27"})),
        "cycle through node",
    ),
    ("no nodes", {"nodes": [], "edges": []}, "has no nodes"),
    ("no edges", _mutate(lambda d: d.update(edges=[])), "has no edges"),
]


@pytest.mark.parametrize(("case", "data", "expected"), BAD_GRAPHS, ids=[c[0] for c in BAD_GRAPHS])
def test_malformed_graph_names_file_and_record(
    tmp_path: Path, case: str, data: object, expected: str
) -> None:
    path = write_json(tmp_path, data)
    with pytest.raises(GraphError) as caught:
        load_graph(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "\n" not in message


def test_cycle_names_a_node_on_it_and_the_closing_edge(tmp_path: Path) -> None:
    data = good_data()
    data["nodes"].append({"id": "Q5", "label": "Elsewhere"})
    data["edges"] += [{"parent": "Q27", "child": "Q5"}, {"parent": "Q2", "child": "Q27"}]
    path = write_json(tmp_path, data)
    with pytest.raises(GraphError) as caught:
        load_graph(path)
    message = str(caught.value)
    # the only cycle is Q27 -> Q1 -> Q2 -> Q27, closed by edge 4 in some rotation
    cycle_nodes = {"Q27", "Q1", "Q2"}
    named = message.split("cycle through node ")[1].split(" ")[0]
    assert named in cycle_nodes
    assert "Q5" not in message
    assert "closes it" in message
    assert "edge" in message.split(";")[1]


def test_invalid_json_gives_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "kg.json"
    path.write_text('{\n  "nodes": [\n    {"id": "a",}\n  ]\n}\n', encoding="utf-8")
    with pytest.raises(GraphError) as caught:
        load_graph(path)
    assert str(caught.value).startswith(f"{path}: not JSON: ")
    assert "line 3, column 16" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        # cut after line 3's "[": the text ends at line 3, column 12 (the "[" is its 12th)
        (
            '{\n  "name": "x",\n  "nodes": [\n',
            "it ends at line 3, column 12 before the JSON is complete",
        ),
        # cut inside the string "Ire..., whose quote is line 3's 20th character
        (
            '{\n  "name": "x",\n  "nodes": [{"id": "Ire',
            "a string starting at line 3, column 20 never",
        ),
        ("", "it is empty"),
        ('{"name": "x", "nodes": [', "it ends at column 24 before the JSON is complete"),
    ],
)
def test_a_cut_off_kg_file_says_where_it_ends(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "kg.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GraphError) as caught:
        load_graph(path)
    assert str(caught.value).startswith(f"{path}: not JSON: {problem}")


def test_missing_unreadable_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(GraphError, match=r"nothere\.json: no such file"):
        load_graph(tmp_path / "nothere.json")
    with pytest.raises(GraphError, match="is a directory"):
        load_graph(tmp_path)
    bad = tmp_path / "latin.json"
    bad.write_bytes('{"name": "Zürich"}'.encode("latin-1"))
    with pytest.raises(GraphError, match=r"latin\.json: not UTF-8 text"):
        load_graph(bad)


def test_sample_names_resolve_to_bundled_files() -> None:
    assert list_samples() == ["music", "places", "subdivisions"]
    assert sample_path("music") == SAMPLE_KGS_DIR / "music.json"
    assert load_graph("places").name == "places"
    assert load_graph("music").domain == "music"


def test_unknown_sample_lists_the_samples() -> None:
    with pytest.raises(GraphError) as caught:
        load_graph("placez")
    assert (
        str(caught.value)
        == "placez: no such KG file or sample (samples: music, places, subdivisions)"
    )
    with pytest.raises(
        GraphError, match=r"^unknown sample KG 'x' \(samples: music, places, subdivisions\)$"
    ):
        sample_path("x")


def test_existing_file_wins_over_sample_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_graph(make_graph(), tmp_path / "places")
    monkeypatch.chdir(tmp_path)
    assert load_graph("places").name == "toy"


def test_folder_named_like_a_sample_does_not_hide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "music").mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_graph("music").name == "music"
    with pytest.raises(GraphError, match="no KG given"):
        load_graph("  ")


def test_missing_path_with_suffix_is_not_a_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GraphError, match="places.json: no such file"):
        load_graph("places.json")


def test_csv_path_loads_through_load_graph(tmp_path: Path) -> None:
    path = tmp_path / "edges.csv"
    path.write_text("a,A,b,B\n", encoding="utf-8")
    kg = load_graph(path)
    assert [(e.parent, e.child) for e in kg.edges] == [("a", "b")]


def test_save_to_unwritable_place_is_graph_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(GraphError, match="cannot write"):
        save_graph(make_graph(), blocker / "kg.json")


def test_labels_and_aliases_lose_escape_codes_and_control_characters(tmp_path: Path) -> None:
    from kontest_tui.kg.io import load_graph

    kg: dict[str, Any] = {
        "name": "hostile",
        "domain": "places",
        "nodes": [
            {"id": "Q1", "label": "Ireland", "aliases": ["\x1b]0;pwned\x07Éire"]},
            {"id": "Q2", "label": "\x1b[31mUlster\x1b[0m\x00", "aliases": []},
            {"id": "Q3", "label": "Møre\u00a0og Romsdal", "aliases": []},  # printable: kept
        ],
        "edges": [{"parent": "Q1", "child": "Q2"}, {"parent": "Q1", "child": "Q3"}],
    }
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(kg), encoding="utf-8")
    loaded = load_graph(str(path))
    assert loaded.label("Q2") == "Ulster"
    assert loaded.nodes["Q1"].aliases == ("Éire",)
    assert loaded.label("Q3") == "Møre\u00a0og Romsdal"
    kg["nodes"][1]["label"] = "\x1b[2J\x07"  # nothing left to name the node
    path.write_text(json.dumps(kg), encoding="utf-8")
    with pytest.raises(GraphError, match="only control characters"):
        load_graph(str(path))


def test_csv_labels_lose_escape_codes(tmp_path: Path) -> None:
    from kontest_tui.kg.io import load_graph

    path = tmp_path / "hostile.csv"
    path.write_text(
        "parent_id,parent_label,child_id,child_label\n"
        "Q1,Ireland,Q2,\x1b[31mUlster\x1b[0m\n"
        "Q2,Ulster,Q3,Kinawley\n",
        encoding="utf-8",
    )
    loaded = load_graph(str(path))
    assert loaded.label("Q2") == "Ulster"  # the same node on both lines, once cleaned
