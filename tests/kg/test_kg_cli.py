"""`kontest kg import` and `kontest kg info`: output, and bad input -> exit 2 with one stderr line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.kg.io import load_graph

EDGES = "parent_id,parent_label,child_id,child_label\na,Ireland,b,Ulster\nb,Ulster,c,Cavan\nc,Cavan,d,Kinawley\n"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_import_then_info(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv_path = write(tmp_path / "edges.csv", EDGES)
    out = tmp_path / "kg.json"
    code = run_cli(
        ["kg", "import", str(csv_path), "--out", str(out), "--name", "ire", "--domain", "places"]
    )
    assert code == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}: 4 nodes, 3 edges, 1 roots"
    kg = load_graph(out)
    assert (kg.name, kg.domain, len(kg.nodes)) == ("ire", "places", 4)

    assert run_cli(["kg", "info", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["nodes"], data["edges"], data["paths"], data["relations"]) == (4, 3, 1, 6)
    assert data["roots"] == ["Ireland"]

    assert run_cli(["kg", "info", str(out), "--depth", "1"]) == 0
    text = capsys.readouterr().out
    assert "Paths      1 (depth <= 1)" in text
    assert "Relations  1 (deduplicated by node ids)" in text


def test_info_on_sample_name_per_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["kg", "info", "places", "--per-path", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["relations"] == 294
    assert data["per_path"] is True


def test_help_texts(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["kg", "--help"], ["kg", "import", "--help"], ["kg", "info", "--help"]):
        assert run_cli(command) == 0
    out = capsys.readouterr().out
    assert "import" in out and "--out" in out and "--per-path" in out


def bad_inputs(tmp_path: Path) -> list[list[str]]:
    bad_json = write(tmp_path / "bad.json", '{"nodes": [')
    cycle = write(
        tmp_path / "cycle.json",
        json.dumps(
            {
                "nodes": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
                "edges": [{"parent": "a", "child": "b"}, {"parent": "b", "child": "a"}],
            }
        ),
    )
    bad_csv = write(tmp_path / "bad.csv", "a,A,b,B\nb,B,c\n")
    good_csv = write(tmp_path / "good.csv", "a,A,b,B\n")
    return [
        ["kg", "info", str(bad_json)],
        ["kg", "info", str(cycle)],
        ["kg", "info", str(tmp_path / "missing.json")],
        ["kg", "info", "nosuchsample"],
        ["kg", "info", "places", "--depth", "0"],
        ["kg", "info"],
        ["kg", "import", str(bad_csv), "--out", str(tmp_path / "o.json")],
        ["kg", "import", str(good_csv)],
        ["kg", "import", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "o.json")],
        ["kg", "import", str(good_csv), "--out", str(good_csv / "o.json")],
    ]


def test_bad_input_exit_2_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in bad_inputs(tmp_path):
        code = run_cli(argv)
        captured = capsys.readouterr()
        assert code == 2, argv
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1, (argv, captured.err)
        assert lines[0].startswith("kontest: error: ")
        assert "Traceback" not in captured.err
    assert not (tmp_path / "o.json").exists()


def test_bad_input_through_the_real_entry_point(tmp_path: Path) -> None:
    csv_path = write(tmp_path / "dup.csv", "a,A,b,B\na,A,b,B\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kontest_tui.cli",
            "kg",
            "import",
            str(csv_path),
            "--out",
            str(tmp_path / "o.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == f"kontest: error: {csv_path}: line 2 (a -> b): duplicate of line 1\n"
    assert done.stdout == ""
