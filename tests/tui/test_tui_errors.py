"""Every error findable through the store's views: next/previous error (the clearest first),
errors only, rolled-up counts, the Errors tab paged and its enter, the gap lists paged."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select, TabbedContent

from kontest_tui.kg.io import load_graph, save_graph
from kontest_tui.kg.scope import scope_graph
from kontest_tui.report.words import oracle_name
from kontest_tui.results.evaluate import evaluate_session
from kontest_tui.store import Store
from kontest_tui.store.view_records import TreeNode
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.paged_table import PAGE, PagedTable
from kontest_tui.tui.widgets.relation_tree import RelationTree
from tests.support.tui import cursor_node_id, paged_rows, wait_for_screen, wait_until, widget_text

# Three countries of the subdivisions sample, with two and three levels below them.
ENTITIES = ("BE", "ES", "LU")


def subtree_errors(node: TreeNode | None) -> int:
    """The errors a results tree line carries below it."""
    assert node is not None
    return node.subtree.error_total


def write_subdivisions(tmp_path: Path) -> Path:
    return save_graph(scope_graph(load_graph("subdivisions"), ENTITIES), tmp_path / "sub.json")


async def run_to_results(pilot, tmp_path: Path) -> ResultsScreen:  # noqa: ANN001
    await wait_for_screen(pilot, WizardScreen)
    await pilot.press("ctrl+r")
    return await wait_for_screen(pilot, ResultsScreen)


async def test_next_error_walks_the_clearest_first(tmp_path: Path, db_path: str) -> None:
    app = make_app(kg=str(write_subdivisions(tmp_path)), model="sim:forgetful", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        results = await run_to_results(pilot, tmp_path)
        with Store(db_path) as store:
            verdicts = evaluate_session(store, results.session_id).verdicts
            relations = {
                relation.id: relation for relation in store.relations.load(results.session_id)
            }
            ordered = store.error_list.errors(results.session_id, limit=10_000)
        errors = [verdict for verdict in verdicts if verdict.error]
        assert len(errors) > PAGE  # enough for the Errors tab to page
        assert sorted(row.verdict.relation_id for row in ordered) == sorted(
            verdict.relation_id for verdict in errors
        )
        # The clearest error first: an atomic one whose two answers are valid.
        assert ordered[0].verdict.oracle == "atomic"
        assert {answer.value for answer in ordered[0].verdict.answers} == {"yes", "no"}

        tree = results.query_one("#relation-tree", RelationTree)
        # Collapsed roots carry the errors below them: together they carry them all.
        assert sum(subtree_errors(line.data) for line in tree.root.children) == len(errors)

        async def step(key: str, index: int) -> None:
            await pilot.press(key)
            row = ordered[index]
            child = relations[row.verdict.relation_id].child
            await wait_until(
                pilot,
                lambda: (
                    results.error_index == index
                    and cursor_node_id(tree) == child
                    and "▶" in widget_text(results.query_one("#detail-text"))
                ),
                what=f"error {index}",
            )

        for index in range(8):
            await step("n", index)
        detail = widget_text(results.query_one("#detail-text"))
        # The card of the error heads the pane, then the node's roll-ups.
        from kontest_tui.report.words import CARD_TITLES

        assert detail.splitlines()[0] in CARD_TITLES.values()
        assert "and below:" in detail.split("─" * 40, 1)[1].strip().splitlines()[0]
        await step("p", 6)
        results.error_index = 0
        await step("p", len(ordered) - 1)  # wraps around to the last
        await step("n", 0)

        # Errors only: only the nodes with errors into them or below them.
        await pilot.press("f")
        await wait_until(pilot, lambda: tree.errors_only, what="errors only")
        assert tree.root.children
        assert all(subtree_errors(line.data) for line in tree.root.children)
        await pilot.press("f")
        await wait_until(pilot, lambda: not tree.errors_only, what="the whole graph")

        # The Errors tab pages; enter on its last row selects that relation in the graph.
        await pilot.press("x")
        await wait_until(pilot, lambda: bool(results.query("#error-table")), what="errors")
        table = results.query_one("#error-table", PagedTable)
        await wait_until(pilot, lambda: table.row_count == len(errors), what="error rows")
        rows = await paged_rows(pilot, table, upto=3)
        assert [row[1] for row in rows] == [oracle_name(r.verdict.oracle) for r in ordered[:3]]
        assert set(table.pages) == {0}  # only the page drawn is held
        table.move_cursor(len(errors) - 1)
        await wait_until(pilot, lambda: table.row(len(errors) - 1) is not None, what="last page")
        assert (len(errors) - 1) // PAGE in table.pages and len(table.pages) <= 3
        await pilot.press("enter")
        last = relations[ordered[-1].verdict.relation_id]
        await wait_until(
            pilot,
            lambda: (
                results.query_one("#result-tabs", TabbedContent).active == "tab-graph"
                and cursor_node_id(tree) == last.child
            ),
            what="the last error's node",
        )
        assert results.error_index == len(errors) - 1

        # Filtered to one oracle: the table and n follow the filter.
        await pilot.press("x")
        results.query_one("#error-filter", Select).value = "ontological"
        ontological = [row for row in ordered if row.verdict.oracle == "ontological"]
        await wait_until(pilot, lambda: table.row_count == len(ontological), what="filtered")
        await step_filtered(
            pilot, results, tree, relations[ontological[0].verdict.relation_id].child
        )


async def step_filtered(pilot, results, tree, child: str) -> None:  # noqa: ANN001
    await pilot.press("n")
    await wait_until(
        pilot,
        lambda: results.error_index == 0 and cursor_node_id(tree) == child,
        what="the first ontological error",
    )


async def test_gap_lists_page_per_template(tmp_path: Path, db_path: str) -> None:
    app = make_app(kg=str(write_subdivisions(tmp_path)), model="sim:forgetful", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        results = await run_to_results(pilot, tmp_path)
        report = results.report
        assert report is not None
        await pilot.press("g")
        await wait_until(pilot, lambda: bool(results.query("#gap-table")), what="the gap tab")
        table = results.query_one("#gap-table", PagedTable)
        select = results.query_one("#gap-select", Select)
        groups = {**report["gap"]["per_template"], "intersection": report["gap"]["intersection"]}
        for group, figures in groups.items():
            select.value = group
            await wait_until(
                pilot,
                lambda f=figures, g=group: (
                    results.gap_group == g and table.row_count == f["missing"]
                ),
                what=f"gap {group}",
            )
        with Store(db_path) as store:
            intersection = store.gaps.gap_page(results.session_id, "intersection")
        rows = await paged_rows(pilot, table, upto=2)
        assert rows[0][1] == f"{intersection[0].parent_name} ⊃ {intersection[0].child_name}"
        # Choosing one selects it in the graph.
        table.move_cursor(1)
        await pilot.press("enter")
        tree = results.query_one("#relation-tree", RelationTree)
        await wait_until(
            pilot,
            lambda: (
                results.query_one("#result-tabs", TabbedContent).active == "tab-graph"
                and cursor_node_id(tree) == intersection[1].way[-1]
            ),
            what="the gap relation's node",
        )
