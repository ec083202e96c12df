"""Step 4 of the wizard: the test kinds to ask (the engine's registry, listed by the step's
own worker), each kind's options on one compact row made from the options the kind
declares (run.api.KindChoice.controls: a tick box, a number, a tick box per name), an
annotated-questions file, and how many conversations each adds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, SelectionList, Static, TabPane
from textual.widgets.selection_list import Selection

from kontest_tui.run.api import KindChoice, KindControl, array_kinds, list_test_kinds
from kontest_tui.tui.widgets.ticks import TickBox, TickList
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.run.api import Preparation
    from kontest_tui.tui.wizard_state import KindChoices


class KindsStep(WorkerFailures, TabPane):
    """The test kinds step; `ticked` the kinds ticked once they are listed."""

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
        self, title: str, ticked: Sequence[str] = ("kontest",), *, id: str | None = None
    ) -> None:
        super().__init__(title, id=id)
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
            # Each kind's options: a compact row shown while the kind is ticked (`kind_rows`,
            # once the kinds are listed).
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
        self.query_one("#kinds-step").mount_all(
            self.kind_rows(self.kind_choices), before="#questions-row"
        )
        self.show_kind_choices(self.kind_choices, self.ticked)
        self.show_kind_options(self.ticked, self.with_questions)

    @staticmethod
    def kind_rows(choices: Iterable[KindChoice]) -> list[Horizontal]:
        """A row of controls for each kind with options to show (its controls_label first)."""
        rows = []
        for choice in choices:
            if not choice.controls:
                continue
            widgets: list[Widget] = [Label(f"{choice.controls_label}:")]
            for control in choice.controls:
                widgets += _control_widgets(control)
            rows.append(Horizontal(*widgets, id=f"{choice.value}-options", classes="kind-options"))
        return rows

    # -- what the screen reads -------------------------------------------------------------

    def ticked_kinds(self) -> list[str]:
        """The kinds ticked, in the registry's order (KONTEST alone before they are listed)."""
        if not self.kind_choices:
            return ["kontest"]
        selected = set(self.query_one("#kind-select", SelectionList).selected)
        return [choice.value for choice in self.kind_choices if choice.value in selected]

    def option_values(self) -> tuple[tuple[str, object], ...]:
        """(option key, value) of every control changed from as it starts: a tick box
        ticked, a number (blank or 0: none), the names ticked in engine order (not all)."""
        values: list[tuple[str, object]] = []
        for choice in self.kind_choices:
            for control in choice.controls:
                value = self._control_value(control)
                if value not in (False, None, control.choices):
                    values.append((control.key, value))
        return tuple(values)

    def _control_value(self, control: KindControl) -> object:
        if control.type == "flag":
            return self.query_one(f"#{control.control_id}", Checkbox).value
        if control.type == "names":
            return tuple(
                name
                for name in control.choices
                if self.query_one(f"#{control.control_id}-{name}", Checkbox).value
            )
        text = self.query_one(f"#{control.control_id}", Input).value.strip()
        return int(text) if text.isdigit() and int(text) > 0 else None

    # -- events turned into messages -------------------------------------------------------

    @on(SelectionList.SelectedChanged, "#kind-select")
    @on(Checkbox.Changed, ".kind-options Checkbox")
    @on(Input.Changed, ".kind-options Input.kind-number")
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
        """The option row of each ticked kind (and of a kind whose options annotated questions
        take too, while a questions file is in the plan)."""
        self.ticked, self.with_questions = tuple(kinds), questions
        for choice in self.kind_choices:
            if choice.controls:
                shown = choice.value in kinds or (questions and choice.with_questions)
                self.query_one(f"#{choice.value}-options").display = shown

    def show_questions_status(self, text: str) -> None:
        self.query_one("#questions-status", Static).update(text)

    def show_counts(self, text: str | Text) -> None:
        self.query_one("#kind-counts", Static).update(text)

    def show_preparation(self, preparation: Preparation, kinds: KindChoices) -> None:
        """Conversations and model calls per kind (and in all), then what blocks them."""
        text = Text()
        arrays = array_kinds()
        for count in preparation.counts:
            text.append(f"{count.kind:<10}", style="bold")
            text.append(f" {count.conversations:>6} conversations {count.calls:>6} model calls")
            if count.kind in arrays:
                most = kinds.value("variant_limit")
                limit = f", at most {most} per question" if most else ""
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


def _control_widgets(control: KindControl) -> list[Widget]:
    """The widgets of one option's control on its kind's row."""
    if control.type == "flag":
        return [TickBox(control.label, id=control.control_id, compact=True, tooltip=control.hint)]
    if control.type == "names":
        return [
            TickBox(name, True, id=f"{control.control_id}-{name}", compact=True)
            for name in control.choices
        ]
    return [
        Label(control.label),
        Input(
            placeholder="all",
            id=control.control_id,
            classes="kind-number",
            type="integer",
            restrict=r"[0-9]*",
            max_length=5,
            compact=True,
            tooltip=control.hint,
        ),
    ]
