"""The wizard's templates step: the template set choice (natural or the papers' texts) and the
question check's count with its examples, as `run.api.prepare` made them."""

from __future__ import annotations

from textual.widgets import Select, Static, TabbedContent

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.ticks import TickList
from tests.support.tui import TEN_RELATIONS, wait_for_screen, wait_until, widget_text


async def test_the_papers_set_is_one_choice_away_and_the_check_says_what_it_flags(
    db_path: str,
) -> None:
    app = make_app(kg=TEN_RELATIONS, model="sim", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.preparation is not None, what="the preparation")
        wizard.query_one("#wizard-tabs", TabbedContent).active = "step-templates"
        check = wizard.query_one("#question-check", Static)
        await wait_until(pilot, lambda: "Question check" in widget_text(check), what="check")
        assert widget_text(check) == (
            "Question check: 0 of 10 relations flagged (0.0%): every question reads cleanly"
        )
        ticks = wizard.query_one("#template-select", TickList)
        assert "t1: Does {parent} contain {child}?" in str(ticks.get_option_at_index(0).prompt)
        version = wizard.state.version
        wizard.query_one("#template-set", Select).value = "paper"
        await wait_until(
            pilot,
            lambda: wizard.state.version > version and wizard.preparation is not None,
            what="the papers' set prepared",
        )
        await wait_until(pilot, lambda: "flagged (100.0%)" in widget_text(check), what="check")
        lines = widget_text(check).splitlines()
        assert lines[0] == "Question check: 10 of 10 relations flagged (100.0%)"
        assert lines[1].startswith("  article or agreement (20): Does Ireland have a Ulster?")
        assert wizard.state.spec().template_set == "paper"
        assert "t1: Does {parent} have a {child}?" in str(ticks.get_option_at_index(0).prompt)
