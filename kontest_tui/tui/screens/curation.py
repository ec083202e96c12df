"""Curation: a template editor with live validation and preview, and a synonym editor.

Both work on one stored session (its domain, templates and first relations, read through
run.api.read_session_templates: no answer or evaluation) or on a domain alone. A new
template can be run on its own against the session's model (its atomic conversations only);
its gap then appears next to the other templates' in the session's evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import (
    Button,
    Footer,
    Header,
    Input,
    Label,
    OptionList,
    Select,
    Static,
)
from textual.widgets.option_list import Option

from kontest_tui.domain.records import Relation
from kontest_tui.errors import KontestError
from kontest_tui.generate.synonyms import (
    SynonymChoice,
    ban_value,
    list_user_choices,
    pin_value,
    undo_choice,
)
from kontest_tui.generate.templates import (
    Template,
    TemplateSet,
    list_template_sets,
    restore_builtin_templates,
    template_set_for_domain,
    user_template_path,
)
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.run.api import (
    SessionTemplates,
    preview_variants,
    read_session_templates,
)
from kontest_tui.tui.screens.confirm import ConfirmScreen
from kontest_tui.tui.sessions import open_store
from kontest_tui.tui.widgets.template_actions import SessionExtended, TemplateActions
from kontest_tui.tui.widgets.template_form import NEW_TEMPLATE, PREVIEW_ROWS, TemplateForm
from kontest_tui.tui.widgets.template_set_list import TemplateSetList
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.run.api import VariantPreview

__all__ = ["NEW_TEMPLATE", "SessionExtended", "SynonymEditorScreen", "TemplateEditorScreen"]


class TemplateEditorScreen(WorkerFailures, Screen[None]):
    """Write a new template or edit an existing one (saved as the user's copy of its
    domain's set), mark which words may vary, see it filled, and ask it in the session.

    Opened on a stored session (`session_id`: its domain's set, previewed on its relations,
    Run template asks in it) or on a domain alone (the palette, no session). A template has
    one text per relation type of the set: *Type* chooses which one the text field edits.
    Its pieces are widgets: the set's templates with the worker that reads them
    (widgets/template_set_list.py), the form (widgets/template_form.py) and the buttons
    with the workers that save and ask (widgets/template_actions.py); the screen holds what
    they share (the set, the session) and the keys.
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
        self.session: SessionTemplates | None = None  # what the editor reads of the session
        self.domain = domain  # the set's domain (the session's, once read)
        self.start_text = text  # a new template's text to start from (a probe's rephrasing)
        self.start_type = relation_type  # the relation type that text is for
        self.template_set: TemplateSet | None = None
        self.ready = False  # the set (and the session) are read and shown

    def compose(self) -> ComposeResult:
        yield Header()
        yield TemplateSetList(db=self.db, id="template-existing-box")
        yield TemplateForm(
            with_domain=self.session_id is None,
            text=self.start_text,
            relation_type=self.start_type,
            id="template-form",
        )
        yield TemplateActions(db=self.db, id="template-actions")
        yield Footer()

    @property
    def form(self) -> TemplateForm:
        return self.query_one(TemplateForm)

    @property
    def actions(self) -> TemplateActions:
        return self.query_one(TemplateActions)

    def on_mount(self) -> None:
        self.query_one(TemplateSetList).load(self.session_id, self.domain)

    @on(TemplateSetList.TemplateSetLoaded)
    def template_set_loaded(self, event: TemplateSetList.TemplateSetLoaded) -> None:
        self.session = event.session
        self.template_set = event.template_set
        self.domain = event.template_set.domain
        if self.session is not None:
            self.sub_title = f"{self.session.model} on {self.session.kg_title}"
        else:
            self.sub_title = f"domain {self.domain} (no session)"
        self.form.show_set(event.template_set, event.session, event.domains)
        self.ready = True

    @on(TemplateForm.DomainChosen)
    def domain_chosen(self, event: TemplateForm.DomainChosen) -> None:
        self.domain = event.domain
        self.query_one(TemplateSetList).load(None, event.domain)

    def typed_or_said(self) -> Template | None:
        """The template as typed, or None when it is not one yet (said in a notification)."""
        try:
            return self.form.typed_template()
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return None

    # -- save ------------------------------------------------------------------------------

    @on(Button.Pressed, "#save-template")
    def action_save_template(self) -> None:
        template = self.typed_or_said()
        if template is None:
            return
        assert self.template_set is not None
        self.actions.save(self.template_set, template, self.form.old_tags)

    @on(TemplateActions.TemplateSaved)
    def template_saved(self, event: TemplateActions.TemplateSaved) -> None:
        """The list of templates and the choice show the saved one at once; a probe it was
        made from is promoted; Ask again pressed before the save asks now."""
        self.template_set = event.template_set
        self.form.show_saved(event.template_set, event.template)
        self.query_one(TemplateSetList).show(event.template_set, self.session)
        self.notify(
            f"{event.template.id} saved in your copy {event.path}; the built-in set is kept "
            "(Restore built-in goes back to it)",
            markup=False,
        )
        self.promote_probe()
        if event.ask_after:
            self.ask_session_again()

    def promote_probe(self) -> None:
        """Mark the probe this template was made from as promoted (once)."""
        if self.promotes is not None:
            self.actions.promote(self.promotes)
            self.promotes = None

    # -- ask the session again ---------------------------------------------------------------

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
        try:
            unsaved = self.form.unsaved()
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        if unsaved is not None and self.template_set is not None:
            self.actions.save(self.template_set, unsaved, self.form.old_tags, ask_after=True)
            return
        self.ask_session_again()

    def ask_session_again(self) -> None:
        ask_again = getattr(self.app, "ask_again", None)
        if self.session is not None and ask_again is not None:
            ask_again(self.session.id)

    # -- restore the built-in set ------------------------------------------------------------

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
        self.query_one(TemplateSetList).show(self.template_set, self.session)
        self.form.show_set(self.template_set, self.session)
        self.notify(
            f"Removed your copy {removed}; the built-in templates are used again"
            if removed
            else "No copy of your own: the built-in templates are in use",
            markup=False,
        )

    # -- ask a template in the session -------------------------------------------------------

    @on(Button.Pressed, "#run-template")
    def action_run_template(self) -> None:
        if self.session is None:
            self.notify(
                "No session here: open the editor from a session's results (e) to ask a "
                "template against its model.",
                severity="warning",
                markup=False,
            )
            return
        template = self.typed_or_said()
        if template is not None:
            self.actions.ask(self.session, template, self.form.old_tags, self.domain)

    @on(TemplateActions.TemplateAsked)
    def template_asked(self, event: TemplateActions.TemplateAsked) -> None:
        """The session as it is now (the template's questions in it) for the preview."""
        self.session = self.form.session = event.session
        self.promote_probe()


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
