"""Every error findable: next/previous error, errors only, rolled-up counts, Errors tab enter."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, TabbedContent

from kontest_tui.kg.io import load_graph, save_graph
from kontest_tui.kg.scope import scope_graph
from kontest_tui.run.session import evaluate_session
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.relation_tree import RelationTree
from tests.support.tui import wait_for_screen, wait_until, widget_text

# Three countries of the subdivisions sample, with two and three levels below them.
ENTITIES = ("BE", "ES", "LU")


def write_subdivisions(tmp_path: Path) -> Path:
    return save_graph(scope_graph(load_graph("subdivisions"), ENTITIES), tmp_path / "sub.json")


async def test_next_error_visits_every_error_the_engine_found(tmp_path: Path, db_path: str) -> None:
    app = make_app(kg=str(write_subdivisions(tmp_path)), model="sim:forgetful", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        with Store(db_path) as store:
            verdicts = evaluate_session(store, results.result.session_id).verdicts
        relations = {relation.id: relation for relation in results.result.plan.relations}
        errors = [verdict for verdict in verdicts if verdict.error]
        expected = {relations[verdict.relation_id].child for verdict in errors}
        assert len(expected) > 5  # sim:forgetful errs on many relations

        tree = results.query_one("#relation-tree", RelationTree)
        # Collapsed nodes carry the errors below them: the roots together carry them all.
        rolled = sum(tree.errors_below[root.data] for root in tree.root.children)
        own = sum(tree.own_errors.get(root.data, 0) for root in tree.root.children)
        assert rolled + own == len(errors)

        visited: list[str] = []
        for _ in range(len(expected)):
            await pilot.press("n")
            await pilot.pause()
            node = tree.cursor_node
            assert node is not None and node.data is not None
            visited.append(node.data)
            detail = widget_text(results.query_one("#detail-text"))
            # The node's own relation (from the tree parent) and its verdicts come first.
            first = detail.splitlines()[0]
            assert first.startswith(results.names.name(node.parent.data)), first
            assert "✗" in detail.split("Transcripts")[0]
        assert set(visited) == expected
        assert len(visited) == len(set(visited))
        await pilot.press("n")  # wraps around to the first
        assert tree.cursor_node.data == visited[0]
        await pilot.press("p")
        assert tree.cursor_node.data == visited[-1]

        # Errors only: exactly the nodes with errors and the way to them.
        await pilot.press("f")
        shown: set[str] = set()
        stack = list(tree.root.children)
        while stack:
            node = stack.pop()
            shown.add(node.data)
            stack.extend(node.children)
        assert expected <= shown
        assert all(tree.errors_below.get(n, 0) or tree.own_errors.get(n, 0) for n in shown)
        await pilot.press("f")

        # Enter on an Errors tab row selects its relation in the graph.
        await pilot.press("x")
        table = results.query_one("#error-table", DataTable)
        await wait_until(pilot, lambda: table.row_count == len(errors), what="error rows")
        table.move_cursor(row=len(errors) - 1)
        await pilot.press("enter")
        await pilot.pause()
        assert results.query_one("#result-tabs", TabbedContent).active == "tab-graph"
        relation = relations[errors[-1].relation_id]
        assert tree.cursor_node.data == relation.child
        assert relation.parent in tree.current_path()


async def test_gap_tab_lists_the_relations_of_each_gap(tmp_path: Path, db_path: str) -> None:
    from textual.widgets import OptionList

    app = make_app(kg=str(write_subdivisions(tmp_path)), model="sim:forgetful", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        report = results.report
        await pilot.press("g")
        gap_list = results.query_one("#gap-list", OptionList)
        await wait_until(pilot, lambda: gap_list.option_count > 0, what="the gap list")
        groups: dict[str, list[str]] = {}
        for option in gap_list.options:
            if option.id:
                group, relation_id = option.id.split("\t", 1)
                groups.setdefault(group, []).append(relation_id)
        for template_id, figures in report["gap"]["per_template"].items():
            assert len(groups.get(template_id, [])) == figures["missing"]
        assert len(groups.get("intersection", [])) == report["gap"]["intersection"]["missing"]
        # Choosing one selects it in the graph.
        chosen = next(i for i, option in enumerate(gap_list.options) if option.id)
        gap_list.highlighted = chosen
        await pilot.press("enter")
        await pilot.pause()
        relation_id = gap_list.options[chosen].id.split("\t", 1)[1]
        relation = next(r for r in results.result.plan.relations if r.id == relation_id)
        tree = results.query_one("#relation-tree", RelationTree)
        assert results.query_one("#result-tabs", TabbedContent).active == "tab-graph"
        assert tree.cursor_node.data == relation.child
