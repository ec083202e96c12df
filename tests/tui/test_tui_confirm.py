"""`r` on the results asks every error again in a worker; then the card says whether its
error was confirmed, the Errors tab lists confirmed errors first with their status and
filters by it; `R` asks the error on the card alone."""

from __future__ import annotations

import pytest
from textual.widgets import Select

from kontest_tui.oracles.confirmation import CONFIRMED
from kontest_tui.report.confirmation import status_word
from kontest_tui.run import confirm
from kontest_tui.store import Store
from kontest_tui.store.view_records import ErrorFilter
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.paged_table import PagedTable
from tests.support.tui import TEN_RELATIONS, notified, paged_rows, wait_for_screen, wait_until


async def test_r_asks_every_error_again_and_the_list_and_card_follow(
    db_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(confirm, "DEFAULT_REWORDINGS", 0)  # no WordNet: t3 is the one try
    app = make_app(kg=TEN_RELATIONS, model="sim", db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kg is not None, what="the graph")
        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen, timeout=120)
        await pilot.press("n")
        await wait_until(pilot, lambda: results.shown_card is not None, what="the card")
        assert results.shown_card is not None and results.shown_card.confirmation is None

        await pilot.press("r")
        await wait_until(pilot, lambda: notified(app, "calls in"), what="the errors asked")
        await wait_until(
            pilot,
            lambda: results.shown_card is not None and results.shown_card.confirmation,
            what="the card read again",
        )
        with Store(db_path) as store:
            session = results.session_id
            asked = store.confirmations.statuses(session)
            confirmed = store.error_list.count_errors(session, where=ErrorFilter(status=CONFIRMED))
        assert len(asked) == results.error_count and confirmed
        assert not results.confirming

        # The Errors tab: confirmed errors first, each row's Status; filtered by status.
        await pilot.press("x")
        await wait_until(pilot, lambda: bool(results.query("#error-table")), what="errors")
        table = results.query_one("#error-table", PagedTable)
        await wait_until(pilot, lambda: table.row_count == results.error_count, what="rows")
        rows = await paged_rows(pilot, table)
        column = [title for title, _ in table.columns].index("Status")
        shown = [row[column].split(",")[0] for row in rows]
        assert shown[:confirmed] == [status_word(CONFIRMED)] * confirmed
        assert status_word(CONFIRMED) not in shown[confirmed:]
        results.query_one("#error-status", Select).value = CONFIRMED
        await wait_until(pilot, lambda: table.row_count == confirmed, what="the filter")

        # R: the error on the card alone.
        await pilot.press("t")
        await pilot.press("R")
        await wait_until(pilot, lambda: notified(app, "of 1 error"), what="one error asked")
