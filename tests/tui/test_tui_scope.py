"""Scope in the wizard: chosen entities cut the session to their subtrees (kg.scope)."""

from __future__ import annotations

from textual.widgets import Button, Input, OptionList, Select, TabbedContent, Tree

from kontest_tui.generate.relations import extract_relations
from kontest_tui.kg.io import load_graph
from kontest_tui.kg.scope import scope_graph
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import notifications, wait_for_screen, wait_until, widget_text


async def choose_entity(pilot, wizard: WizardScreen, typed: str, source: str) -> None:
    """Type a name, go Down into the suggestions and pick the first from `source`."""
    field = wizard.query_one("#entity-input", Input)
    field.value = typed
    suggestions = wizard.query_one("#entity-suggestions", OptionList)

    def matching() -> list[int]:
        prompts = [str(option.prompt) for option in suggestions.options]
        return [i for i, p in enumerate(prompts) if p.startswith(typed) and source in p]

    await wait_until(pilot, lambda: bool(matching()), what=f"suggestions for {typed}")
    suggestions.highlighted = matching()[0]
    suggestions.action_select()


async def test_choosing_entities_scopes_counts_preview_and_tree(db_path: str) -> None:
    app = make_app(kg="music", model="sim", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kg is not None and wizard.kg.name == "music")
        wizard.query_one("#wizard-tabs", TabbedContent).active = "step-graph"
        wizard.query_one("#depth-select", Select).value = 2
        await pilot.pause()
        await choose_entity(pilot, wizard, "Ireland", "sample:places")

        def scope() -> list[str]:
            return [entity.id for entity in wizard.state.entities]

        def relations() -> list[str] | None:
            preparation = wizard.preparation
            if preparation is None or preparation.summary is None:
                return None
            return [r.id for r in preparation.listed]

        await wait_until(pilot, lambda: scope() == ["ireland"], what="the scope")
        # The search field has the focus again: the next name can be typed at once.
        await wait_until(
            pilot,
            lambda: app.focused is wizard.query_one("#entity-input", Input),
            what="the search field focused",
        )
        places = load_graph("places")
        expected = extract_relations(scope_graph(places, ["ireland"], 2))
        await wait_until(
            pilot,
            lambda: relations() == [r.id for r in expected],
            what="the scoped relations",
        )
        assert wizard.kg is not None and wizard.kg.name == "places"
        # The selector names the graph loaded, the counts and the scope line say what is kept.
        assert wizard.query_one("#sample-select", Select).value == "places"
        assert f"{len(expected)} relations" in widget_text(wizard.query_one("#kg-counts"))
        assert "Scope: Ireland (depth 2 below each)" in widget_text(wizard.query_one("#scope-text"))
        tree = wizard.query_one("#kg-tree", Tree)
        assert [str(node.label).split(" (")[0] for node in tree.root.children] == ["Ireland"]
        assert tree.root.children[0].is_expanded
        # A second entity adds its subtree; Clear scope gives the whole KG back.
        await choose_entity(pilot, wizard, "Qatar", "sample:places")
        await wait_until(pilot, lambda: len(scope()) == 2, what="two entities")
        both = extract_relations(scope_graph(places, ["ireland", "qatar"], 2))
        await wait_until(pilot, lambda: relations() == [r.id for r in both], what="both subtrees")
        wizard.query_one("#clear-scope", Button).press()
        whole = extract_relations(places, depth=2)
        await wait_until(
            pilot,
            lambda: wizard.preparation is not None and wizard.preparation.relations == len(whole),
            what="the whole KG",
        )
        assert scope() == []


async def test_a_leaf_entity_keeps_run_off_and_says_why(db_path: str) -> None:
    """Kinawley has no children; the wizard says so and Run stays off (rather than a run
    failing on the live screen)."""
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        wizard.query_one("#wizard-tabs", TabbedContent).active = "step-graph"
        await choose_entity(pilot, wizard, "Kinawley", "sample:places")
        await wait_until(
            pilot,
            lambda: wizard.preparation is not None and bool(wizard.preparation.problems),
            what="the problem",
        )
        counts = widget_text(wizard.query_one("#kg-counts"))
        assert "Kinawley has nothing below it" in counts
        assert wizard.query_one("#run").disabled
        assert "Kinawley has nothing below it" in widget_text(wizard.query_one("#run-reason"))
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, WizardScreen)
        notes = [str(n.message) for n in notifications(app)]
        assert any(n.startswith("Run is off: Kinawley has nothing below it") for n in notes)
