"""The KG picture (report.picture): inline SVG, errors in red with their verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import Answer, Relation, Verdict
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import load_graph
from kontest_tui.kg.scope import scope_graph
from kontest_tui.report.picture import draw_picture


def kinawley() -> tuple[KnowledgeGraph, list[Relation]]:
    nodes = {
        "ie": Node("ie", "Ireland"),
        "ul": Node("ul", "Ulster"),
        "ki": Node("ki", "Kinawley\x1b[31m"),  # an escape code in a label is not drawn
    }
    kg = KnowledgeGraph("kinawley", "places", nodes, [Edge("ie", "ul"), Edge("ul", "ki")])
    relations = [
        Relation("ie>ul", "ie", "ul", "contains", ("ie", "ul")),
        Relation("ul>ki", "ul", "ki", "contains", ("ul", "ki")),
        Relation("ie>ki", "ie", "ki", "contains", ("ie", "ul", "ki")),
    ]
    return kg, relations


def test_the_papers_kinawley_error_is_red_with_its_yes_path() -> None:
    kg, relations = kinawley()
    yes, no = Answer.YES, Answer.NO
    atomic = {
        ("ie>ul", "t1"): yes,
        ("ie>ul", "t2"): yes,
        ("ul>ki", "t1"): yes,
        ("ul>ki", "t2"): yes,
        ("ie>ki", "t1"): no,
        ("ie>ki", "t2"): no,
    }
    error = Verdict(
        "ontological", "ie>ki", "t1", True, (), (no,), "implied by yes-path ie -> ul -> ki"
    )
    picture = draw_picture(kg, relations, atomic, [error])
    page = picture.svg
    assert page.startswith("<svg")
    assert "<script" not in page and "src=" not in page and "href=" not in page  # offline
    assert "\x1b" not in page
    assert (picture.relations, picture.errors, picture.nodes_with_errors) == (3, 1, 1)
    # Kinawley is red with the verdict in its tooltip, by label.
    assert (
        "Ireland &gt; Kinawley · implied facts: its yes-answers chain Ireland → Ulster → "
        "Kinawley, yet it said no to “Ireland contains Kinawley”" in page
    )
    assert 'fill="#cf222e" font-weight="bold">Kinawley' in page
    assert ">⚠1<" in page  # one ontological error (report.legend: the tree's marks)
    # Errors only keeps Kinawley and the way to it; a node without errors below goes.
    assert "Ulster" in draw_picture(kg, relations, atomic, [error], errors_only=True).svg


def test_kontest_report_format_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "s.db")
    argv = ["run", "--kg", "places", "--entity", "Ireland", "--depth", "2", "--db", db, "-q"]
    assert run_cli([*argv, "--model", "sim:forgetful"]) == 0
    capsys.readouterr()
    assert run_cli(["report", "--db", db, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    out = tmp_path / "kg.html"
    assert run_cli(["report", "--db", db, "--format", "html", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert f"{report['relations']} relations, " in page
    scoped = scope_graph(load_graph("places"), ["Ireland"], 2)
    assert page.count("<circle") == len(scoped.nodes)  # a tree: each node drawn once
