"""Curation: a template editor with live validation and preview, and a synonym editor.

Both work on one stored session (its domain, templates and first relations, read through
run.api.read_session_templates: no answer or evaluation) or on a domain alone. A new
template can be run on its own against the session's model (its atomic conversations only);
its gap then appears next to the other templates' in the session's evaluation.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
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
    list_template_sets,
    restore_builtin_templates,
    save_template_set,
    template_set_for_domain,
    template_words,
    user_template_path,
    validate_text,
    with_template,
)
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.names import NodeNames
from kontest_tui.run.api import (
    SessionTemplates,
    fill_question,
    preview_variants,
    read_session_templates,
)
from kontest_tui.tui.run_control import ask_extra_template
from kontest_tui.tui.screens.confirm import ConfirmScreen
from kontest_tui.tui.sessions import open_store
from kontest_tui.tui.widgets.gap_bars import render_gap
from kontest_tui.tui.widgets.ticks import TickList
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.run.api import VariantPreview

PREVIEW_ROWS = 12


NEW_TEMPLATE = "__new__"


class TemplateEditorScreen(WorkerFailures, Screen[None]):
    """Write a new template or edit an existing one (saved as the user's copy of its
    domain's set), mark which words may vary, see it filled, and ask it in the session.

    Opened on a stored session (`session_id`: its domain's set, previewed on its relations,
    Run template asks in it) or on a domain alone (the palette, no session). A template has
    one text per relation type of the set: *Type* chooses which one the text field edits.
    """

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
            "ctrl+g",
            "ask_again",
            "Ask again",
            id="template_ask_again",
            show=False,  # its button is on screen; the footer keeps f1 at 80 columns
            tooltip="Save the template you edited, then ask the session again: only the "
            "questions whose text changed, every other answer reused; then what changed",
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

    def __init__(
        self,
        session_id: str | None = None,
        *,
        db: str | None = None,
        text: str | None = None,
        relation_type: str | None = None,
        domain: str = "places",
        promotes: int | None = None,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.db = db
        # A probe (its stored id) whose question this new template is: marked promoted
        # once the template is saved or asked in the session, not when the editor opens.
        self.promotes = promotes
        self.ask_after_save = False  # Ask again pressed with the edit unsaved: save first
        self.session: SessionTemplates | None = None  # what the editor reads of the session
        self.domain = domain  # the set's domain (the session's, once read)
        self.start_text = text  # a new template's text to start from (a probe's rephrasing)
        self.start_type = relation_type  # the relation type that text is for
        self.template_set: TemplateSet | None = None
        self.relation_types: list[str] = []
        self.relation_type = ""  # the type whose text the field shows
        self.texts: dict[str, str] = {}  # the template's texts being edited, per type
        self.editing: Template | None = None  # the existing template being edited
        self.words_shown: list[str] = []  # the words listed in #template-words, in order
        self.fixed: set[str] = set()  # words kept as typed in every variant
        self.ready = False  # the set (and the session) are read and shown

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="template-existing-box"):
            yield Static(
                "Reading the templates…", id="template-existing", classes="hint", markup=False
            )
        with Horizontal(classes="row"):
            yield Label("Edit")
            yield Select[str](
                [("new template", NEW_TEMPLATE)], id="template-choice", allow_blank=False
            )
            yield Label("Id")
            yield Input(placeholder="t4", id="template-id")
            yield Label("Type", id="template-type-label")
            yield Select[str]([], id="template-type", allow_blank=True, prompt="type")
            yield Label("Domain", id="template-domain-label")
            yield Select[str]([], id="template-domain", allow_blank=True, prompt="domain")
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
            yield Button("Ask again", id="ask-again")
            yield Button("Restore built-in", id="restore-templates")
        yield Static("", id="template-gap", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#template-preview", DataTable).add_column("Question · relation asked")
        # It opens on a new template: what a user types first is its text.
        self.query_one("#template-text", Input).focus()
        for widget in ("#template-type", "#template-type-label"):
            self.query_one(widget).display = False
        for widget in ("#template-domain", "#template-domain-label"):
            self.query_one(widget).display = self.session_id is None
        self.load_templates_worker(self.session_id, self.domain)

    class TemplateSetLoaded(Message):
        """The template set to edit was read (and the session, when the editor has one)."""

        def __init__(
            self,
            template_set: TemplateSet,
            session: SessionTemplates | None,
            domains: list[str],
        ) -> None:
            super().__init__()
            self.template_set = template_set
            self.session = session
            self.domains = domains

    @work(thread=True, exclusive=True, group="curation-load", exit_on_error=False)
    def load_templates_worker(self, session_id: str | None, domain: str) -> None:
        """The session's templates and first relations (run.api.read_session_templates: no
        answer or evaluation is read) and its domain's set (your copy or the built-in one);
        without a session, the domain's set. A failure is shown by `worker_failed`."""
        session = None
        if session_id is not None:
            with open_store(self.db) as store:
                session = read_session_templates(store, session_id)
            domain = session.domain
        try:
            template_set = template_set_for_domain(domain)
        except KontestError:
            if session is None or session.template_set is None:
                raise
            template_set = session.template_set  # a domain with no set of its own
        domains = sorted(list_template_sets()) if session is None else [domain]
        self.post_message(self.TemplateSetLoaded(template_set, session, domains))

    @on(TemplateSetLoaded)
    def template_set_loaded(self, event: TemplateSetLoaded) -> None:
        self.session = event.session
        self.template_set = event.template_set
        self.domain = event.template_set.domain
        domains = self.query_one("#template-domain", Select)
        with self.prevent(Select.Changed):
            domains.set_options([(domain, domain) for domain in event.domains])
            if self.domain in event.domains:
                domains.value = self.domain
        if self.session is not None:
            self.sub_title = f"{self.session.model} on {self.session.kg_title}"
        else:
            self.sub_title = f"domain {self.domain} (no session)"
        self.show_template_set()
        self.ready = True

    @on(Select.Changed, "#template-domain")
    def domain_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.domain and self.session is None:
            self.domain = event.value
            self.load_templates_worker(None, event.value)

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "curation-load":
            self.query_one("#template-existing", Static).update(f"✗ {error}")
        elif group == "curation-run":
            self.query_one("#template-gap", Static).update(f"✗ asking the template failed: {error}")
        elif group == "curation-save":
            self.ask_after_save = False

    def show_template_set(self) -> None:
        self.show_template_list(choose=NEW_TEMPLATE)
        self.start_new()

    def show_template_list(self, choose: str) -> None:
        """The set's templates by text, and the choice of which to edit (`choose` selected)."""
        template_set = self.template_set
        assert template_set is not None
        self.relation_types = list(template_set.relation_types)
        several = len(self.relation_types) > 1
        lines = [
            f"Domain {template_set.domain}; relation type(s): {', '.join(self.relation_types)}"
        ]
        if self.session is not None:
            lines[0] = f"Session: {self.session.model} on {self.session.kg_title} · " + lines[0]
        for template in template_set.templates:
            if several:
                lines.append(f"  {template.id}:")
                lines += [f"    {kind}: {text}" for kind, text in template.texts.items()]
            else:
                lines.append(f"  {template.id}: " + " | ".join(template.texts.values()))
        if self.session is None:
            lines.append(
                "No session: Save writes your copy of the set; open the editor from a "
                "session's results (e) to preview on its relations and ask a template."
            )
        self.query_one("#template-existing", Static).update("\n".join(lines))
        choice = self.query_one("#template-choice", Select)
        with self.prevent(Select.Changed):
            choice.set_options(
                [("new template", NEW_TEMPLATE)] + [(t.id, t.id) for t in template_set.templates]
            )
            choice.value = choose
        types = self.query_one("#template-type", Select)
        with self.prevent(Select.Changed):
            types.set_options([(kind, kind) for kind in self.relation_types])
        for widget in ("#template-type", "#template-type-label"):
            self.query_one(widget).display = several

    def start_new(self) -> None:
        assert self.template_set is not None
        taken = set(self.template_set.ids) | set(self.session_ids())
        self.editing = None
        self.fixed = set()
        self.query_one("#template-id", Input).value = next(
            f"t{index}" for index in range(1, 100) if f"t{index}" not in taken
        )
        kind = self.start_type if self.start_type in self.relation_types else None
        self.texts = {}
        if self.start_text is not None:
            self.texts[kind or self.template_set.default_type] = self.start_text
            self.start_text = None
        self.show_type(kind or self.template_set.default_type)

    def session_ids(self) -> tuple[str, ...]:
        """The template ids the session asked (and those of its stored set)."""
        session = self.session
        if session is None:
            return ()
        stored = session.template_set.ids if session.template_set is not None else ()
        return (*session.template_ids, *stored)

    def show_type(self, kind: str) -> None:
        """Show the text of relation type `kind` in the field (its words and preview)."""
        self.relation_type = kind
        types = self.query_one("#template-type", Select)
        if types.value != kind:
            with self.prevent(Select.Changed):
                types.value = kind
        field = self.query_one("#template-text", Input)
        text = self.texts.get(kind, "")
        self.show_words(text, fixed=self.fixed)
        if field.value != text:
            field.value = text  # Input.Changed shows the preview
        else:
            self.show_preview(text)

    @on(Select.Changed, "#template-type")
    def type_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.relation_type:
            self.fixed = set(self.fixed_words())
            self.show_type(event.value)

    @on(Select.Changed, "#template-choice")
    def choice_changed(self, event: Select.Changed) -> None:
        if self.template_set is None or not isinstance(event.value, str):
            return
        if event.value == NEW_TEMPLATE:
            self.start_new()
            return
        template = self.template_set.get(event.value)
        self.editing = template
        self.fixed = set(template.fixed)
        self.texts = dict(template.texts)
        self.query_one("#template-id", Input).value = template.id
        kind = self.relation_type if self.relation_type in template.texts else None
        self.show_type(kind or self.template_set.default_type)

    @on(Input.Changed, "#template-text")
    def text_changed(self, event: Input.Changed) -> None:
        if self.relation_type:
            if event.value:
                self.texts[self.relation_type] = event.value
            else:
                self.texts.pop(self.relation_type, None)
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
            fixed |= {word for word in self.fixed if word not in shown}
        words.clear_options()
        words.add_options([(word, word, word not in fixed) for word in new_words])
        self.words_shown = new_words

    def fixed_words(self) -> tuple[str, ...]:
        """The words kept as typed in every variant: those unticked in the text shown, and
        those of the other texts kept before."""
        words = self.query_one("#template-words", SelectionList)
        chosen = set(words.selected)
        shown = set(self.words_shown)
        other = {
            word
            for kind, text in self.texts.items()
            if kind != self.relation_type
            for word in template_words(text)
        }
        kept = {word for word in self.fixed if word not in shown and word in other}
        return tuple(
            dict.fromkeys(
                [*(word for word in self.words_shown if word not in chosen), *sorted(kept)]
            )
        )

    def typed_template(self, complete: bool = True) -> Template:
        """The template as typed (one text per relation type), or KontestError; `complete`:
        every relation type of the set needs its text."""
        assert self.template_set is not None
        template_id = self.query_one("#template-id", Input).value.strip()
        for kind, text in self.texts.items():
            try:
                validate_text(text)
            except KontestError as error:
                where = f" ({kind})" if len(self.relation_types) > 1 else ""
                raise KontestError(f"{error}{where}", title="Templates") from None
        if not self.texts:
            raise KontestError("type the template's text", title="Templates")
        missing = [kind for kind in self.relation_types if kind not in self.texts]
        if complete and missing:
            raise KontestError(
                f"a template has one text per relation type: write its text for "
                f"{', '.join(missing)} too (choose it under Type)",
                title="Templates",
            )
        if not template_id:
            raise KontestError("give the template an id", title="Templates")
        editing = self.editing
        if template_id in self.template_set.ids and (editing is None or editing.id != template_id):
            raise KontestError(f"template id {template_id} already exists", title="Templates")
        words = {word for text in self.texts.values() for word in template_words(text)}
        old_tags = dict(editing.pos) if editing is not None else {}
        return Template(
            id=template_id,
            texts={kind: self.texts[kind] for kind in self.relation_types if kind in self.texts},
            # The tags of the words still in the texts; new words are tagged on Save / Run
            # (tag_template: WordNet's guess, in a worker), so an edited word varies too.
            pos={word: tag for word, tag in old_tags.items() if word in words},
            fixed=self.fixed_words(),
        )

    def show_preview(self, text: str) -> None:
        status = self.query_one("#template-status", Static)
        table = self.query_one("#template-preview", DataTable)
        table.clear()
        try:
            self.typed_template(complete=False)
        except KontestError as error:
            status.update(Text(f"✗ {error}", style="red"))
            return
        missing = [kind for kind in self.relation_types if kind not in self.texts]
        line = Text("✓ placeholders OK", style="green")
        if missing:
            line.append(f" · still to write: the text for {', '.join(missing)}", style="yellow")
        status.update(line)
        if self.session is None or not text:
            return
        names = NodeNames(self.session.kg)
        # asked as the session's set asks (realised for the natural sets)
        session_set = self.session.template_set or self.template_set
        realise = session_set is not None and session_set.realise
        for relation in self.session.relations_of(self.relation_type)[:PREVIEW_ROWS]:
            try:
                question = fill_question(self.session.kg, relation, text, realise=realise)
            except KontestError as error:
                question = str(error)
            # The relation under its question: two relations asked with the same words (two
            # places called Garnich) are told apart by their names.
            cell = Text(question)
            cell.append(f"\n  {names.relation(relation)}", style="dim")
            table.add_row(cell, height=2)

    @on(Button.Pressed, "#save-template")
    def action_save_template(self) -> None:
        try:
            template = self.typed_template()
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        assert self.template_set is not None
        old_tags = dict(self.editing.pos) if self.editing is not None else {}
        self.ask_after_save = False  # a plain save asks nothing
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
        """The list of templates and the choice show the saved one at once; a probe it was
        made from is promoted; Ask again pressed before the save asks now."""
        self.template_set = event.template_set
        self.editing = event.template
        self.show_template_list(choose=event.template.id)
        self.notify(
            f"{event.template.id} saved in your copy {event.path}; the built-in set is kept "
            "(Restore built-in goes back to it)",
            markup=False,
        )
        self.promote_probe()
        if self.ask_after_save:
            self.ask_after_save = False
            self.ask_session_again()

    def promote_probe(self) -> None:
        """Mark the probe this template was made from as promoted (once)."""
        if self.promotes is not None:
            self.promote_worker(self.promotes)
            self.promotes = None

    @work(thread=True, group="curation-promote", exit_on_error=False)
    def promote_worker(self, probe_id: int) -> None:
        with open_store(self.db) as store:
            store.probes.mark_promoted(probe_id, "template")

    @on(Button.Pressed, "#ask-again")
    def action_ask_again(self) -> None:
        """Ask the session again with the set as saved (run.api.rerun_session, on the live
        screen): an edit of one of its templates not saved yet is saved first."""
        if self.session is None:
            self.notify(
                "No session here: open the editor from a session's results (e) to ask it "
                "again after an edit.",
                severity="warning",
                markup=False,
            )
            return
        editing = self.editing
        if editing is not None and self.template_set is not None:
            try:
                typed = self.typed_template()
            except KontestError as error:
                self.notify(str(error), title=error.title, severity="error", markup=False)
                return
            unsaved = typed.id == editing.id and (
                dict(typed.texts) != dict(editing.texts) or set(typed.fixed) != set(editing.fixed)
            )
            if unsaved:
                self.ask_after_save = True
                self.save_worker(self.template_set, typed, dict(editing.pos))
                return
        self.ask_session_again()

    def ask_session_again(self) -> None:
        ask_again = getattr(self.app, "ask_again", None)
        if self.session is not None and ask_again is not None:
            ask_again(self.session.id)

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
            self.template_set = template_set_for_domain(domain)
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
        session = self.session
        if session is None:
            self.notify(
                "No session here: open the editor from a session's results (e) to ask a "
                "template against its model.",
                severity="warning",
                markup=False,
            )
            return
        try:
            template = self.typed_template()
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        asked_ids = set(self.session_ids())
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
        self.rerun_worker(session.id, template)

    @work(exclusive=True, group="curation-run", exit_on_error=False)
    async def rerun_worker(self, session_id: str, template: Template) -> None:
        old_tags = dict(self.editing.pos) if self.editing is not None else {}
        template = await asyncio.to_thread(tag_template, template, old_tags, self.domain)
        # A failure (KontestError or not) is notified and shown by `worker_failed`.
        report = await ask_extra_template(session_id, template, self.db)
        self.session = await asyncio.to_thread(self.read_session, session_id)
        self.post_message(SessionExtended(session_id))
        known = self.session.template_set if self.session is not None else None
        texts = {t.id: t.text for t in known.templates} if known is not None else {}
        texts[template.id] = template.text
        self.query_one("#template-gap", Static).update(render_gap(report, texts=texts))
        stored = " and stored in the session"
        self.notify(f"Template {template.id} asked{stored}; its gap is shown", markup=False)
        self.promote_probe()

    def read_session(self, session_id: str) -> SessionTemplates:
        with open_store(self.db) as store:
            return read_session_templates(store, session_id)


