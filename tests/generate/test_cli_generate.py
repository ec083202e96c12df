"""`kontest generate`: JSONL and text output, options, and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.cli.generate import GenerateRequest, generate_conversations, parse_template_ids
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import save_graph


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(["generate", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def kinawley_file(tmp_path: Path, kinawley_kg: KnowledgeGraph) -> Path:
    return save_graph(kinawley_kg, tmp_path / "kinawley.json")


def test_jsonl_for_the_running_example(capsys, kinawley_file: Path) -> None:
    code, out, err = run(capsys, "--kg", str(kinawley_file))
    assert code == 0 and err == ""
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 12
    assert sum(len(row["turns"]) for row in rows) == 18
    assert rows[2] == {
        "id": "Ireland>Ireland/Ulster/t1+t2",
        "relation": "Ireland>Ireland/Ulster",
        "kind": "sequential",
        "label": "A",
        "test_kind": "kontest",
        "turns": [
            {"template": "t1", "text": "Does Ireland contain Ulster?"},
            {"template": "t2", "text": "Is Ulster in Ireland?"},
        ],
    }


def test_templates_paper_gives_the_papers_texts(capsys, kinawley_file: Path) -> None:
    code, out, err = run(capsys, "--kg", str(kinawley_file), "--templates", "paper")
    assert code == 0 and err == ""
    rows = [json.loads(line) for line in out.splitlines()]
    assert [turn["text"] for turn in rows[2]["turns"]] == [
        "Does Ireland have a Ulster?",
        "Is there a Ulster in Ireland?",
    ]


def test_text_format_limit_and_template_ids(capsys, kinawley_file: Path) -> None:
    args = [
        "--kg",
        str(kinawley_file),
        "--format",
        "text",
        "--template-ids",
        "t3,t1",
        "--limit",
        "2",
    ]
    code, out, _ = run(capsys, *args)
    assert code == 0
    assert out.splitlines() == [
        "asked alone · Ireland>Ireland/Ulster/t3",
        "    1. [t3] Is Ulster part of Ireland?",
        "asked alone · Ireland>Ireland/Ulster/t1",
        "    1. [t1] Does Ireland contain Ulster?",
    ]


def test_samples_depth_and_per_path(capsys) -> None:
    code, out, _ = run(capsys, "--kg", "places", "--per-path")
    assert code == 0 and len(out.splitlines()) == 4 * 294
    code, out, _ = run(capsys, "--kg", "music", "--depth", "1")
    assert code == 0 and len(out.splitlines()) == 4 * 50


def test_custom_template_file(capsys, tmp_path: Path, kinawley_file: Path) -> None:
    templates = tmp_path / "mine.toml"
    templates.write_text(
        'domain = "places"\n[[templates]]\nid = "t1"\n[templates.texts]\n'
        'contains = "Is {child} part of {parent}?"\n',
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "--kg", str(kinawley_file), "--templates", str(templates))
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["turns"][0]["text"] for row in rows] == [
        "Is Ulster part of Ireland?",
        "Is Kinawley part of Ireland?",
        "Is Kinawley part of Ulster?",
    ]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--kg", "no-such-sample"], "no-such-sample"),
        (["--kg", "places", "--template-ids", "t1,t9"], "t9"),
        (["--kg", "places", "--template-ids", "t1,,t2"], "empty id"),
        (["--kg", "places", "--depth", "0"], "--depth"),
        (["--kg", "places", "--format", "xml"], "xml"),
        (["--kg", "places", "--templates", "missing.toml"], "missing.toml"),
        ([], "--kg"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, args: list[str], expected: str) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("kontest: error:") and err.count("\n") == 1
    assert expected in err and "Traceback" not in err


def test_broken_template_file_is_one_line(capsys, tmp_path: Path) -> None:
    templates = tmp_path / "bad.toml"
    templates.write_text(
        'domain = "places"\n[[templates]]\nid = "t1"\n[templates.texts]\n'
        'contains = "Does {parent} have a {chld}?"\n',
        encoding="utf-8",
    )
    code, _, err = run(capsys, "--kg", "places", "--templates", str(templates))
    assert code == 2 and err.count("\n") == 1
    assert "bad.toml" in err and "template t1" in err and "{chld}" in err


def test_generate_builds_the_kinds_named_from_the_registry(kinawley_kg: KnowledgeGraph) -> None:
    # the kinds' options come in the request's extras under their keys (cli.kinds.kind_flags)
    kontest = generate_conversations(GenerateRequest(kg=kinawley_kg))
    both = generate_conversations(
        GenerateRequest(kg=kinawley_kg, extras={"variants": True, "strength": 1})
    )
    alone = generate_conversations(
        GenerateRequest(kg=kinawley_kg, extras={"kinds": ("variant",), "strength": 1})
    )
    assert {str(c.test_kind) for c in kontest} == {"kontest"}
    assert both[: len(kontest)] == kontest
    assert both[len(kontest) :] == alone and alone
    assert {str(c.test_kind) for c in alone} == {"variant"}


def test_parse_template_ids() -> None:
    assert parse_template_ids(None) is None
    assert parse_template_ids(" ") is None
    assert parse_template_ids("t1, t3") == ("t1", "t3")
