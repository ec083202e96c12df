"""CSV edge-list import: positional and header layouts, header detection, errors with line numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kontest_tui.errors import GraphError
from kontest_tui.kg.csv_import import detect_header, import_csv
from kontest_tui.kg.graph import Edge, Node


def write_csv(tmp_path: Path, text: str, name: str = "edges.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_positional_rows_without_header(tmp_path: Path) -> None:
    path = write_csv(tmp_path, "Q27,Ireland,Q1,Ulster\nQ1,Ulster,Q2,Kinawley\n")
    kg = import_csv(path, built="2026-01-02")
    assert kg.name == "edges"
    assert kg.domain == ""
    assert kg.built == "2026-01-02"
    assert kg.source == "imported from edges.csv"
    assert list(kg.nodes.values()) == [
        Node("Q27", "Ireland"),
        Node("Q1", "Ulster"),
        Node("Q2", "Kinawley"),
    ]
    assert kg.edges == [Edge("Q27", "Q1", ""), Edge("Q1", "Q2", "")]


def test_header_is_detected_and_skipped(tmp_path: Path) -> None:
    text = "parent_id,parent_label,child_id,child_label,relation\nQ27,Ireland,Q1,Ulster,contains\n"
    kg = import_csv(write_csv(tmp_path, text), name="ire", domain="places")
    assert (kg.name, kg.domain) == ("ire", "places")
    assert list(kg.nodes) == ["Q27", "Q1"]
    assert kg.edges == [Edge("Q27", "Q1", "contains")]


def test_header_maps_columns_in_any_order(tmp_path: Path) -> None:
    text = "Child ID,child_label,Parent,parent_label\nb,Bee,a,Ay\n"
    kg = import_csv(write_csv(tmp_path, text))
    assert kg.edges == [Edge("a", "b", "")]
    assert kg.nodes["a"].label == "Ay"
    assert kg.nodes["b"].label == "Bee"


@pytest.mark.parametrize(
    ("row", "is_header"),
    [
        (["parent_id", "parent_label", "child_id", "child_label"], True),
        (["Parent ID", "Parent label", "Child-ID", "Child label"], True),
        (["parent", "parent_label", "child", "child_label", "relation"], True),
        (["Q27", "Ireland", "Q1", "Ulster"], False),
        (["parent", "Parent Town", "kid", "Kid Town"], False),
    ],
)
def test_detect_header(row: list[str], is_header: bool) -> None:
    assert detect_header(row) is is_header


def test_quoted_labels_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    text = '\ufeffa,"Queenstown, Singapore",b,"Don\'t ""Stop"""\r\n\r\nb,"Don\'t ""Stop""",c,"{child}?"\r\n'
    kg = import_csv(write_csv(tmp_path, text))
    assert [node.label for node in kg.nodes.values()] == [
        "Queenstown, Singapore",
        'Don\'t "Stop"',
        "{child}?",
    ]
    assert len(kg.edges) == 2


def test_shared_child_with_two_parents_is_allowed(tmp_path: Path) -> None:
    kg = import_csv(write_csv(tmp_path, "a,A,c,C\nb,B,c,C\n"))
    assert kg.roots() == ["a", "b"]


BAD_CSVS = [
    ("empty file", "", "no rows"),
    ("only blank", "\n\n", "no rows"),
    (
        "header only",
        "parent_id,parent_label,child_id,child_label\n",
        "no edge rows after the header",
    ),
    ("three columns", "a,A,b,B\nb,B,c\n", "line 2: expected 4 or 5 columns"),
    ("six columns", "a,A,b,B,r,x\n", "line 1: expected 4 or 5 columns"),
    ("empty id", "a,A,b,B\n\n,X,c,C\n", "line 3: parent_id is empty"),
    ("empty label", "a,A,b,\n", "line 1: child_label is empty"),
    (
        "label conflict",
        "a,A,b,B\nb,Bee,c,C\n",
        "line 2: node b is labelled 'Bee' here but 'B' on line 1",
    ),
    ("self loop", "a,A,b,B\nb,B,b,B\n", "line 2 (b -> b): self-loop"),
    (
        "duplicate edge",
        "a,A,b,B\nb,B,c,C\na,A,b,B,contains\n",
        "line 3 (a -> b): duplicate of line 1",
    ),
    ("cycle", "a,A,b,B\nb,B,c,C\nc,C,a,A\n", "line 3 (c -> a) closes it"),
    (
        "unknown header column",
        "parent_id,parent_label,child_id,child_label,weight\n",
        "line 1: unknown column 'weight'",
    ),
    (
        "header lacks label",
        "parent_id,child_id,child_label\na,b,B\n",
        "line 1: header lacks column parent_label",
    ),
    (
        "row shorter than header",
        "parent_id,parent_label,child_id,child_label\na,A,b\n",
        "line 2: expected 4 columns as in the header, got 3",
    ),
    ("unterminated quote", 'a,A,b,B\nb,"B,c,C\n', "line 2:"),
]


@pytest.mark.parametrize(("case", "text", "expected"), BAD_CSVS, ids=[c[0] for c in BAD_CSVS])
def test_bad_csv_names_file_and_line(tmp_path: Path, case: str, text: str, expected: str) -> None:
    path = write_csv(tmp_path, text)
    with pytest.raises(GraphError) as caught:
        import_csv(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_line_numbers_count_multiline_quoted_fields(tmp_path: Path) -> None:
    # row 1 spans lines 1-2, so the self-loop row starts on line 3
    path = write_csv(tmp_path, 'a,"A\nsecond line",b,B\nb,B,b,B\n')
    with pytest.raises(GraphError, match=r": line 3 \(b -> b\): self-loop"):
        import_csv(path)


def test_missing_and_non_utf8_csv(tmp_path: Path) -> None:
    with pytest.raises(GraphError, match=r"none\.csv: no such file"):
        import_csv(tmp_path / "none.csv")
    path = tmp_path / "latin.csv"
    path.write_bytes("a,Zürich,b,B\n".encode("latin-1"))
    with pytest.raises(GraphError, match="not UTF-8 text"):
        import_csv(path)


def test_default_built_is_an_iso_date(tmp_path: Path) -> None:
    kg = import_csv(write_csv(tmp_path, "a,A,b,B\n"))
    year, month, day = kg.built.split("-")
    assert (len(year), len(month), len(day)) == (4, 2, 2)
