"""The demo path: from `kontest --kg places --model sim`, after ctrl+r, a clear
atomic contradiction is on screen as a card and saved to the exports folder in at most five
keys; the card heads the detail pane and names no code; `a` probes the card's relation."""

from __future__ import annotations

from textual.widgets import Static

from kontest_tui.tui.app import make_app
from kontest_tui.tui.export import export_folder
from kontest_tui.tui.screens.probe import ProbeScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import TEN_RELATIONS, notifications, wait_for_screen, wait_until, widget_text


async def test_a_clear_contradiction_on_screen_and_saved_in_five_keys(db_path: str) -> None:
    keys = 0

    async def press(pilot, key: str) -> None:
        nonlocal keys
        keys += 1
        await pilot.press(key)

    app = make_app(kg=TEN_RELATIONS, model="sim", db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kg is not None, what="the graph")
        await press(pilot, "ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen, timeout=120)
        await press(pilot, "n")
        await wait_until(pilot, lambda: results.shown_card is not None, what="the card")
        card = results.shown_card
        assert card is not None and card.oracle == "atomic"  # the clearest error first
        shown = widget_text(results.query_one("#detail-text", Static))
        assert shown.startswith("Two phrasings, opposite answers\nFact tested: ")
        head = shown.split("─" * 40)[0]
        for code in (" Q1 ", " Q2 ", " t1:", " A1 ", "atomic"):
            assert code not in head, code
        # Both answers valid and opposite, each question shown with its template's text.
        reads = [chat.turns[0].read for chat in card.chats]
        assert sorted(reads) == ["no", "yes"]
        assert "Template: Does {parent} contain {child}?" in head
        before = set(export_folder().glob("*"))
        await press(pilot, "s")
        await wait_until(
            pilot,
            lambda: len(set(export_folder().glob("*")) - before) == 3,
            what="the card files",
        )
        saved = sorted(path.suffix for path in set(export_folder().glob("*")) - before)
        assert saved == [".html", ".md", ".svg"]
        assert keys <= 5
        await wait_until(
            pilot,
            lambda: any(".svg" in str(n.message) for n in notifications(app)),
            what="the notification naming the files",
        )
        md = next(p for p in set(export_folder().glob("*.md")) - before)
        assert card.fact in md.read_text(encoding="utf-8").replace("\\", "")

        # `a` asks about the card's relation by hand.
        await pilot.press("a")
        probe = await wait_for_screen(pilot, ProbeScreen)
        assert results.current_error is not None
        assert probe.relation_id == results.current_error.verdict.relation_id
        await wait_until(pilot, lambda: probe.ready, what="the probe rows")
