"""The explorer's messages are written for the explorer: a KG with too many
paths is a problem of the graph step that says how to narrow the scope with the wizard's
own controls, with no command-line flag and no exception class name; the command line
keeps its flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import wait_for_screen, wait_until, widget_text


def diamonds(path: Path, count: int = 21) -> Path:
    """`count` diamonds in a chain (n0 -> a0, b0 -> n1 -> ...): 2 ** count root-to-leaf
    paths, over the 1,000,000 a walk may take at 21."""
    nodes = [{"id": "n0", "label": "N0", "aliases": [], "type": "place"}]
    edges = []
    for i in range(count):
        for side in ("a", "b"):
            nodes.append(
                {"id": f"{side}{i}", "label": f"{side.upper()}{i}", "aliases": [], "type": "place"}
            )
            edges.append({"parent": f"n{i}", "child": f"{side}{i}", "relation": "contains"})
            edges.append({"parent": f"{side}{i}", "child": f"n{i + 1}", "relation": "contains"})
        nodes.append({"id": f"n{i + 1}", "label": f"N{i + 1}", "aliases": [], "type": "place"})
    graph = {"name": "diamonds", "domain": "places", "source": "test", "built": ""}
    path.write_text(json.dumps({**graph, "nodes": nodes, "edges": edges}), encoding="utf-8")
    return path


async def test_too_many_paths_is_said_in_the_wizards_words(tmp_path: Path, db_path: str) -> None:
    kg = diamonds(tmp_path / "diamonds.json")
    app = make_app(kg=str(kg), db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.state.preparation is not None, what="prepare")
        preparation = wizard.state.preparation
        assert preparation is not None
        (problem,) = [p for p in preparation.problems if p.step == "graph"]
        assert "more than 1,000,000 root-to-leaf paths" in problem.message
        assert problem.message.endswith(
            "narrow the scope: choose a depth, or entities to keep with their subtrees."
        )
        shown = widget_text(wizard.query_one("#kg-counts"))
        assert problem.message in shown
        for words in ("--", "GraphError", "TooManyPaths", "Preparing failed"):
            assert words not in shown


def test_the_command_line_keeps_its_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kg = diamonds(tmp_path / "diamonds.json")
    code = run_cli(["run", "--kg", str(kg), "--db", str(tmp_path / "s.db"), "-q"])
    err = capsys.readouterr().err
    assert code != 0
    assert err.startswith("kontest: error: KG 'diamonds' has more than 1,000,000")
    assert "narrow it with --depth N or --entity NAME" in err
