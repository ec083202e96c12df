"""`kontest ca`: JSON in, JSON rows out, one-line errors with exit code 2."""

from __future__ import annotations

import itertools
import json

import pytest

from kontest_tui.cli import run_cli


def write(tmp_path, data) -> str:
    path = tmp_path / "ipm.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_ca_prints_rows(tmp_path, capsys) -> None:
    ipm = {
        "parameters": [
            {"name": "have", "values": ["have", "contain", "include"]},
            {"name": "Ireland", "values": ["Ireland", "Éire"]},
            {"name": "a", "values": ["a"]},
            {"name": "Ulster", "values": ["Ulster", "Cúige Uladh", "Ulaidh"]},
        ]
    }
    code = run_cli(["ca", "--ipm", write(tmp_path, ipm), "--strength", "2", "--seed", "4"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows[0] == ["have", "Ireland", "a", "Ulster"]
    assert len(rows) == 9  # 3 x 3 pairs of the two 3-valued words: optimal
    for a, b in itertools.combinations(range(4), 2):
        values_a = ipm["parameters"][a]["values"]
        values_b = ipm["parameters"][b]["values"]
        assert {(r[a], r[b]) for r in rows} == set(itertools.product(values_a, values_b))


def test_ca_forbidden(tmp_path, capsys) -> None:
    ipm = {
        "parameters": [{"name": "x", "values": ["a", "b"]}, {"name": "y", "values": ["c", "d"]}],
        "forbidden": [{"x": "b", "y": "d"}],
    }
    assert run_cli(["ca", "--ipm", write(tmp_path, ipm)]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert ["b", "d"] not in rows
    assert sorted(rows) == [["a", "c"], ["a", "d"], ["b", "c"]]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ({"params": []}, "parameters"),
        ({"parameters": [{"name": "x", "values": []}]}, "non-empty"),
        ({"parameters": [{"name": "x", "values": ["a", "a"]}]}, "repeats"),
        ({"parameters": [{"values": ["a"]}]}, "name"),
        (
            {"parameters": [{"name": "x", "values": ["a"]}], "forbidden": [{"x": "z"}]},
            "unknown value",
        ),
    ],
)
def test_ca_bad_files(tmp_path, capsys, content, message) -> None:
    assert run_cli(["ca", "--ipm", write(tmp_path, content)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kontest: error:") and message in err
    assert err.count("\n") == 1


def test_ca_missing_file_and_strength(tmp_path, capsys) -> None:
    assert run_cli(["ca", "--ipm", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    ipm = write(tmp_path, {"parameters": [{"name": "x", "values": ["a"]}]})
    assert run_cli(["ca", "--ipm", ipm, "--strength", "7"]) == 2
    assert "strength" in capsys.readouterr().err


def test_generate_variants(capsys) -> None:
    assert (
        run_cli(
            [
                "generate",
                "--kg",
                "places",
                "--variants",
                "--strength",
                "2",
                "--variant-limit",
                "2",
                "--postfix",
            ]
        )
        == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    variants = [d for d in lines if d["test_kind"] == "variant"]
    kontest = [d for d in lines if d["test_kind"] == "kontest"]
    assert variants and kontest
    first = variants[0]
    assert first["id"].endswith("/t1~v0") and first["label"] == "t1 v0"
    assert first["turns"][0]["text"].endswith("? Return a JSON Boolean.")
    second = variants[1]
    assert second["id"].endswith("/t1~v1")
    # Luxembourg's first variant: its ISO official name, said with "the" as the label is
    assert second["meta"]["changed"] == {"parent": "the Grand Duchy of Luxembourg"}
    assert second["turns"][0]["text"] == (
        "Does the Grand Duchy of Luxembourg contain the Canton of Capellen? Return a JSON Boolean."
    )
    # --variant-limit 2: never more than v0, v1 per query.
    assert not any("~v2" in d["id"] for d in variants)


def test_generate_without_variants_flag(capsys) -> None:
    assert run_cli(["generate", "--kg", "places", "--limit", "50"]) == 0
    assert '"variant"' not in capsys.readouterr().out
