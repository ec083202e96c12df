"""Curation: a template editor with live validation and preview, and a synonym editor.

A new template can be run on its own against the same model (its atomic conversations only);
its gap then appears next to the other templates' in the session's evaluation.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    OptionList,
    Select,
    SelectionList,
    Static,
)
from textual.widgets.option_list import Option

from kontest_tui.domain.records import Relation
from kontest_tui.errors import KontestError
from kontest_tui.generate.ipm import tag_words
from kontest_tui.generate.synonyms import (
    SynonymChoice,
    ban_value,
    list_user_choices,
    load_synonym_lists,
    pin_value,
    undo_choice,
)
from kontest_tui.generate.templates import (
    Template,
    TemplateSet,
    fill_template,
    load_template_set,
    restore_builtin_templates,
    save_template_set,
    template_words,
    user_template_path,
    validate_text,
    with_template,
)
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.run.api import StoredSession, preview_variants
from kontest_tui.tui.run_control import ask_extra_template
from kontest_tui.tui.screens.confirm import ConfirmScreen
from kontest_tui.tui.widgets.gap_bars import render_gap
from kontest_tui.tui.widgets.ticks import TickList
from kontest_tui.tui.workers import WorkerFailures

PREVIEW_ROWS = 12


NEW_TEMPLATE = "__new__"


class TemplateEditorScreen(WorkerFailures, Screen[None]):
    """Write a new template or edit an existing one (saved as the user's copy of the set),
    mark which words may vary, see it filled, and ask it in the session."""

    BINDINGS = [
        Binding(
            "ctrl+s",
            "save_template",
            "Save",
            id="template_save",
            tooltip="Save the template in your copy of the set (the built-in set stays)",
        ),
        Binding(
            "ctrl+r",
            "run_template",
            "Run template",
            id="template_run",
            tooltip="Ask this template's questions in the session and store the answers",
        ),
        Binding(
            "ctrl+y",
            "app.edit_synonyms",
            "Synonyms",
            id="template_synonyms",
            tooltip="Pin or ban synonym values",
        ),
        Binding("escape", "app.pop_screen", "Back", id="template_back", tooltip="Back"),
    ]

    def __init__(self, session: StoredSession | None, text: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.start_text = text  # a new template's text to start from (a probe's rephrasing)
        self.template_set: TemplateSet | None = session.template_set if session else None
        self.relation_types: list[str] = []
        self.editing: Template | None = None  # the existing template being edited
        self.words_shown: list[str] = []  # the words listed in #template-words, in order

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="template-existing", classes="hint", markup=False)
        with Horizontal(classes="row"):
            yield Label("Edit")
            yield Select[str](
                [("new template", NEW_TEMPLATE)], id="template-choice", allow_blank=False
            )
            yield Label("Id")
            yield Input(placeholder="t4", id="template-id")
        yield Input(placeholder="e.g. Is {child} part of {parent}?", id="template-text")
        yield Static("", id="template-status", markup=False)
        with Horizontal(id="template-body"):
            with Vertical(id="template-words-box"):
                yield Label("Words that may vary")
                yield TickList[str](id="template-words")
            yield DataTable(id="template-preview", zebra_stripes=True)
        with Horizontal(classes="buttons"):
            yield Button("Run template", id="run-template", variant="success")
            yield Button("Save", id="save-template")
            yield Button("Restore built-in", id="restore-templates")
        yield Static("", id="template-gap", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#template-preview", DataTable).add_columns("Question", "Relation")
        self.query_one("#template-choice", Select).focus()
        if self.template_set is None:
            self.load_templates_worker()
        else:
            self.show_template_set()

    class TemplateSetLoaded(Message):
        """The template set to edit was read."""

        def __init__(self, template_set: TemplateSet) -> None:
            super().__init__()
            self.template_set = template_set

    @work(thread=True, exclusive=True, group="curation-load", exit_on_error=False)
    def load_templates_worker(self) -> None:
        """Read the places templates (a failure is shown by `worker_failed`)."""
        self.post_message(self.TemplateSetLoaded(load_template_set("places")))

    @on(TemplateSetLoaded)
    def template_set_loaded(self, event: TemplateSetLoaded) -> None:
        self.template_set = event.template_set
        self.show_template_set()

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "curation-load":
            self.query_one("#template-status", Static).update(f"✗ {error}")
        elif group == "curation-run":
            self.query_one("#template-gap", Static).update(f"✗ asking the template failed: {error}")

    def show_template_set(self) -> None:
        self.show_template_list(choose=NEW_TEMPLATE)
        self.start_new()

    def show_template_list(self, choose: str) -> None:
        """The set's templates by text, and the choice of which to edit (`choose` selected)."""
        template_set = self.template_set
        assert template_set is not None
        self.relation_types = list(template_set.relation_types)
        lines = [
            f"Domain {template_set.domain}; relation type(s): {', '.join(self.relation_types)}"
        ]
        for template in template_set.templates:
            lines.append(f"  {template.id}: " + " | ".join(template.texts.values()))
        if self.session is None:
            lines.append("Run a session first to preview on its relations and ask a template.")
        self.query_one("#template-existing", Static).update("\n".join(lines))
        choice = self.query_one("#template-choice", Select)
        with self.prevent(Select.Changed):
            choice.set_options(
                [("new template", NEW_TEMPLATE)] + [(t.id, t.id) for t in template_set.templates]
            )
            choice.value = choose

    def start_new(self) -> None:
        assert self.template_set is not None
        ids = set(self.template_set.ids)
        self.editing = None
        self.query_one("#template-id", Input).value = next(
            f"t{index}" for index in range(1, 100) if f"t{index}" not in ids
        )
        if self.start_text is not None:
            self.query_one("#template-text", Input).value = self.start_text
            self.start_text = None

    @on(Select.Changed, "#template-choice")
    def choice_changed(self, event: Select.Changed) -> None:
        if self.template_set is None or not isinstance(event.value, str):
            return
        if event.value == NEW_TEMPLATE:
            self.start_new()
            return
        template = self.template_set.get(event.value)
        self.editing = template
        self.query_one("#template-id", Input).value = template.id
        default = self.template_set.default_type
        text = template.texts.get(default) or next(iter(template.texts.values()))
        self.show_words(text, fixed=set(template.fixed))
        self.query_one("#template-text", Input).value = text

    @on(Input.Changed, "#template-text")
    def text_changed(self, event: Input.Changed) -> None:
        self.show_words(event.value)
        self.show_preview(event.value)

    def show_words(self, text: str, fixed: set[str] | None = None) -> None:
        """The text's words, ticked when they may vary; `fixed` None keeps the current
        choice of the words still in the text (new words may vary)."""
        words = self.query_one("#template-words", SelectionList)
        shown = self.words_shown
        new_words = template_words(text)
        if fixed is None:
            if new_words == shown:
                return
            chosen = set(words.selected)
            fixed = {word for word in shown if word not in chosen}
        words.clear_options()
        words.add_options([(word, word, word not in fixed) for word in new_words])
        self.words_shown = new_words

    def fixed_words(self) -> tuple[str, ...]:
        """The words the user left unticked: they keep one value in every variant."""
        words = self.query_one("#template-words", SelectionList)
        chosen = set(words.selected)
        return tuple(word for word in self.words_shown if word not in chosen)

    def typed_template(self) -> Template:
        """The template as typed (same text for each relation type), or KontestError."""
        assert self.template_set is not None
        text = self.query_one("#template-text", Input).value
        template_id = self.query_one("#template-id", Input).value.strip()
        validate_text(text)
        if not template_id:
            raise KontestError("give the template an id", title="Templates")
        editing = self.editing
        if template_id in self.template_set.ids and (editing is None or editing.id != template_id):
            raise KontestError(f"template id {template_id} already exists", title="Templates")
        words = set(template_words(text))
        old_tags = dict(editing.pos) if editing is not None else {}
        return Template(
            id=template_id,
            texts=dict.fromkeys(self.relation_types, text),
            # The tags of the words still in the text; new words are tagged on Save / Run
            # (tag_template: WordNet's guess, in a worker), so an edited word varies too.
            pos={word: tag for word, tag in old_tags.items() if word in words},
            fixed=self.fixed_words(),
        )

    def show_preview(self, text: str) -> None:
        status = self.query_one("#template-status", Static)
        table = self.query_one("#template-preview", DataTable)
        table.clear()
        try:
            self.typed_template()
        except KontestError as error:
            status.update(Text(f"✗ {error}", style="red"))
            return
        status.update(Text("✓ placeholders OK", style="green"))
        if self.session is None:
            return
        kg = self.session.kg
        pairs = dict.fromkeys((r.parent, r.child) for r in self.session.relations)
        for parent, child in list(pairs)[:PREVIEW_ROWS]:  # a pair on several paths once
            try:
                question = fill_template(text, kg.label(parent), kg.label(child))
            except KontestError as error:
                question = str(error)
            table.add_row(Text(question), Text(f"{kg.label(parent)} ⊃ {kg.label(child)}"))

    @on(Button.Pressed, "#save-template")
    def action_save_template(self) -> None:
        try:
            template = self.typed_template()
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        assert self.template_set is not None
        old_tags = dict(self.editing.pos) if self.editing is not None else {}
        self.save_worker(self.template_set, template, old_tags)

    class TemplateSaved(Message):
        """A template was tagged and saved in the user's copy of the set."""

        def __init__(self, template_set: TemplateSet, template: Template, path: str) -> None:
            super().__init__()
            self.template_set = template_set
            self.template = template
            self.path = path

    @work(thread=True, exclusive=True, group="curation-save", exit_on_error=False)
    def save_worker(
        self, template_set: TemplateSet, template: Template, old_tags: dict[str, str]
    ) -> None:
        try:
            tagged = tag_template(template, old_tags, template_set.domain)
            saved = with_template(template_set, tagged)
            path = save_template_set(saved)
        except KontestError as error:
            self.app.call_from_thread(
                self.notify, str(error), title=error.title, severity="error", markup=False
            )
            return
        self.post_message(self.TemplateSaved(saved, tagged, str(path)))

    @on(TemplateSaved)
    def template_saved(self, event: TemplateSaved) -> None:
        """The list of templates and the choice show the saved one at once."""
        self.template_set = event.template_set
        self.editing = event.template
        self.show_template_list(choose=event.template.id)
        self.notify(
            f"{event.template.id} saved in your copy {event.path}; the built-in set is kept "
            "(Restore built-in goes back to it)",
            markup=False,
        )

    @on(Button.Pressed, "#restore-templates")
    def restore_builtin(self) -> None:
        """Ask first: restoring deletes the user's copy of the set."""
        assert self.template_set is not None
        domain = self.template_set.domain

        def answered(restore: bool | None) -> None:
            if restore:
                self.restore_confirmed(domain)

        self.app.push_screen(
            ConfirmScreen(
                f"Delete your copy of the {domain} templates ({user_template_path(domain)})? "
                "The built-in templates are used again; your own templates in it are lost.",
                yes="Delete my copy",
                no="Keep it",
            ),
            answered,
        )

    def restore_confirmed(self, domain: str) -> None:
        try:
            removed = restore_builtin_templates(domain)
            self.template_set = load_template_set(domain)
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        self.show_template_set()
        self.notify(
            f"Removed your copy {removed}; the built-in templates are used again"
            if removed
            else "No copy of your own: the built-in templates are in use",
            markup=False,
        )

    @on(Button.Pressed, "#run-template")
    def action_run_template(self) -> None:
        if self.session is None:
            self.notify(
                "Run a session first: the template is asked against its model.",
                severity="warning",
                markup=False,
            )
            return
        try:
            template = self.typed_template()
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        session_set = self.session.template_set
        asked_ids = set(self.session.template_ids) | set(session_set.ids if session_set else ())
        if template.id in asked_ids:
            # The session has answers under this id: the edited text is asked as a new one.
            new_id = next(
                f"{template.id}-edit{n}" if n else f"{template.id}-edit"
                for n in range(100)
                if (f"{template.id}-edit{n}" if n else f"{template.id}-edit") not in asked_ids
            )
            self.notify(f"The session has a {template.id}: asked as {new_id}", markup=False)
            template = replace(template, id=new_id)
        self.query_one("#template-gap", Static).update(f"asking {template.id}…")
        self.rerun_worker(template)

    @work(exclusive=True, group="curation-run", exit_on_error=False)
    async def rerun_worker(self, template: Template) -> None:
        session = self.session
        assert session is not None
        old_tags = dict(self.editing.pos) if self.editing is not None else {}
        domain = self.template_set.domain if self.template_set else session.kg.domain
        template = await asyncio.to_thread(tag_template, template, old_tags, domain)
        # A failure (KontestError or not) is notified and shown by `worker_failed`.
        updated = await ask_extra_template(session, template, getattr(self.app, "db_path", None))
        self.session = updated
        self.post_message(SessionExtended(updated))
        report = dict(updated.evaluation.to_json())
        self.query_one("#template-gap", Static).update(render_gap(report))
        stored = " and stored in the session"
        self.notify(f"Template {template.id} asked{stored}; its gap is shown", markup=False)


def tag_template(template: Template, old_tags: dict[str, str], domain: str) -> Template:
    """The template with a part of speech for each word that may vary (generate.ipm.tag_words:
    kept for unchanged words, WordNet's guess for new ones). Reads WordNet: call it in a
    worker thread."""
    text = next(iter(template.texts.values()), "")
    skip = load_synonym_lists(domain).stopwords | {word.lower() for word in template.fixed}
    return replace(template, pos=tag_words(text, old_tags, skip))


class SessionExtended(Message):
    """A session got a template's answers; the screens showing it read it again."""

    def __init__(self, session: StoredSession) -> None:
        super().__init__()
        self.session = session


@dataclass(frozen=True)
class VariantSource:
    """The question whose variants the synonym editor previews (KG, relation, template)."""

    kg: KnowledgeGraph
    relation: Relation
    template: Any
    strength: int = 2


class SynonymEditorScreen(Screen[None]):
    """Pin or ban synonym values per domain and word; the variant preview and the
    covering-array size update at once. Pins and bans are saved in the user config, which
    every later session (and the wizard, when you go back) reads."""

    BINDINGS = [
        Binding(
            "ctrl+z",
            "undo_choice",
            "Undo pin/ban",
            id="synonyms_undo",
            tooltip="Take back the pin or ban highlighted in the list",
        ),
        Binding("escape", "app.pop_screen", "Back", id="synonyms_back", tooltip="Back"),
    ]

    def __init__(
        self,
        *,
        session: StoredSession | None = None,
        domain: str = "places",
        preview: VariantSource | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.domain = session.kg.domain if session else domain
        self.preview = preview or self.source_of(session)
        self.array_size: int | None = None
        self.choices: list[SynonymChoice] = []  # the pins and bans listed, in order

    @staticmethod
    def source_of(session: StoredSession | None) -> VariantSource | None:
        """The session's first question (first relation, first template), if any."""
        if session is None or not session.relations or session.template_set is None:
            return None
        template = session.template_set.get(session.template_ids[0])
        return VariantSource(session.kg, session.relations[0], template)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"Synonyms for domain {self.domain}", classes="title", markup=False)
        with Horizontal(classes="row"):
            yield Label("Word")
            yield Input(placeholder="have", id="synonym-word")
            yield Label("Value")
            yield Input(placeholder="contain", id="synonym-value")
        with Horizontal(classes="buttons"):
            yield Button("Pin", id="pin-value", variant="success")
            yield Button("Ban", id="ban-value", variant="error")
            yield Button("Undo", id="undo-choice")
        yield Static("", id="synonym-status", markup=False)
        with Horizontal(id="synonym-body"):
            yield OptionList(id="synonym-choices", classes="pane")
            yield Static("", id="synonym-preview", classes="pane", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.show_array_size("")
        self.show_choices()

    def show_choices(self) -> None:
        """The user's pins and bans for the domain; the highlighted one is what Undo takes
        back."""
        choices = self.query_one("#synonym-choices", OptionList)
        choices.clear_options()
        try:
            found = list_user_choices(self.domain)
        except KontestError as error:
            choices.add_option(Option(Text(f"✗ {error}"), disabled=True))
            return
        self.choices = found
        if not found:
            choices.add_option(Option(Text("No pins or bans yet.", style="italic"), disabled=True))
            return
        choices.add_options(
            Option(Text(f"{choice.kind} {choice.word} → {choice.value}"), id=str(index))
            for index, choice in enumerate(found)
        )
        choices.border_title = f"Your pins and bans ({len(found)})"

    @on(Button.Pressed, "#undo-choice")
    def action_undo_choice(self) -> None:
        choices = self.query_one("#synonym-choices", OptionList)
        index = choices.highlighted
        option = choices.get_option_at_index(index) if index is not None else None
        if option is None or option.id is None:
            self.notify("Highlight a pin or ban in the list first", markup=False)
            return
        choice = self.choices[int(option.id)]
        try:
            path = undo_choice(self.domain, choice)
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        self.show_choices()
        self.show_array_size(
            f"took back the {choice.kind} of {choice.value!r} for {choice.word!r} in {path}"
        )

    @on(Button.Pressed, "#pin-value")
    def pin_pressed(self) -> None:
        self.change_value(pin_value, "pinned")

    @on(Button.Pressed, "#ban-value")
    def ban_pressed(self) -> None:
        self.change_value(ban_value, "banned")

    def change_value(self, change: Any, done: str) -> None:
        word = self.query_one("#synonym-word", Input).value.strip()
        value = self.query_one("#synonym-value", Input).value.strip()
        if not word or not value:
            self.notify("Type a word and a value", severity="warning", markup=False)
            return
        try:
            path = change(self.domain, word, value)
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        self.show_choices()
        self.show_array_size(f"{done} {value!r} for {word!r} in {path}")

    def show_array_size(self, note: str) -> None:
        """The variants of the previewed question and the array size, after the change."""
        status = self.query_one("#synonym-status", Static)
        shown = self.query_one("#synonym-preview", Static)
        source = self.preview
        if source is None:
            status.update(
                note or "Open this from the wizard or after a run to see the variants change."
            )
            return
        try:
            preview = preview_variants(
                source.kg, source.relation, source.template, self.domain, source.strength
            )
        except KontestError as error:
            status.update(f"{note}\n{error}".strip())
            return
        self.array_size = len(preview.rows)
        words = ", ".join(
            f"{word}: {len(set(values))}"
            for word, values in zip(
                preview.parameters, zip(*preview.rows, strict=True), strict=True
            )
            if len(set(values)) > 1
        )
        status.update(
            f"{note}\narray size: {self.array_size} rows (t={source.strength}) for "
            f"{preview.sentences[0]}  [{words}]".strip()
        )
        shown.update("\n".join(preview.sentences[:PREVIEW_ROWS]))
