"""Widget renderers, the command palette provider and the template editor."""

from __future__ import annotations

from typing import cast

from textual.widgets import DataTable, Input, TabbedContent

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Answer
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.store.view_records import Rollup, TreeNode
from kontest_tui.tui.app import make_app
from kontest_tui.tui.commands import KontestCommands
from kontest_tui.tui.screens.curation import TemplateEditorScreen
from kontest_tui.tui.screens.start import StartScreen
from kontest_tui.tui.widgets.counts import render_counts
from kontest_tui.tui.widgets.gap_bars import render_bar, render_gap
from kontest_tui.tui.widgets.relation_tree import render_node_label
from tests.support.tui import wait_for_screen, wait_until, widget_text

# the sections of a report the header and gap widgets read
REPORT = cast(
    ReportJSON,
    {
        "relations": 10,
        "executions": 60,
        "valid": 58,
        "invalid": 2,
        "tests": {"atomic": 9, "sequential_intra": 18, "sequential_inter": 17, "ontological": 4},
        "errors": {
            "atomic": 1,
            "sequential_intra": 0,
            "sequential_inter": 2,
            "ontological": 1,
            "total": 4,
        },
        "error_rate": 0.0833,
        "gap": {
            "per_template": {"t1": {"missing": 3, "pct": 30.0}, "t2": {"missing": 5, "pct": 50.0}},
            "intersection": {"missing": 2, "pct": 20.0},
        },
        "coverage": {"covered": 8, "pct": 80.0},
    },
)


def test_counts_show_each_oracle_as_errors_over_tests() -> None:
    text = render_counts(REPORT).plain
    assert "relations 10 · executions 60 · valid 58 · invalid 2" in text
    # Each test by its name in words (report.words), never its JSON key.
    assert "two phrasings alone 1/9" in text
    assert "same conversation 0/18" in text
    assert "after its paraphrase 2/17" in text
    assert "implied facts 1/4" in text
    assert "sequential_" not in text and "atomic" not in text
    assert "total 4" in text
    assert "error rate 8.3%" in text
    assert render_counts(cast(ReportJSON, {})).plain == "No answers yet."


def test_counts_wrap_between_items_never_inside_one() -> None:
    """`error rate` and `12.0%` (and `183` and `error rate`) are never split over two lines
    by the header's width. Worked out at 40 columns: each line is filled with
    whole items, the next item starting a line of its own ("two phrasings alone 1/9" and
    "same conversation 0/18" are 23 + 2 + 22 = 47 wide; "implied facts 1/4  KONTEST total
    4" 34, with "  error rate 8.3%" 51)."""
    lines = render_counts(REPORT, width=40).plain.splitlines()
    assert lines == [
        "relations 10 · executions 60 · valid 58",
        "invalid 2",
        "two phrasings alone 1/9",
        "same conversation 0/18",
        "after its paraphrase 2/17",
        "implied facts 1/4  KONTEST total 4",
        "error rate 8.3%",
    ]
    assert all(len(line) <= 40 for line in lines)
    unwrapped = render_counts(REPORT).plain.splitlines()
    assert unwrapped[1].endswith("KONTEST total 4  error rate 8.3%")


def test_gap_bars_are_proportional() -> None:
    bar = render_bar("gap t2", 5, 50.0, width=10).plain
    assert bar.count("█") == 5 and bar.count("░") == 5
    assert bar.endswith("5 (50.0%)")
    text = render_gap(REPORT, width=10, texts={"t1": "Does {parent} have a {child}?"}).plain
    assert "t1 " in text and "3 (30.0%)  “Does {parent} have a {child}?”" in text
    assert "intersection" in text and "2 (20.0%)" in text
    assert "coverage" in text and "8 (80.0%)" in text
    assert text.splitlines()[-1].count("█") == 8  # coverage 80% of 10 cells


def tree_row(own: dict[str, int], below: dict[str, int]) -> TreeNode:
    errors = {oracle: own.get(oracle, 0) + below.get(oracle, 0) for oracle in {*own, *below}}
    return TreeNode(
        node="B",
        parent="A",
        name="[red]B[/red]",
        label="[red]B[/red]",
        children=2,
        relation="A>B",
        answers={"t1": Answer.YES, "t2": Answer.NO},
        own=Rollup(1, own, {}),
        subtree=Rollup(3, errors, {}),
    )


def test_node_label_is_plain_text_with_answers_and_marks() -> None:
    label = render_node_label(tree_row({}, {}), ["t1", "t2"], expanded=False)
    assert label.plain.startswith("[red]B[/red]")  # a label is never read as markup
    assert "t1:yes" in label.plain and "t2:no" in label.plain
    assert "≠" not in label.plain and "⚠" not in label.plain and "▸" not in label.plain
    row = tree_row({"atomic": 1, "ontological": 2, "logic": 1}, {"atomic": 4})
    collapsed = render_node_label(row, ["t1", "t2"], expanded=False).plain
    assert collapsed.endswith("≠ ⚠2 ✗1 ▸4")  # own errors by kind, then the 4 below it
    assert render_node_label(row, ["t1", "t2"], expanded=True).plain.endswith("≠ ⚠2 ✗1")


def test_clean_text_removes_escapes() -> None:
    assert clean_text("\x1b[31mYes\x1b[0m\x07") == "Yes"


