"""KG labels are drawn cleaned: escape codes in a label never reach the terminal, in the
wizard's graph preview or in the results tree and detail pane; markup stays text."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static, Tree

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.paged_table import PagedTable
from tests.support.tui import paged_rows, wait_for_screen, wait_for_workers, wait_until

ULSTER = "\x1b[31mUlster\x1b[0m\x1b]0;pwned\x07"


def write_hostile_kg(tmp_path: Path) -> Path:
    kg = {
        "name": "hostile",
        "domain": "places",
        "source": "test",
        "built": "",
        "nodes": [
            {"id": "Q27", "label": "Ireland", "aliases": [], "type": "country"},
            {"id": "Q190", "label": ULSTER, "aliases": [], "type": "region"},
            {"id": "Q6413", "label": "[bold]Kinawley[/bold]", "aliases": [], "type": "locality"},
        ],
        "edges": [
            {"parent": "Q27", "child": "Q190", "relation": "contains"},
            {"parent": "Q190", "child": "Q6413", "relation": "contains"},
        ],
    }
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(kg), encoding="utf-8")
    return path


def tree_lines(tree: Tree) -> list[str]:
    lines: list[str] = []
    stack = [tree.root]
    while stack:
        node = stack.pop()
        lines.append(str(node.label))
        stack.extend(node.children)
    return lines


def assert_clean(texts: list[str]) -> None:
    joined = "\n".join(texts)
    assert "\x1b" not in joined and "\x07" not in joined and "pwned" not in joined
    assert "Ulster" in joined


async def test_escape_codes_in_labels_are_removed_in_every_tree(
    tmp_path: Path, db_path: str
) -> None:
    app = make_app(kg=str(write_hostile_kg(tmp_path)), model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kg is not None, what="the graph")
        await wait_for_workers(pilot)
        for tree in wizard.query(Tree):
            if tree.root.children:
                assert_clean(tree_lines(tree))
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        await wait_until(pilot, lambda: results.ready, what="the results")
        tree = results.query_one("#relation-tree", Tree)
        lines = tree_lines(tree)
        assert_clean(lines)
        assert any("[bold]Kinawley[/bold]" in line for line in lines)  # markup shown as typed
        await pilot.press("down")
        await wait_for_workers(pilot)
        detail = str(results.query_one("#detail-text", Static).render())
        assert "\x1b" not in detail and "pwned" not in detail
        await pilot.press("x")
        await wait_until(pilot, lambda: bool(results.query("#error-table")), what="the errors")
        table = results.query_one("#error-table", PagedTable)
        await wait_until(pilot, lambda: table.row_count > 0, what="error rows")
        rows = ["".join(row) for row in await paged_rows(pilot, table)]
        assert "\x1b" not in "".join(rows) and "pwned" not in "".join(rows)
