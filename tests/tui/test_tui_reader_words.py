"""The explorer's views of a session with every test kind speak the engine's words
(report.words): no paper code (Q1, A2, B1) and no machine oracle name (sequential_intra) in
the Errors tab's rows, the detail pane (verdicts, transcripts, the card), the tree's
roll-ups, the counters, the Kinds tab, the live panes and the wizard's preview.

The views are the functions the screens draw with, fed by the store's views
(store.views.ResultViews) as the results screen feeds them.
"""

from __future__ import annotations

import html
import re

import pytest
from rich.console import Console
from textual.app import App

from kontest_tui.domain.records import Answer, Response
from kontest_tui.report.explain_render import card_to_rich
from kontest_tui.report.explain_store import explain_verdict
from kontest_tui.results.evaluate import evaluation_engine
from kontest_tui.results.reports import ensure_report
from kontest_tui.run.api import prepare, preview_relation, stored_spec
from kontest_tui.run.live import LiveAnswer, LiveCounts, LiveError
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.results_text import describe_rollup, error_cells, render_relation_detail
from kontest_tui.tui.screens.live_run import render_answers, render_errors, render_live_counts
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.widgets.counts import render_counts
from kontest_tui.tui.widgets.kind_sections import render_kind_sections
from kontest_tui.tui.widgets.wizard.templates import render_conversations
from tests.support.sessions import store_every_kind
from tests.support.tui import settle, wait_until

YES = Answer.YES
CODES = re.compile(r"\b[QAB][12]\b")
MACHINE = re.compile(r"sequential_intra|sequential_inter|multiple_choice|two_hop|yes_no")


def plain(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def assert_reader_text(text: str, where: str) -> None:
    for line in text.splitlines():
        assert not CODES.search(line), f"{where}: a paper code in {line!r}"
        assert not MACHINE.search(line), f"{where}: a machine name in {line!r}"


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    folder = tmp_path_factory.mktemp("words")
    db = str(folder / "every.db")
    return db, store_every_kind(db, folder)


def test_every_view_of_every_kind_speaks_words(every_kind) -> None:
    db, sessions = every_kind
    shown: list[tuple[str, str]] = []
    oracles: set[str] = set()
    for session in sessions:
        with Store(db) as store:
            report = ensure_report(store, session).report
            views = store.views
            views.ensure(session, evaluation_engine())
            rows = store.error_list.errors(session, limit=10_000)
            oracles |= {row.verdict.oracle for row in rows}
            shown += [(" | ".join(map(str, error_cells(row))), "Errors tab") for row in rows]
            relations = list(dict.fromkeys(row.verdict.relation_id for row in rows))
            found = [store.details.relation_detail(session, relation) for relation in relations]
            details = [detail for detail in found if detail is not None]  # annotated: no KG
            templates = views.templates(session)
            for detail in details:
                shown.append((plain(render_relation_detail([detail], templates)), "detail"))
            for node in store.tree.children(session, None):
                shown.append((plain(describe_rollup(node)), "roll-up"))
            for row in rows[:40]:
                card = explain_verdict(store, session, row.verdict)
                shown.append((plain(card_to_rich(card)), f"card of {row.verdict.oracle}"))
            shown.append((plain(render_counts(report)), "counters"))
            shown.append((plain(render_kind_sections(report)), "Kinds tab"))
            errors = tuple(LiveError(row.verdict, "Is there a Kinawley in Ulster?") for row in rows)
            answers = tuple(
                LiveAnswer(record.conversation, Response(record.conversation.id, 0, "Yes.", YES))
                for detail in details
                for record in detail.conversations
            )
            live = LiveCounts(
                answered=len(answers),
                tests=dict.fromkeys(("atomic", "sequential_intra", "sequential_inter"), 9),
                errors=dict.fromkeys(("atomic", "sequential_intra", "sequential_inter"), 1),
                recent=answers,
                recent_errors=errors,
            )
            shown.append((plain(render_errors(live)), "live errors"))
            shown.append((plain(render_answers(live)), "live answers"))
            shown.append((plain(render_live_counts(live)), "live counters"))
            if report.get("relations"):
                preparation = prepare(stored_spec(store, session))
                for relation in preparation.listed[:6]:
                    preview = preview_relation(preparation.spec, relation, variant_rows=False)
                    shown.append((plain(render_conversations(preview)), "wizard preview"))
    # The session holds every kind's errors, so every kind of row was looked at.
    assert {
        "atomic",
        "sequential_intra",
        "sequential_inter",
        "ontological",
        "variant",
        "factcheck",
        "logic",
        "annotation",
    } <= oracles
    assert any("same conversation" in text for text, _ in shown)
    for text, where in shown:
        assert_reader_text(text, where)


def screen_text(app: App) -> str:
    """The text on the screen now, line by line (the screenshot's text, unescaped)."""
    svg = app.export_screenshot()
    return "\n".join(
        html.unescape(part).replace("\xa0", " ") for part in re.findall(r">([^<>]*)</text>", svg)
    )


async def test_the_results_screens_of_every_kind_speak_words(every_kind) -> None:
    """The explorer as a reader sees it: the first session's results (every kind of error),
    each of its first errors' cards in the detail pane (n), and every tab: no paper code and
    no machine name anywhere on the screen."""
    db, sessions = every_kind
    app = make_app(db=db)
    seen: list[tuple[str, str]] = []
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.open_stored_session(sessions[0])
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, ResultsScreen) and app.screen.ready,
            what="the session's results",
        )
        for number in range(8):
            await pilot.press("n")
            await settle(pilot)
            seen.append((screen_text(app), f"error {number + 1} (n)"))
        tabs = (("g", "Gap"), ("x", "Errors"), ("k", "Kinds"), ("c", "Compare"), ("m", "Ensemble"))
        for key, tab in tabs:
            await pilot.press(key)
            await settle(pilot)
            seen.append((screen_text(app), f"the {tab} tab"))
    assert any("Two phrasings, opposite answers" in text for text, _ in seen)
    assert any("“Does {parent} contain {child}?”" in text for text, _ in seen)  # the Gap tab
    for text, where in seen:
        assert_reader_text(text, where)
