"""A country-shaped session in the explorer: a places KG shaped like a country at depth 3
(10 regions, 100 districts, 1,000 places: 3,210 relations, 19,260 model calls) from `ctrl+r`
to the results, then the errors walked with `n`; and a place found by name with `/`: "Grane"
lands on its node, its error's card and its errors. (The same screens at 15k and 100k
relations, timed: benchmarks/tui.py.)

Everything shown is checked against the store (the engine's stored report and the store's
error list), never against figures copied from a run.
"""

from __future__ import annotations

import json
from pathlib import Path

from kontest_tui.report.words import oracle_name
from kontest_tui.results.reports import session_report
from kontest_tui.store import Store
from kontest_tui.store.view_records import CLEAREST, ErrorFilter
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.paged_table import PagedTable
from kontest_tui.tui.widgets.relation_tree import RelationTree
from tests.support.tui import cursor_node_id, paged_rows, wait_for_screen, wait_until, widget_text


def ancestors(line):  # noqa: ANN001, ANN201
    """The tree lines above `line`, from its root down."""
    found = []
    while line.parent is not None and line.parent.data is not None:
        line = line.parent
        found.append(line)
    return list(reversed(found))


SHAPE = (10, 10, 10)  # regions, districts per region, places per district
RELATIONS = 10 + 2 * 10 * 10 + 3 * 10 * 10 * 10  # every ancestor pair: 3,210
GRANE = "r5d5p5"  # one place is called Grane (sim answers it with 4 errors, all into it)


def write_country(path: Path) -> None:
    """One country, SHAPE below it, unique labels (the simulated model tells them apart)."""
    nodes = [{"id": "c", "label": "Country", "aliases": [], "type": "country"}]
    edges = []

    def add(node_id: str, label: str, kind: str, parent: str) -> None:
        nodes.append({"id": node_id, "label": label, "aliases": [], "type": kind})
        edges.append({"parent": parent, "child": node_id, "relation": "contains"})

    regions, districts, places = SHAPE
    for r in range(regions):
        add(f"r{r}", f"Region {r}", "region", "c")
        for d in range(districts):
            add(f"r{r}d{d}", f"District {r}-{d}", "district", f"r{r}")
            for p in range(places):
                place = f"r{r}d{d}p{p}"
                label = "Grane" if place == GRANE else f"Place {r}-{d}-{p}"
                add(place, label, "locality", f"r{r}d{d}")
    head = {"name": "country", "domain": "places", "source": "test", "built": ""}
    path.write_text(json.dumps({**head, "nodes": nodes, "edges": edges}), encoding="utf-8")


async def test_a_country_from_ctrl_r_to_its_errors(tmp_path: Path, db_path: str) -> None:
    kg = tmp_path / "country.json"
    write_country(kg)
    app = make_app(kg=str(kg), model="sim", db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.state.run_state()[0], timeout=120, what="Run on")
        assert wizard.preparation is not None and wizard.preparation.relations == RELATIONS
        assert wizard.preparation.calls == 6 * RELATIONS
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen, timeout=240)
        session_id = results.session_id
        with Store(db_path) as store:
            report = session_report(store, session_id).report
            first, second = (
                store.error_list.error_at(session_id, i, order=CLEAREST) for i in (0, 1)
            )
            total = store.error_list.count_errors(session_id)
        assert report["relations"] == RELATIONS and report["executions"] == 6 * RELATIONS
        shown = widget_text(results.query_one("#result-counts"))
        assert f"relations {RELATIONS}" in shown and f"executions {6 * RELATIONS}" in shown
        assert first is not None and second is not None and total > 2
        # n from the top: the clearest error, then the next one, each selected in the graph.
        await pilot.press("n")
        await wait_until(pilot, lambda: results.error_index == 0, what="the first error")
        assert results.current_error is not None
        assert results.current_error.verdict_id == first.verdict_id
        await pilot.press("n")
        await wait_until(pilot, lambda: results.error_index == 1, what="the second error")
        assert results.current_error.verdict_id == second.verdict_id
        await pilot.press("p")
        await wait_until(pilot, lambda: results.error_index == 0, what="back to the first")

        # Find "Grane" by name: its node selected (the way to it opened), its error's card.
        with Store(db_path) as store:
            near = store.error_list.errors(session_id, limit=100, where=ErrorFilter(nodes=(GRANE,)))
        assert near and all(row.relation is not None for row in near)
        assert all(
            GRANE in (row.relation.parent, row.relation.child) for row in near if row.relation
        )
        tree = results.query_one("#relation-tree", RelationTree)
        await pilot.press("slash")
        await pilot.press(*"Grane", "enter")
        await wait_until(
            pilot,
            lambda: cursor_node_id(tree) == GRANE,
            what="Grane selected",
        )
        assert [line.data.node for line in ancestors(tree.cursor_node)] == ["c", "r5", "r5d5"]
        await wait_until(pilot, lambda: results.shown_card is not None, what="its card")
        assert "Grane" in widget_text(results.query_one("#detail-text")).splitlines()[1]
        # ... and its errors: the Errors tab lists the errors on its relations.
        await pilot.press("x")
        table = results.query_one("#error-table", PagedTable)
        await wait_until(pilot, lambda: table.row_count == len(near), what="Grane's errors")
        rows = await paged_rows(pilot, table)
        assert all("Grane" in row[2] for row in rows)
        assert [row[1] for row in rows] == [oracle_name(e.verdict.oracle) for e in near]
