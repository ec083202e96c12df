"""The wizard's per-kind options: question-type and rule sub-selections, the variant limit and
an annotated-questions file, checked against what the engine builds and reports.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import cast

from rich.console import Console
from textual.widgets import Checkbox, Input, SelectionList, Static, TabbedContent

from kontest_tui.domain.records import TestKind
from kontest_tui.generate.annotated import build_annotation_conversations
from kontest_tui.generate.conversations import build_suite
from kontest_tui.kg.io import load_graph
from kontest_tui.kinds.registry import KindOptions, build_kind_conversations
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.render import section_tables
from kontest_tui.results.evaluate import evaluate_session, session_kinds
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import notifications as posted
from tests.support.tui import wait_for_screen, wait_for_workers, wait_until, widget_text

SIZE = (100, 32)


def rendered(parts: object, width: int = 120) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, legacy_windows=False)
    for part in parts if isinstance(parts, list) else [parts]:
        console.print(part)
    return console.export_text()


def notifications(app) -> list[str]:
    return [notification.message for notification in posted(app)]


async def open_kinds_step(pilot) -> WizardScreen:
    wizard = await wait_for_screen(pilot, WizardScreen)
    await wait_until(pilot, lambda: wizard.preparation is not None, what="the preparation")
    wizard.query_one("#wizard-tabs", TabbedContent).active = "step-kinds"
    await pilot.pause()
    return wizard


async def counted(pilot, wizard: WizardScreen, kinds: int, timeout: float = 60) -> dict:
    """{kind: (conversations, calls)} once the preparation of the current choices came."""
    await wait_until(
        pilot,
        lambda: wizard.preparation is not None and len(wizard.preparation.counts) == kinds,
        timeout=timeout,
        what="the kind counts",
    )
    assert wizard.preparation is not None
    return {c.kind: (c.conversations, c.calls) for c in wizard.preparation.counts}


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
        for box in wizard.query(".kind-options Checkbox").results(Checkbox):
            if box.id and box.id.startswith(("qtype-", "rule-")):
                box.value = box.id in ("qtype-wh", "rule-negation")
        await pilot.pause()
        await wait_until(
            pilot,
            lambda: (
                wizard.state.kinds.value("question_types") == ("wh",)
                and wizard.state.kinds.value("rules") == ("negation",)
            ),
            what="the options",
        )
        counts = await counted(pilot, wizard, 3)

        # The engine, for the same choices.
        kg = load_graph("places")
        suite = build_suite(kg, template_ids=wizard.state.chosen_templates())
        options = KindOptions(question_types=("wh",), rules=("negation",))
        factcheck = build_kind_conversations(suite, kg, [TestKind.FACTCHECK], options)
        logic = build_kind_conversations(suite, kg, [TestKind.LOGIC], options)
        assert factcheck and logic
        assert {c.label for c in factcheck} == {"wh"}
        assert {c.label for c in logic} == {
            "negation",
            "premise",
        }  # a rule is asked with its premises

        assert counts["factcheck"] == (len(factcheck), sum(len(c.turns) for c in factcheck))
        assert counts["logic"] == (len(logic), sum(len(c.turns) for c in logic))
        shown = widget_text(wizard.query_one("#kind-counts"))
        for kind, (conversations, calls) in counts.items():
            assert f"{kind:<10} {conversations:>6} conversations {calls:>6} model calls" in shown
        chosen = wizard.state.spec().kind_options
        assert chosen is not None
        assert chosen.question_types == ("wh",) and chosen.rules == ("negation",)
        # The first relation's preview holds the kinds' conversations for it, as built.
        preview = wizard.state.preview
        assert preview is not None
        first = preview.relation.id
        assert [c.id for c in preview.conversations if c.test_kind is TestKind.FACTCHECK] == [
            c.id for c in factcheck if c.relation_id == first
        ]

        # No question type ticked: Run is off and says why.
        wizard.query_one("#qtype-wh", Checkbox).value = False
        await wait_until(
            pilot,
            lambda: (
                "tick at least one question type" in widget_text(wizard.query_one("#kind-counts"))
            ),
            what="the reason",
        )
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert any("question type" in message for message in notifications(app))
        assert isinstance(app.screen, WizardScreen)
        assert wizard.query_one("#run").disabled
        assert "question type" in widget_text(wizard.query_one("#run-reason"))


async def test_variant_limit_changes_the_counts(db_path: str) -> None:
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await open_kinds_step(pilot)
        wizard.query_one("#kind-select", SelectionList).select("variant")
        await pilot.pause()
        assert wizard.query_one("#variant-options").display
        wizard.query_one("#variant-limit", Input).value = "1"
        await wait_until(
            pilot, lambda: wizard.state.kinds.value("variant_limit") == 1, what="the limit"
        )
        counts = await counted(pilot, wizard, 2, timeout=120)
        kg = load_graph("places")
        suite = build_suite(kg, template_ids=wizard.state.chosen_templates())
        expected = build_kind_conversations(
            suite, kg, [TestKind.VARIANT], KindOptions(variant_limit=1)
        )
        assert counts["variant"][0] == len(expected)
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
        counts = await counted(pilot, wizard, 2)
        status = widget_text(wizard.query_one("#questions-status", Static))
        assert f"{questions}: 3 questions, 1 line skipped" in status
        assert f"{questions}:3: not JSON" in status
        assert any("3 questions, 1 line skipped" in m for m in notifications(app))
        assert wizard.query_one("#variant-options").display  # the variant options apply
        assert counts["annotation"] == (len(expected), sum(len(c.turns) for c in expected))

        await pilot.press("ctrl+r")
        results = await wait_for_screen(pilot, ResultsScreen, timeout=180)
        assert results.header is not None and results.header.kinds == ("kontest", "annotation")
        session_id = results.session_id
        with Store(db_path) as store:
            report = evaluate_session(store, session_id).to_json()
            asked, _options, stored_problems = session_kinds(store, session_id)
        assert asked == [TestKind.KONTEST, TestKind.ANNOTATION]
        assert stored_problems == problems
        annotation = report["annotation"]
        assert annotation["questions"] == 3 and annotation["problems"] == problems
        assert results.report is not None and results.report["annotation"] == annotation

        await pilot.press("k")
        await wait_until(pilot, lambda: bool(results.query("#kinds-view")), what="Kinds tab")
        shown = rendered(results.query_one("#kinds-view", Static).content)
        flat = " ".join(shown.split())  # a long cell wraps at spaces onto more lines
        tables = section_tables(cast(ReportJSON, {"annotation": annotation}))  # that section alone
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
            pilot, lambda: any("no such file" in m for m in notifications(app)), what="the load"
        )
        await wait_for_workers(pilot)
        errors = [m for m in notifications(app) if "no such file" in m]
        assert len(errors) == 1 and str(missing) in errors[0]
        assert "Not loaded" in widget_text(wizard.query_one("#questions-status", Static))
        # The file stays chosen and Run is off until it is fixed or taken out.
        ready, reason = wizard.state.run_state()
        assert not ready and str(missing) in reason
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
        assert isinstance(app.screen, WizardScreen)
        # Blank and Load: taken out of the plan, Run is on again.
        field.value = ""
        await pilot.press("enter")
        await wait_until(pilot, lambda: wizard.state.run_state()[0], what="Run on again")
        assert wizard.state.questions is None


async def test_a_plugin_kind_gets_its_row_from_its_declared_options(
    db_path: str, monkeypatch
) -> None:
    """The test plugin's kind (tests/plugins) declares `--holds-limit`: the Kinds step lists
    the kind and makes its row (a number), which reaches the session's options, and counts
    its conversations (worked out: at most 2 relations, one question each)."""
    from importlib.metadata import entry_points

    from kontest_tui.kinds import registry
    from kontest_tui.plugins import KINDS_GROUP

    holds = next(entry for entry in entry_points(group=KINDS_GROUP) if entry.name == "holds")
    monkeypatch.setattr(registry, "_plugin_kinds", lambda: ((holds.load(),), ()))
    app = make_app(kg="places", model="sim", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await open_kinds_step(pilot)
        assert not wizard.query_one("#holds-options").display  # shown once ticked
        wizard.query_one("#kind-select", SelectionList).select("holds")
        await pilot.pause()
        assert wizard.query_one("#holds-options").display
        wizard.query_one("#holds-limit", Input).value = "2"
        await wait_until(pilot, lambda: wizard.state.kinds.value("holds_limit") == 2, what="2")
        counts = await counted(pilot, wizard, 2)
        assert counts["holds"] == (2, 2)
        options = wizard.state.spec().kind_options
        assert options is not None and options.value("holds_limit") == 2
        assert options.to_json()["extra"] == {"holds_limit": 2}
