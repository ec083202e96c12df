"""`kontest kg build` and `kontest kg search`: files written, one stderr line on failure."""

from __future__ import annotations

import json

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.kg.cache import built_kgs_dir
from kontest_tui.kg.io import load_graph


@pytest.fixture
def no_sleep(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr("kontest_tui.kg.sparql_client.time.sleep", waits.append)
    return waits


def test_build_writes_the_kg_file(endpoint, tmp_path, capsys):
    out = tmp_path / "ireland.json"
    code = run_cli(
        [
            "kg",
            "build",
            "--domain",
            "places",
            "--seed",
            "Q27",
            "--depth",
            "2",
            "--endpoint",
            endpoint.url,
            "--out",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out == (
        f"wrote {out}: 9 nodes, 8 edges (3 requests, 0 cached); skipped 1 item without a label in 'en' (Q3002)\n"
    )
    assert captured.err == ""
    kg = load_graph(out)
    assert [e.child for e in kg.edges] == [
        "Q20",
        "Q100",
        "Q300",
        "Q2001",
        "Q2002",
        "Q1001",
        "Q1002",
        "Q3001",
    ]
    assert "Q3002" not in kg.nodes
    assert (built_kgs_dir() / "ireland.json").read_bytes() == out.read_bytes()
    # rebuild: all from the cache, identical file
    again = tmp_path / "again.json"
    assert (
        run_cli(
            [
                "kg",
                "build",
                "--domain",
                "places",
                "--seed",
                "Q27",
                "--depth",
                "2",
                "--endpoint",
                endpoint.url,
                "--out",
                str(again),
            ]
        )
        == 0
    )
    assert "(0 requests, 3 cached)" in capsys.readouterr().out
    assert again.read_bytes() == out.read_bytes()
    assert endpoint.requests == 3


def test_build_default_out_name(endpoint, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert (
        run_cli(
            [
                "kg",
                "build",
                "--domain",
                "music",
                "--seed",
                "Q5000",
                "--depth",
                "2",
                "--endpoint",
                endpoint.url,
            ]
        )
        == 0
    )
    assert (tmp_path / "music-Q5000-d2.json").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "Ireland"], "not a Wikidata item id"),
        (["--seed", "Q27", "--lang", "en'"], "not a language tag"),
        (["--seed", "Q27", "--domain", "sports"], "unknown domain"),
        (["--seed", "Q27", "--depth", "0"], "--depth"),
    ],
)
def test_bad_input_exits_2_with_one_line(endpoint, capsys, tmp_path, args, message):
    base = ["kg", "build", "--endpoint", endpoint.url, "--out", str(tmp_path / "x.json")]
    if "--domain" not in args:
        base += ["--domain", "places"]
    code = run_cli(base + args)
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.count("\n") == 1 and captured.err.startswith("kontest: error: ")
    assert message in captured.err
    assert endpoint.requests == 0
    assert not (tmp_path / "x.json").exists()


def test_endpoint_down_exits_1_with_one_line(dead_url, no_sleep, capsys, tmp_path):
    code = run_cli(
        [
            "kg",
            "build",
            "--domain",
            "places",
            "--seed",
            "Q27",
            "--endpoint",
            dead_url,
            "--out",
            str(tmp_path / "x.json"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.count("\n") == 1
    assert "cannot reach the endpoint" in captured.err and dead_url in captured.err
    assert len(no_sleep) == 4


def test_max_nodes_exits_1_with_one_line(endpoint, capsys, tmp_path):
    code = run_cli(
        [
            "kg",
            "build",
            "--domain",
            "places",
            "--seed",
            "Q27",
            "--depth",
            "3",
            "--max-nodes",
            "5",
            "--endpoint",
            endpoint.url,
            "--out",
            str(tmp_path / "x.json"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err == (
        "kontest: error: the graph would have at least 10 nodes at depth 2, more than --max-nodes 5; "
        "lower --depth, use fewer seeds or raise --max-nodes\n"
    )


def test_search_offline_prints_matches(capsys):
    assert run_cli(["kg", "search", "ireland", "--offline", "--limit", "2", "--json"]) == 0
    matches = json.loads(capsys.readouterr().out)
    assert len(matches) == 2
    assert {m["label"] for m in matches} == {"Ireland"}
    assert {m["source"] for m in matches} == {"sample:places", "sample:subdivisions"}


def test_search_text_output_and_empty(capsys):
    assert run_cli(["kg", "search", "zzzzqqqq", "--offline"]) == 0
    assert capsys.readouterr().out == "no entity matches 'zzzzqqqq'\n"
    assert run_cli(["kg", "search", " ", "--offline"]) == 2
    assert capsys.readouterr().err == "kontest: error: the search text is empty\n"


def test_help_lists_build_and_search(capsys):
    assert run_cli(["kg", "--help"]) == 0
    out = capsys.readouterr().out
    assert "build" in out and "search" in out


def test_progress_line_on_a_terminal(capsys):
    from kontest_tui.cli.kg_wikidata import _progress_printer
    from kontest_tui.kg.wikidata import BuildProgress

    show = _progress_printer(True)
    show(BuildProgress("children", 2, 200, 250, 4321))
    show(BuildProgress("labels", 0, 500, 4321, 4321))
    assert capsys.readouterr().err == (
        "\r\033[Kdepth 2: parents 200/250, nodes 4321\r\033[Klabels: 500/4321 nodes"
    )
    _progress_printer(False)(BuildProgress("children", 1, 0, 1, 1))
    assert capsys.readouterr().err == ""
