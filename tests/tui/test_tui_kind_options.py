"""The wizard's per-kind options: question-type and rule sub-selections, the variant limit and
an annotated-questions file, checked against what the engine builds and reports.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console
from textual.widgets import Checkbox, Input, SelectionList, Static, TabbedContent

from kontest_tui.domain.records import TestKind
from kontest_tui.generate.annotated import build_annotation_conversations
from kontest_tui.generate.conversations import build_suite
from kontest_tui.kg.io import load_graph
from kontest_tui.kinds.registry import KindOptions, build_kind_conversations
from kontest_tui.report.render import section_tables
from kontest_tui.run.session import evaluate_session, session_kinds
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import wait_for_screen, wait_until, widget_text

SIZE = (100, 32)


def rendered(parts: object, width: int = 120) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, legacy_windows=False)
    for part in parts if isinstance(parts, list) else [parts]:
        console.print(part)
    return console.export_text()


def notifications(app) -> list[str]:
    return [notification.message for notification in app._notifications]


async def open_kinds_step(pilot) -> WizardScreen:
    wizard = await wait_for_screen(pilot, WizardScreen)
    await wait_until(pilot, lambda: wizard.template_set is not None, what="templates")
    wizard.query_one("#wizard-tabs", TabbedContent).active = "step-kinds"
    await pilot.pause()
    return wizard


async def test_question_types_and_rules_subsets(db_path: str) -> None:
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await open_kinds_step(pilot)
        assert not wizard.query_one("#factcheck-options").display  # shown once ticked
        kinds = wizard.query_one("#kind-select", SelectionList)
        kinds.select("factcheck")
        kinds.select("logic")
        await pilot.pause()
        assert wizard.query_one("#factcheck-options").display
        assert wizard.query_one("#logic-options").display
        assert not wizard.query_one("#variant-options").display
        for box in wizard.query(".kind-options Checkbox"):
            if box.id and box.id.startswith(("qtype-", "rule-")):
                box.value = box.id in ("qtype-wh", "rule-negation")
        await pilot.pause()
        await wait_until(
            pilot,
            lambda: (
                len(wizard.kind_totals()) == 3
                and all(total[1] is not None for total in wizard.kind_totals())
            ),
            what="the kind counts",
        )

        # The engine, for the same choices.
        kg = load_graph("places")
        suite = build_suite(kg, template_ids=wizard.template_ids)
        options = KindOptions(question_types=("wh",), rules=("negation",))
        factcheck = build_kind_conversations(suite, kg, [TestKind.FACTCHECK], options)
        logic = build_kind_conversations(suite, kg, [TestKind.LOGIC], options)
        assert factcheck and logic
        assert {c.label for c in factcheck} == {"wh"}
        assert {c.label for c in logic} == {
            "negation",
            "premise",
        }  # a rule is asked with its premises

        counted = {kind: (n, calls) for kind, n, calls, _ in wizard.kind_totals()}
        assert counted["factcheck"] == (len(factcheck), sum(len(c.turns) for c in factcheck))
        assert counted["logic"] == (len(logic), sum(len(c.turns) for c in logic))
        shown = widget_text(wizard.query_one("#kind-counts"))
        for kind, (conversations, calls) in counted.items():
            assert f"{kind:<10} {conversations:>6} conversations {calls:>6} model calls" in shown
        built = wizard.kind_conversations("factcheck") + wizard.kind_conversations("logic")
        assert [c.id for c in built] == [c.id for c in factcheck + logic]
        chosen = wizard.kind_options()
        assert chosen.question_types == ("wh",) and chosen.rules == ("negation",)

        # No question type ticked: nothing is built and Run says why.
        wizard.query_one("#qtype-wh", Checkbox).value = False
        await pilot.pause()
        assert "tick at least one question type" in widget_text(wizard.query_one("#kind-counts"))
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert any("question type" in message for message in notifications(app))
        assert isinstance(app.screen, WizardScreen)


async def test_variant_limit_changes_the_counts(db_path: str) -> None:
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await open_kinds_step(pilot)
        wizard.query_one("#kind-select", SelectionList).select("variant")
        await pilot.pause()
        assert wizard.query_one("#variant-options").display
        wizard.query_one("#variant-limit", Input).value = "1"
        await pilot.pause()
        await wait_until(
            pilot,
            lambda: all(total[1] is not None for total in wizard.kind_totals()),
            timeout=120,
            what="the variant counts",
        )
        kg = load_graph("places")
        suite = build_suite(kg, template_ids=wizard.template_ids)
        expected = build_kind_conversations(
            suite, kg, [TestKind.VARIANT], KindOptions(variant_limit=1)
        )
        counted = {kind: n for kind, n, _, _ in wizard.kind_totals()}
        assert counted["variant"] == len(expected)
        assert "at most 1 per question" in widget_text(wizard.query_one("#kind-counts"))


async def test_annotated_questions_file_to_results(db_path: str, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    lines = [
        {"question": "is paris the capital of france", "answer": True, "passage": "Paris..."},
        {"question": "is berlin a city in spain", "answer": False},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n{not json\n"
    text += json.dumps({"question": "is rome in italy", "answer": True}) + "\n"
    questions.write_text(text, encoding="utf-8")
    expected, problems = build_annotation_conversations(questions)
    assert len(problems) == 1

    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await open_kinds_step(pilot)
        wizard.query_one("#questions-input", Input).value = str(questions)
        await pilot.click("#load-questions")
        await wait_until(pilot, lambda: wizard.questions_path is not None, what="the questions")
        status = widget_text(wizard.query_one("#questions-status", Static))
        assert f"{questions}: 3 questions, 1 line skipped" in status
        assert f"{questions}:3: not JSON" in status
        assert any("3 questions, 1 line skipped" in m for m in notifications(app))
        assert wizard.query_one("#variant-options").display  # the variant options apply
        await wait_until(
            pilot,
            lambda: all(total[1] is not None for total in wizard.kind_totals()),
            what="the counts",
        )
        counted = {kind: (n, calls) for kind, n, calls, _ in wizard.kind_totals()}
        assert counted["annotation"] == (len(expected), sum(len(c.turns) for c in expected))

        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen, timeout=180)
        assert results.header.kinds == ("kontest", "annotation")
        session_id = results.session_id
        with Store(db_path) as store:
            report = evaluate_session(store, session_id).to_json()
            asked, _options, stored_problems = session_kinds(store, session_id)
        assert asked == [TestKind.KONTEST, TestKind.ANNOTATION]
        assert stored_problems == problems
        annotation = report["annotation"]
        assert annotation["questions"] == 3 and annotation["problems"] == problems
        assert results.report["annotation"] == annotation

        await pilot.press("k")
        await wait_until(pilot, lambda: bool(results.query("#kinds-view")), what="Kinds tab")
        shown = rendered(results.query_one("#kinds-view", Static).content)
        flat = " ".join(shown.split())  # a long cell wraps at spaces onto more lines
        tables = section_tables({"annotation": annotation})
        assert len(tables) == 2  # the accuracy table and the skipped lines
        for title, _header, rows in tables:
            assert title in flat
            for row in rows:
                assert " ".join(" ".join(row).split()) in flat


async def test_missing_questions_file_is_one_notification(db_path: str, tmp_path: Path) -> None:
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await open_kinds_step(pilot)
        missing = tmp_path / "nowhere.jsonl"
        wizard.query_one("#questions-input", Input).value = str(missing)
        await pilot.click("#load-questions")
        await wait_until(
            pilot, lambda: not wizard.kind_cache.building and notifications(app), what="the load"
        )
        errors = [m for m in notifications(app) if "no such file" in m]
        assert len(errors) == 1 and str(missing) in errors[0]
        assert wizard.questions_path is None
        assert "annotation" not in wizard.asked_kinds()
        assert "Not loaded" in widget_text(wizard.query_one("#questions-status", Static))
        # A file that is not JSONL at all: one notification too, still no crash.
        bad = tmp_path / "bad.jsonl"
        bad.write_text("nothing here\n", encoding="utf-8")
        field = wizard.query_one("#questions-input", Input)
        field.value = str(bad)
        field.focus()
        await pilot.press("enter")  # the Load button is under the first toast now
        await wait_until(
            pilot,
            lambda: any("no usable questions" in m for m in notifications(app)),
            what="the second load",
        )
        assert wizard.questions_path is None
        assert isinstance(app.screen, WizardScreen)
