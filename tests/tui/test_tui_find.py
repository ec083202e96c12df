"""Finding things and keeping one's place in the results, on a stored 12-relation
places session (Luxembourg: two places called Garnich, 13 errors): `/` finds a node by name
and n / p walk the matches, escape clears; the Errors tab follows the find, sorts by a
column, filters by template and never cuts `#` or Detail; `f` keeps the node; the results
reopen where they were left; `y` copies the card. Each figure is checked against the store's
own lists (store.search, store.error_list), whose orders are worked out by hand in
tests/store/test_store_find.py."""

from __future__ import annotations

import asyncio

from textual.widgets import Input, Select

from kontest_tui.report.explain_render import card_text
from kontest_tui.store import Store
from kontest_tui.store.view_records import RELATION, ErrorFilter
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.widgets.paged_table import PagedTable
from kontest_tui.tui.widgets.relation_tree import RelationTree
from tests.support.sessions import store_sessions
from tests.support.tui import notified, paged_rows, wait_for_screen, wait_until, widget_text

GARNICHES = (
    "luxembourg.canton-of-capellen.garnich",
    "luxembourg.canton-of-capellen.garnich.garnich",
)
RODENBOURG = "luxembourg.canton-of-grevenmacher.junglinster.rodenbourg"


async def open_results(pilot, app, session_id: str) -> ResultsScreen:  # noqa: ANN001
    await pilot.pause()
    app.open_results(session_id)
    results = await wait_for_screen(pilot, ResultsScreen)
    await wait_until(pilot, lambda: results.ready, what="the results")
    return results


def on(tree: RelationTree, node: str) -> bool:
    cursor = tree.cursor_node
    return cursor is not None and cursor.data is not None and cursor.data.node == node


async def find(pilot, results: ResultsScreen, text: str) -> None:  # noqa: ANN001
    """`/`, the text typed (set at once), enter."""
    await pilot.press("slash")
    results.query_one("#find-input", Input).value = text
    await pilot.press("enter")


async def test_find_walks_the_matches_filters_the_errors_and_clears(db_path: str) -> None:
    from textual.command import CommandList, CommandPalette
    from textual.widgets import Input

    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)])
    with Store(db_path) as store:
        matches = store.search.find_nodes(session_id, "garnich")
        near = store.error_list.errors(session_id, limit=50, where=ErrorFilter(nodes=GARNICHES))
        total = store.error_list.count_errors(session_id)
    assert tuple(match.node for match in matches) == GARNICHES  # both exact, graph order
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        results = await open_results(pilot, app, session_id)
        tree = results.query_one("#relation-tree", RelationTree)
        await find(pilot, results, "garnich")
        await wait_until(pilot, lambda: on(tree, GARNICHES[0]), what="the first Garnich")
        status = results.query_one("#find-status")
        assert widget_text(status).startswith("1/2: Garnich (in Canton of Capellen)")
        for key, node in (("n", 1), ("n", 0), ("p", 1)):  # n / p walk them, around the end
            await pilot.press(key)
            await wait_until(pilot, lambda n=node: on(tree, GARNICHES[n]), what=f"match {node}")
        # The Errors tab lists the errors on the relations of the nodes found.
        await pilot.press("x")
        table = results.query_one("#error-table", PagedTable)
        await wait_until(pilot, lambda: table.row_count == len(near) > 0, what="their errors")
        rows = await paged_rows(pilot, table)
        assert [row[2] for row in rows] == [f"{e.parent_name} ⊃ {e.child_name}" for e in near]
        assert "relations with 2 nodes like 'garnich'" in widget_text(
            results.query_one("#error-found")
        )
        # There n walks those errors.
        await pilot.press("n")
        await wait_until(pilot, lambda: results.current_error is not None, what="an error")
        assert results.current_error is not None
        assert results.current_error.verdict_id == near[0].verdict_id
        # Escape clears the find: every error listed, n walks them all again.
        await pilot.press("x")
        await pilot.press("escape")
        await wait_until(pilot, lambda: table.row_count == total, what="every error")
        assert not results.found and not results.query_one("#find-bar").display
        await find(pilot, results, "no such place anywhere")
        await wait_until(pilot, lambda: notified(app, "No node matches"), what="no match")
        await pilot.press("escape")

        # The palette names each command's key once (one Quit) and goes to a node by name.
        await pilot.press("ctrl+p")
        palette = await wait_for_screen(pilot, CommandPalette)
        commands = palette.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count > 10, what="the commands")
        shown = [
            str(commands.get_option_at_index(i).prompt).split("\n")[0]
            for i in range(commands.option_count)
        ]
        assert sum(1 for line in shown if line.startswith("Quit")) == 1  # Textual's left out
        assert "Next error  n" in shown and "Find  /" in shown and "Help  f1 / ?" in shown
        palette.query_one(Input).value = "rodenb"
        await wait_until(
            pilot,
            lambda: (
                commands.option_count
                and str(commands.get_option_at_index(0).prompt).startswith("Go to Rodenbourg")
            ),
            what="the node offered first",
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: on(tree, RODENBOURG), what="Rodenbourg selected")
        assert not results.found  # n / p still walk the errors


