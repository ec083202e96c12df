"""Step 4 of the wizard: the test kinds to ask (the engine's registry, listed by the step's
own worker), each kind's options on one compact row, an annotated-questions file, and how
many conversations each adds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, Label, SelectionList, Static, TabPane
from textual.widgets.selection_list import Selection

from kontest_tui.run.api import KindChoice, list_test_kinds
from kontest_tui.tui.widgets.ticks import TickBox, TickList
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.run.api import Preparation
    from kontest_tui.tui.wizard_state import KindChoices


class KindsStep(WorkerFailures, TabPane):
    """The test kinds step. `question_types` and `logic_rules` are the engine's names, one
    checkbox each; `ticked` the kinds ticked once they are listed."""

    class KindsChanged(Message):
        """A kind or one of its options was ticked, unticked or changed."""

    class QuestionsRequested(Message):
        """Load was pressed for a questions file (blank: take the questions out)."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    class KindsListed(Message, bubble=False):
        """The engine's test kinds (its registry) were listed."""

        def __init__(self, kinds: list[KindChoice]) -> None:
            super().__init__()
            self.kinds = kinds

    def __init__(
        self,
        title: str,
        question_types: Sequence[str],
        logic_rules: Sequence[str],
        ticked: Sequence[str] = ("kontest",),
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(title, id=id)
        self.question_types = tuple(question_types)
        self.logic_rules = tuple(logic_rules)
        self.ticked = tuple(ticked)
        self.kind_choices: list[KindChoice] = []
        self.with_questions = False  # an annotated-questions file is in the plan

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="kinds-step"):
            yield Static(
                "Test kinds to ask: KONTEST paraphrases, plus any of the others",
                classes="hint",
            )
            yield TickList[str](id="kind-select")
            # Each kind's options: a compact row shown while the kind is ticked.
            with Horizontal(id="variant-options", classes="kind-options"):
                yield Label("Variants:")
                yield TickBox(
                    "end with '? Return a JSON Boolean.'",
                    id="variant-postfix",
                    compact=True,
                    tooltip="Ask every covering-array variant for a JSON Boolean answer",
                )
                yield Label("max per question")
                yield Input(
                    placeholder="all",
                    id="variant-limit",
                    type="integer",
                    restrict=r"[0-9]*",
                    max_length=5,
                    compact=True,
                    tooltip="At most this many variants per question (blank: the whole "
                    "covering array); also for annotated questions",
                )
            with Horizontal(id="factcheck-options", classes="kind-options"):
                yield Label("FactChecker:")
                for name in self.question_types:
                    yield TickBox(name, True, id=f"qtype-{name}", compact=True)
            with Horizontal(id="logic-options", classes="kind-options"):
                yield Label("Rules:")
                for name in self.logic_rules:
                    yield TickBox(name, True, id=f"rule-{name}", compact=True)
            with Horizontal(id="questions-row", classes="kind-options"):
                yield Label("Annotated questions file")
                yield Input(
                    placeholder="FILE.jsonl (blank + Load: none)",
                    id="questions-input",
                    compact=True,
                    tooltip='JSONL, one {"question", "answer": true|false, "passage"} '
                    "per line; asked as covering-array variants",
                )
                yield Button("Load", id="load-questions", compact=True)
            yield Static("", id="questions-status", classes="hint", markup=False)
            yield Static("", id="kind-counts", classes="counts", markup=False)

    def on_mount(self) -> None:
        self.kinds_worker()

    @work(thread=True, exclusive=True, group="wizard-kinds", exit_on_error=False)
    def kinds_worker(self) -> None:
        self.post_message(self.KindsListed(list_test_kinds()))

    @on(KindsListed)
    def kinds_listed(self, event: KindsListed) -> None:
        self.kind_choices = event.kinds
        self.show_kind_choices(self.kind_choices, self.ticked)
        self.show_kind_options(self.ticked, self.with_questions)

    # -- what the screen reads -------------------------------------------------------------

    def ticked_kinds(self) -> list[str]:
        """The kinds ticked, in the registry's order (KONTEST alone before they are listed)."""
        if not self.kind_choices:
            return ["kontest"]
        selected = set(self.query_one("#kind-select", SelectionList).selected)
        return [choice.value for choice in self.kind_choices if choice.value in selected]

    def ticked_names(self, prefix: str, names: tuple[str, ...]) -> tuple[str, ...]:
        """The sub-selection ticked in an option row (`qtype-…`, `rule-…`), in engine order."""
        return tuple(name for name in names if self.query_one(f"#{prefix}-{name}", Checkbox).value)

    def variant_limit(self) -> int | None:
        """Max variants per question; None (the whole covering array) when blank or 0."""
        text = self.query_one("#variant-limit", Input).value.strip()
        return int(text) if text.isdigit() and int(text) > 0 else None

    def postfix(self) -> bool:
        return self.query_one("#variant-postfix", Checkbox).value

    # -- events turned into messages -------------------------------------------------------

    @on(SelectionList.SelectedChanged, "#kind-select")
    @on(Checkbox.Changed, ".kind-options Checkbox")
    @on(Input.Changed, "#variant-limit")
    def kinds_changed(self) -> None:
        self.post_message(self.KindsChanged())

    @on(Button.Pressed, "#load-questions")
    @on(Input.Submitted, "#questions-input")
    def questions_requested(self) -> None:
        path = self.query_one("#questions-input", Input).value.strip()
        self.post_message(self.QuestionsRequested(path))

    # -- what the screen shows -------------------------------------------------------------

    def show_kind_choices(self, choices: Iterable[KindChoice], ticked: Iterable[str]) -> None:
        """The engine's test kinds (title and description), `ticked` ticked."""
        ticked = set(ticked)
        selection = self.query_one("#kind-select", SelectionList)
        selection.clear_options()
        for choice in choices:
            prompt = Text(choice.title, style="bold")
            prompt.append(f"  {choice.description}", style="dim")
            selection.add_option(Selection(prompt, choice.value, choice.value in ticked))

    def show_kind_options(self, kinds: Sequence[str], questions: bool) -> None:
        """The option row of each ticked kind (the variant options also apply to annotated
        questions, asked as covering-array variants)."""
        self.ticked, self.with_questions = tuple(kinds), questions
        self.query_one("#variant-options").display = "variant" in kinds or questions
        self.query_one("#factcheck-options").display = "factcheck" in kinds
        self.query_one("#logic-options").display = "logic" in kinds

    def show_questions_status(self, text: str) -> None:
        self.query_one("#questions-status", Static).update(text)

    def show_counts(self, text: str | Text) -> None:
        self.query_one("#kind-counts", Static).update(text)

    def show_preparation(self, preparation: Preparation, kinds: KindChoices) -> None:
        """Conversations and model calls per kind (and in all), then what blocks them."""
        text = Text()
        for count in preparation.counts:
            text.append(f"{count.kind:<10}", style="bold")
            text.append(f" {count.conversations:>6} conversations {count.calls:>6} model calls")
            if count.kind in ("variant", "annotation"):
                limit = (
                    f", at most {kinds.variant_limit} per question" if kinds.variant_limit else ""
                )
                text.append(f"  (strength t={kinds.strength}, step 3{limit})", style="dim")
            text.append("\n")
        if len(preparation.counts) > 1:
            text.append(f"{'total':<10}", style="bold")
            text.append(
                f" {sum(c.conversations for c in preparation.counts):>6} conversations "
                f"{preparation.calls:>6} model calls"
            )
        problems = [p.message for p in preparation.problems if p.step == "kinds"]
        problems += [p.message for p in kinds.problems()]
        for message in problems:
            text.append(f"\n{message}", style="italic yellow")
        self.show_counts(text)

    def show_questions(
        self, path: str, preparation: Preparation, *, announce: bool, shown: int = 5
    ) -> None:
        """`FILE: N questions, M lines skipped` and the first skipped lines, or why the
        file cannot be read; `announce`: also as a notification."""
        problems = [p for p in preparation.problems if p.step == "kinds" and p.error is not None]
        if problems:
            message = problems[0].message
            self.show_questions_status(f"Not loaded: {message}")
            if announce:
                self.notify(message, title="Annotated questions", severity="error", markup=False)
            return
        questions = len({c.relation_id for c in preparation.spec.extra_conversations})
        skipped = list(preparation.spec.problems)
        lines = [
            f"{path}: {questions} questions, {len(skipped)} "
            f"line{'' if len(skipped) == 1 else 's'} skipped"
        ]
        lines += [f"  {problem}" for problem in skipped[:shown]]
        if len(skipped) > shown:
            lines.append(f"  … {len(skipped) - shown} more")
        summary = "\n".join(lines)
        self.show_questions_status(summary)
        if announce:
            self.notify(
                summary,
                title="Annotated questions",
                severity="warning" if skipped else "information",
                markup=False,
            )
