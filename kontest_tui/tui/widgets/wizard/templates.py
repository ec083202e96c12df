"""Step 2 of the wizard: the template set and the templates to ask, what the question check
flags in them (`run.api.check_spec_questions`, in the preparation), and a browser of what the
run asks: the scope's relations on the left, every conversation of every test kind the run
asks about the highlighted one on the right (KONTEST's atomic and sequential ones, variants,
FactChecker and logic questions), as `run.api.prepare` / `preview_relation` built them.

The preview of a relation other than the first (and the covering arrays of its questions,
for the Variants step) is built by the step's own worker (`preview`): `RelationPreviewed`
carries it, with the version of the screen's state it was asked for."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Select, SelectionList, Static, TabPane
from textual.widgets.option_list import Option

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Relation
from kontest_tui.errors import KontestError
from kontest_tui.generate.templates import DEFAULT_SET, PAPER_SET, TemplateSet
from kontest_tui.report.words import conversation_name, kind_name
from kontest_tui.run.api import (
    QUESTION_CHECK_REASONS,
    Preparation,
    QuestionCheck,
    RelationPreview,
    SessionSpec,
    check_examples,
    preview_relation,
)
from kontest_tui.tui.widgets.ticks import TickList
from kontest_tui.tui.workers import WorkerFailures

LABEL_WIDTH = 18  # the conversations' names (report.words.conversation_name), wrapped beyond
TEMPLATE_SETS = (
    ("Template set: natural (questions as a person writes them)", DEFAULT_SET),
    ("Template set: paper (the papers' exact texts, as the recordings)", PAPER_SET),
)


def describe_check(check: QuestionCheck | None, shown: int = 1) -> str:
    """The question check in a few lines: how many relations a rule flags, then each
    reason's count and first question."""
    if check is None:
        return ""
    of = f" (of the first {check.relations:,})" if check.total > check.relations else ""
    head = (
        f"Question check: {check.flagged_relations:,} of {check.relations:,} relations "
        f"flagged ({check.share:.1%}){of}"
    )
    lines = [head if check.flags else f"{head}: every question reads cleanly"]
    for reason, flags in check.by_reason().items():
        name = QUESTION_CHECK_REASONS[reason][0]
        questions = len({(flag.relation_id, flag.template_id) for flag in flags})
        first = "; ".join(clean_text(flag.question) for flag in check_examples(flags, shown))
        lines.append(f"  {name} ({questions:,}): {first}")
    return "\n".join(lines)


def describe_template(template_set: TemplateSet, template_id: str) -> str:
    """`t1: Is {child} in {parent}?` (its first text), or the id alone."""
    found = next((t for t in template_set.templates if t.id == template_id), None)
    if found is not None and found.texts:
        return f"{template_id}: {next(iter(found.texts.values()))}"
    return template_id


def render_conversations(preview: RelationPreview) -> Group:
    """Every conversation of one relation, kind by kind: its label and each turn's question
    (numbered when there are several), the expected answer when the kind has one."""
    parts: list[RenderableType] = [Text(preview.name, style="bold")]
    kinds = list(dict.fromkeys(c.test_kind for c in preview.conversations))
    for kind in kinds:
        members = [c for c in preview.conversations if c.test_kind == kind]
        parts.append(Text(f"\n{kind_name(kind)} ({len(members)})", style="bold underline"))
        table = Table(box=None, show_header=False, padding=(0, 1, 0, 0), expand=True)
        table.add_column("label", style="cyan", max_width=LABEL_WIDTH)
        table.add_column("questions", ratio=1)
        for conversation in members:
            turns = conversation.turns
            questions = Text()
            for turn, query in enumerate(turns):
                if turn:
                    questions.append("\n")
                if len(turns) > 1:
                    questions.append(f"{turn + 1}. ", style="dim")
                questions.append(clean_text(query.text))
            expected = [a.value for a in conversation.expected if a is not None]
            if expected:
                questions.append(f"  (expected: {', '.join(expected)})", style="dim")
            table.add_row(Text(conversation_name(conversation)), questions)
        parts.append(table)
    for note in preview.notes:
        parts.append(Text(f"\n{note}", style="italic yellow"))
    return Group(*parts)