async def test_palette_offers_the_screens_actions(db_path: str) -> None:
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        start = await wait_for_screen(pilot, StartScreen)
        provider = KontestCommands(start)
        names = {binding.description for _, binding in provider.iter_bindings()}
        assert {"New session", "Open sample", "Refresh", "Quit", "Help"} <= names
        hits = [hit async for hit in provider.search("new session")]
        assert hits
        await hits[0].command()
        await pilot.pause()
        assert type(app.screen).__name__ == "WizardScreen"


async def test_template_editor_validates_placeholders(db_path: str) -> None:
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, StartScreen)
        editor = TemplateEditorScreen(None)
        await app.push_screen(editor)
        await wait_until(pilot, lambda: editor.template_set is not None, what="templates")
        await pilot.pause()
        assert editor.query_one("#template-id", Input).value == "t4"  # places has t1..t3
        text = editor.query_one("#template-text", Input)
        text.value = "Is {child} part of {parnt}?"
        await pilot.pause()
        assert "unknown placeholder" in widget_text(editor.query_one("#template-status"))
        text.value = "Is {child} part of {parent}?"
        await pilot.pause()
        assert "placeholders OK" in widget_text(editor.query_one("#template-status"))


async def test_a_new_template_is_asked_alone_and_gets_its_gap(tmp_path, db_path: str) -> None:
    from kontest_tui.tui.screens.results import ResultsScreen
    from kontest_tui.tui.screens.wizard import WizardScreen
    from tests.support.tui import write_kinawley

    kg_path, _ = write_kinawley(tmp_path)
    app = make_app(kg=str(kg_path), model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen)
        assert results.report is not None and results.report["executions"] == 18  # 3 x 6 calls
        await pilot.press("e")
        editor = await wait_for_screen(pilot, TemplateEditorScreen)
        editor.query_one("#template-text", Input).value = "Is {child} part of {parent}?"
        await pilot.pause()
        assert editor.query_one("#template-preview", DataTable).row_count == 3
        await pilot.press("ctrl+r")
        await wait_until(
            pilot,
            lambda: (
                "“Is {child} part of {parent}?”" in widget_text(editor.query_one("#template-gap"))
            ),
            what="t4 gap",
        )
        gap = widget_text(editor.query_one("#template-gap"))
        assert "t1 " in gap and "“Does {parent} contain {child}?”" in gap and "t2 " in gap


async def test_fuzzy_entity_picker_loads_the_entitys_sample(db_path: str) -> None:
    from textual.widgets import OptionList

    from kontest_tui.tui.screens.wizard import WizardScreen

    app = make_app(kg="music", model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kg is not None and wizard.kg.name == "music")
        wizard.query_one("#wizard-tabs", TabbedContent).active = "step-graph"
        await pilot.pause()
        wizard.query_one("#entity-input", Input).value = "Kinawly"  # misspelt on purpose
        suggestions = wizard.query_one("#entity-suggestions", OptionList)
        await wait_until(pilot, lambda: suggestions.option_count > 0, what="suggestions")
        first = suggestions.get_option_at_index(0)
        assert "Kinawley" in str(first.prompt) and "sample:places" in str(first.prompt)
        suggestions.highlighted = 0
        suggestions.action_select()
        await wait_until(
            pilot,
            lambda: wizard.preparation is not None and wizard.state.source == "places",
            what="the places sample",
        )
        assert [entity.label for entity in wizard.state.entities] == ["Kinawley"]
        assert wizard.kg is not None and wizard.kg.name == "places"


async def test_an_unreachable_model_keeps_run_off_with_the_reason(db_path: str) -> None:
    from kontest_tui.tui.screens.wizard import WizardScreen

    # Port 9 on 127.0.0.1: nothing listens there, the connection is refused at once.
    app = make_app(kg="places", model="ollama:none@http://127.0.0.1:9", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")  # armed: it waits for the check, which fails
        await wait_until(pilot, lambda: wizard.state.model_checked, what="the model check")
        await wait_until(pilot, lambda: not wizard.state.preparing, what="the preparation")
        ready, reason = wizard.state.run_state()
        assert not ready and reason.startswith("The model does not answer")
        assert "127.0.0.1:9" in reason
        assert isinstance(app.screen, WizardScreen) and not wizard.state.armed
        assert "127.0.0.1:9" in widget_text(wizard.query_one("#model-status"))
        assert wizard.query_one("#run").disabled


async def test_a_run_whose_model_stops_answering_fails_on_the_live_screen(db_path: str) -> None:
    from kontest_tui.run.api import SessionSpec
    from kontest_tui.tui.screens.live_run import LiveRunScreen

    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        spec = SessionSpec("places", model="ollama:none@http://127.0.0.1:9")
        run = LiveRunScreen(spec)
        await app.push_screen(run)
        await wait_until(pilot, lambda: run.finished, what="the failed run")
        assert run.failed and "127.0.0.1:9" in run.failed
        assert widget_text(run.query_one("#run-state")).startswith("failed: 0 answers")
        assert run.tally.snapshot().answered == 0


async def test_per_path_mode_counts_every_pair_on_every_path(db_path: str) -> None:
    from textual.widgets import Checkbox

    from kontest_tui.tui.screens.wizard import WizardScreen

    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)

        def relations() -> int | None:
            return wizard.preparation.relations if wizard.preparation is not None else None

        await wait_until(pilot, lambda: relations() == 265, what="265 relations")
        wizard.query_one("#per-path", Checkbox).value = True
        # the places sample: 294 ancestor pairs counted per path (265 distinct)
        await wait_until(pilot, lambda: relations() == 294, what="294 per-path pairs")
        assert "294 relations" in widget_text(wizard.query_one("#kg-counts"))