async def test_f_keeps_the_node_and_the_results_reopen_where_they_were(db_path: str) -> None:
    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)])
    with Store(db_path) as store:
        first, second = store.error_list.errors(session_id, limit=2)
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        results = await open_results(pilot, app, session_id)
        tree = results.query_one("#relation-tree", RelationTree)
        legend = results.query_one("#tree-legend")
        assert widget_text(legend).startswith("all nodes (f: errors only)")
        await find(pilot, results, "rodenbourg")
        await wait_until(pilot, lambda: on(tree, RODENBOURG), what="Rodenbourg")
        for mode in ("errors only (f: all nodes)", "all nodes (f: errors only)"):
            await pilot.press("f")
            await wait_until(pilot, lambda m=mode: widget_text(legend).startswith(m), what=mode)
            await wait_until(pilot, lambda: on(tree, RODENBOURG), what="the node kept")
        # The first error's card, then away and back: the results open on it.
        await pilot.press("escape", "n")
        await wait_until(pilot, lambda: results.error_index == 0, what="the first error")
        await wait_until(pilot, lambda: results.shown_card is not None, what="its card")
        await pilot.press("escape")  # home (no find left to clear)
        await wait_until(pilot, lambda: not isinstance(app.screen, ResultsScreen), what="home")
        again = await open_results(pilot, app, session_id)
        tree = again.query_one("#relation-tree", RelationTree)
        place = first.relation
        assert place is not None
        await wait_until(pilot, lambda: on(tree, place.child), what="the place")
        await wait_until(pilot, lambda: again.shown_card is not None, what="the card")
        assert again.current_error is not None
        assert again.current_error.verdict_id == first.verdict_id
        await pilot.press("n")  # n goes on from there
        await wait_until(pilot, lambda: again.error_index == 1, what="the next error")
        assert again.current_error.verdict_id == second.verdict_id
        # y copies the card shown, as text.
        await wait_until(pilot, lambda: again.shown_card is not None, what="the second card")
        await pilot.press("y")
        assert again.shown_card is not None and app.clipboard == card_text(again.shown_card)


async def test_errors_sort_by_a_column_filter_by_template_and_never_cut(db_path: str) -> None:
    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)])
    with Store(db_path) as store:
        by_relation = store.error_list.errors(session_id, limit=50, order=RELATION)
        asked_t2 = store.error_list.count_errors(session_id, where=ErrorFilter(template="t2"))
    app = make_app(db=db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        results = await open_results(pilot, app, session_id)
        await pilot.press("x")
        await wait_until(pilot, lambda: bool(results.query("#error-table")), what="the tab")
        table = results.query_one("#error-table", PagedTable)
        rows = await paged_rows(pilot, table)
        # `#` as wide as "13", Detail as wide as its longest text: the table scrolls sideways.
        widths = table._least_widths()
        detail = [title for title, _ in table.columns].index("Detail")
        assert widths[0] == 2 and widths[detail] == max(len(row[detail]) for row in rows) > 14
        assert table.virtual_size.width > table.view_width
        # Rows wrapped (W): every detail whole on the table's width.
        await pilot.press("W")
        assert table.wrap and table.row_lines > 1 and table.virtual_size.width == table.view_width
        await pilot.press("W")
        # A click on the Relation header sorts by relation.
        await pilot.click("#error-table", offset=(table._widths()[0] + 24, 0))
        order = results.query_one("#error-order", Select)
        await wait_until(pilot, lambda: order.value == RELATION, what="the order")
        await wait_until(pilot, lambda: table.row(0) is not None, what="sorted")
        sorted_rows = await paged_rows(pilot, table)
        assert [row[2] for row in sorted_rows] == [
            f"{e.parent_name} ⊃ {e.child_name}" for e in by_relation
        ]
        results.query_one("#error-template", Select).value = "t2"
        await wait_until(pilot, lambda: table.row_count == asked_t2 > 0, what="t2's errors")
        assert all("t2" in row[3] for row in await paged_rows(pilot, table))


async def test_the_footer_fits_its_keys_and_always_shows_help(db_path: str) -> None:
    """`a` and `o` were in no footer and the probe screen cut `f1` at 80 columns: the footer
    now shows what fits, help always, a and o where there is room."""
    from textual.widgets._footer import FooterKey

    from kontest_tui.tui.screens.probe import ProbeScreen

    def keys(screen) -> list[str]:  # noqa: ANN001
        return [key.key for key in screen.query(FooterKey)]

    (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 12)])
    app = make_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        results = await open_results(pilot, app, session_id)
        await wait_until(pilot, lambda: "f1" in keys(results), what="the footer")
        shown = keys(results)
        assert {"n", "slash", "a", "o", "w", "e", "ctrl+q", "f1"} <= set(shown)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "o" not in keys(results), what="the footer at 80")
        assert {"n", "slash", "a", "f1"} <= set(keys(results))
        footer = results.query_one("KeyFooter")
        assert sum(key.outer_size.width for key in results.query(FooterKey)) <= footer.size.width
        await pilot.press("n")
        await wait_until(pilot, lambda: results.selected_relation_id is not None, what="error")
        await pilot.press("a")
        probe = await wait_for_screen(pilot, ProbeScreen)
        await wait_until(pilot, lambda: "f1" in keys(probe), what="the probe's help key")
        width = sum(key.outer_size.width for key in probe.query(FooterKey))
        assert width <= probe.query_one("KeyFooter").size.width