def tag_template(template: Template, old_tags: dict[str, str], domain: str) -> Template:
    """The template with a part of speech for each word that may vary (generate.ipm.tag_words:
    kept for unchanged words, the one a new word's place implies or WordNet's guess), over
    every relation type's text. Reads WordNet: call it in a worker thread."""
    skip = load_synonym_lists(domain).stopwords | {word.lower() for word in template.fixed}
    tags: dict[str, str] = {}
    for text in template.texts.values():
        for word, tag in tag_words(text, old_tags, skip).items():
            tags.setdefault(word, tag)
    return replace(template, pos=tags)


class SessionExtended(Message):
    """A session got a template's answers; the screens showing it read it again."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


@dataclass(frozen=True)
class VariantSource:
    """The question whose variants the synonym editor previews (KG, relation, template)."""

    kg: KnowledgeGraph
    relation: Relation
    template: Template
    strength: int = 2


class SynonymEditorScreen(WorkerFailures, Screen[None]):
    """Pin or ban synonym values per domain and word; the variant preview and the
    covering-array size update at once. Pins and bans are saved in the user config, which
    every later session (and the wizard, when you go back) reads.

    Opened on a stored session (`session_id`: its domain, the question of `relation_id`
    previewed, else its first), on the wizard's question (`preview`, `domain`), or on a
    domain alone (a choice of the domains with templates). The screen shows at once: the
    session is read and the variants are made (WordNet is read the first time: seconds) in
    workers, with a line saying so."""

    BINDINGS = [
        Binding(
            "ctrl+z",
            "undo_choice",
            "Undo pin/ban",
            id="synonyms_undo",
            tooltip="Take back the pin or ban highlighted in the list",
        ),
        Binding(
            "ctrl+g",
            "ask_again",
            "Ask again",
            id="synonyms_ask_again",
            tooltip="Ask the session again with the synonym lists as they are now: only the "
            "variants whose sentence changed, every other answer reused; then what changed",
        ),
        Binding("escape", "app.pop_screen", "Back", id="synonyms_back", tooltip="Back"),
    ]

    def __init__(
        self,
        *,
        session_id: str | None = None,
        db: str | None = None,
        domain: str = "places",
        preview: VariantSource | None = None,
        relation_id: str | None = None,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.relation_id = relation_id  # the session's relation to preview (None: its first)
        self.db = db
        self.domain = domain
        self.preview = preview
        self.relation_id = relation_id  # the session's relation to preview (None: its first)
        self.array_size: int | None = None
        self.choices: list[SynonymChoice] = []  # the pins and bans listed, in order
        self.ready = False  # the domain is known (a session's is read first)
        self.previewed = False  # the variants of the question shown are made (tests wait)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(classes="row"):
            yield Static(
                f"Synonyms for domain {self.domain}",
                id="synonym-title",
                classes="title",
                markup=False,
            )
            yield Select[str]([], id="synonym-domain", allow_blank=True, prompt="domain")
        with Horizontal(classes="row"):
            yield Label("Word")
            yield Input(placeholder="have", id="synonym-word")
            yield Label("Value")
            yield Input(placeholder="contain", id="synonym-value")
        with Horizontal(classes="buttons"):
            yield Button("Pin", id="pin-value", variant="success")
            yield Button("Ban", id="ban-value", variant="error")
            yield Button("Undo", id="undo-choice")
            yield Button("Ask again", id="synonym-ask-again")
        yield Static("", id="synonym-status", markup=False)
        with Horizontal(id="synonym-body"):
            yield OptionList(id="synonym-choices", classes="pane")
            yield Static("", id="synonym-preview", classes="pane", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        chooser = self.query_one("#synonym-domain", Select)
        chooser.display = self.session_id is None and self.preview is None
        self.query_one("#synonym-ask-again").display = self.session_id is not None
        if self.session_id is not None:
            self.query_one("#synonym-status", Static).update("Reading the session…")
            self.session_worker(self.session_id, self.relation_id)
            return
        if chooser.display:
            self.domains_worker()
        self.domain_ready()

    class SessionRead(Message):
        """The session's domain and first question were read."""

        def __init__(self, domain: str, preview: VariantSource | None) -> None:
            super().__init__()
            self.domain = domain
            self.preview = preview

    class DomainsListed(Message):
        """The domains with a template set (the choice without a session)."""

        def __init__(self, domains: list[str]) -> None:
            super().__init__()
            self.domains = domains

    @work(thread=True, exclusive=True, group="synonyms-load", exit_on_error=False)
    def session_worker(self, session_id: str, relation_id: str | None) -> None:
        """The session's domain and the question to preview: its first template's, of
        `relation_id` (else of its first relation) (run.api.read_session_templates)."""
        with open_store(self.db) as store:
            session = read_session_templates(store, session_id, preview=1)
            chosen = (
                store.relations.by_id(session_id, [relation_id]).get(relation_id)
                if relation_id is not None
                else None
            )
        preview = None
        template_set = session.template_set
        relation = chosen or (session.relations[0] if session.relations else None)
        if relation is not None and template_set is not None and session.template_ids:
            template = template_set.get(session.template_ids[0])
            preview = VariantSource(session.kg, relation, template)
        self.post_message(self.SessionRead(session.domain, preview))

    @work(thread=True, exclusive=True, group="synonyms-domains", exit_on_error=False)
    def domains_worker(self) -> None:
        self.post_message(self.DomainsListed(sorted(list_template_sets())))

    @on(SessionRead)
    def session_read(self, event: SessionRead) -> None:
        self.domain = event.domain
        self.preview = event.preview
        self.domain_ready()

    @on(DomainsListed)
    def domains_listed(self, event: DomainsListed) -> None:
        chooser = self.query_one("#synonym-domain", Select)
        with self.prevent(Select.Changed):
            chooser.set_options([(domain, domain) for domain in event.domains])
            if self.domain in event.domains:
                chooser.value = self.domain

    @on(Select.Changed, "#synonym-domain")
    def domain_chosen(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.domain:
            self.domain = event.value
            self.domain_ready()

    def domain_ready(self) -> None:
        self.query_one("#synonym-title", Static).update(f"Synonyms for domain {self.domain}")
        self.show_array_size("")
        self.show_choices()
        self.ready = True

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group in ("synonyms-load", "synonyms-preview"):
            self.query_one("#synonym-status", Static).update(f"✗ {error}")
            self.previewed = True

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

    @on(Button.Pressed, "#synonym-ask-again")
    def action_ask_again(self) -> None:
        """Ask the session again with the synonym lists as they are now (run.api
        .rerun_session, on the live screen)."""
        ask_again = getattr(self.app, "ask_again", None)
        if self.session_id is None or ask_again is None:
            self.notify(
                "No session here: open the synonyms from a session's results (ctrl+y) to ask "
                "it again after a change.",
                severity="warning",
                markup=False,
            )
            return
        ask_again(self.session_id)

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
        """The variants of the previewed question and the array size, after the change: made
        in a worker (WordNet is read the first time), a line saying so meanwhile."""
        status = self.query_one("#synonym-status", Static)
        source = self.preview
        if source is None:
            status.update(
                note
                or "Open this from a session's results or the wizard's Variants step to see "
                "how a question's variants change."
            )
            self.previewed = True
            return
        self.previewed = False
        status.update(
            f"{note}\nmaking the variants of the question about "
            f"{source.kg.label(source.relation.parent)} and "
            f"{source.kg.label(source.relation.child)} (reading WordNet the first time takes "
            "seconds)…".strip()
        )
        self.preview_worker(source, self.domain, note)

    class VariantsMade(Message):
        """The previewed question's variants were made (or could not be: `error`)."""

        def __init__(self, preview: VariantPreview | None, error: str, note: str) -> None:
            super().__init__()
            self.preview = preview
            self.error = error
            self.note = note

    @work(thread=True, exclusive=True, group="synonyms-preview", exit_on_error=False)
    def preview_worker(self, source: VariantSource, domain: str, note: str) -> None:
        try:
            preview = preview_variants(
                source.kg, source.relation, source.template, domain, source.strength
            )
        except KontestError as error:
            self.post_message(self.VariantsMade(None, str(error), note))
            return
        self.post_message(self.VariantsMade(preview, "", note))

    @on(VariantsMade)
    def variants_made(self, event: VariantsMade) -> None:
        status = self.query_one("#synonym-status", Static)
        shown = self.query_one("#synonym-preview", Static)
        self.previewed = True
        source, preview, note = self.preview, event.preview, event.note
        if preview is None or source is None:
            status.update(f"{note}\n{event.error}".strip())
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