class TemplatesStep(WorkerFailures, TabPane):
    """The templates step: tick the templates, browse the conversations they make."""

    class TemplateSetChosen(Message):
        """Another template set was chosen ("natural" or "paper")."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    class TemplatesChosen(Message):
        """The ticked templates changed."""

        def __init__(self, template_ids: list[str]) -> None:
            super().__init__()
            self.template_ids = template_ids

    class RelationHighlighted(Message):
        """A relation was highlighted in the browser (its index in the relations shown)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class RelationPreviewed(Message):
        """The conversations of a browsed relation were built (for `version` of the
        screen's state), or `note` says why not."""

        def __init__(self, version: int, preview: RelationPreview | None, note: str) -> None:
            super().__init__()
            self.version = version
            self.preview = preview
            self.note = note

    previewing = ""  # the relation whose preview was asked for last
    previewing_version = -1  # and the version of the screen's state it was asked for

    def compose(self) -> ComposeResult:
        yield Static(
            "Templates to ask (each relation gets atomic + sequential conversations)",
            classes="hint",
        )
        yield Select(
            TEMPLATE_SETS,
            value=DEFAULT_SET,
            allow_blank=False,
            compact=True,
            id="template-set",
            tooltip="Which texts the templates have: natural ones, realised for each relation, "
            "or the papers' exact texts",
        )
        yield TickList[str](id="template-select")
        yield Static("", id="question-check", markup=False)
        with Horizontal(id="conversation-browser"):
            yield OptionList(id="relation-list", classes="pane")
            with VerticalScroll(id="conversation-scroll", classes="pane"):
                yield Static("", id="conversation-preview", markup=False)

    def on_mount(self) -> None:
        self.query_one("#relation-list", OptionList).border_title = "relations"
        self.query_one("#conversation-scroll").border_title = "what the run asks"

    def worker_failed(self, group: str, error: BaseException) -> None:
        """A failed preview says so where the conversations go (it was notified)."""
        if group == "wizard-preview":
            self.post_message(
                self.RelationPreviewed(self.previewing_version, None, f"Preview failed: {error}")
            )

    def preview(
        self, version: int, spec: SessionSpec, relation: Relation, strength: int, rows: bool
    ) -> None:
        """Build a relation's conversations (and with `rows` its questions' covering arrays)
        in a worker; an answer for another relation, asked before, is dropped."""
        self.previewing, self.previewing_version = relation.id, version
        self.preview_worker(version, spec, relation, strength, rows)

    @work(thread=True, exclusive=True, group="wizard-preview", exit_on_error=False)
    def preview_worker(
        self, version: int, spec: SessionSpec, relation: Relation, strength: int, rows: bool
    ) -> None:
        try:
            preview = preview_relation(spec, relation, strength=strength, variant_rows=rows)
        except KontestError as error:
            self.post_message(self.RelationPreviewed(version, None, str(error)))
            return
        self.post_message(self.RelationPreviewed(version, preview, ""))

    @on(RelationPreviewed)
    def relation_previewed(self, event: RelationPreviewed) -> None:
        """Another relation was browsed meanwhile: this answer goes no further."""
        if event.preview is not None and event.preview.relation.id != self.previewing:
            event.stop()

    def show_preparation(self, preparation: Preparation, chosen: Sequence[str]) -> None:
        """The preparation's template set (`chosen` ticked), its relations to browse and
        what the question check flags."""
        template_set = preparation.spec.template_set
        if not isinstance(template_set, str) and template_set is not None:
            self.show_templates(template_set, chosen)
        self.show_relations(preparation.listed_names, preparation.relations)
        self.show_check(describe_check(preparation.questions))

    def show_templates(self, template_set: TemplateSet, chosen: Sequence[str]) -> None:
        """Offer the set's templates, `chosen` ticked (no message: the state chose them)."""
        selection: SelectionList[str] = self.query_one("#template-select", SelectionList)
        with selection.prevent(SelectionList.SelectedChanged):
            selection.clear_options()
            for template_id in template_set.ids:
                selection.add_option(
                    (
                        describe_template(template_set, template_id),
                        template_id,
                        template_id in chosen,
                    )
                )

    def show_check(self, text: str) -> None:
        """What the question check flags (describe_check)."""
        self.query_one("#question-check", Static).update(text)

    @on(Select.Changed, "#template-set")
    def template_set_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.post_message(self.TemplateSetChosen(event.value))

    @on(SelectionList.SelectedChanged, "#template-select")
    def templates_changed(self) -> None:
        selected = self.query_one("#template-select", SelectionList).selected
        self.post_message(self.TemplatesChosen(list(selected)))

    @on(OptionList.OptionHighlighted, "#relation-list")
    def relation_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index is not None:
            self.post_message(self.RelationHighlighted(event.option_index))

    def show_relations(self, names: Sequence[str], total: int) -> None:
        """The relations to browse (`names`, of `total` in the scope)."""
        relations = self.query_one("#relation-list", OptionList)
        with relations.prevent(OptionList.OptionHighlighted):
            relations.clear_options()
            relations.add_options([Option(Text(name)) for name in names])
            if names:
                relations.highlighted = 0
        shown = f"{len(names)} of {total:,}" if total > len(names) else f"{total:,}"
        relations.border_title = f"relations ({shown})"

    def show_preview(self, preview: RelationPreview | None, note: str = "") -> None:
        """One relation's conversations, or a note when there are none."""
        widget = self.query_one("#conversation-preview", Static)
        if preview is None:
            widget.update(Text(note, style="italic"))
        else:
            widget.update(render_conversations(preview))
