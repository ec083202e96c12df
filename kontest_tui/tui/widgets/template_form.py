"""The template editor's form: which template to edit, its id, relation type and domain, its
text validated as it is typed, the words that may vary, and the text filled on the session's
relations.

Data in through `show_set` (the set, the session whose relations the preview fills, the
domains offered) and `show_choices`; `typed_template()` gives the template as typed, or the
KontestError that says what is missing. It posts `DomainChosen` when another domain is
chosen (an editor without a session). No worker: the preview fills PREVIEW_ROWS questions.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Label, Select, SelectionList, Static

from kontest_tui.errors import KontestError
from kontest_tui.generate.templates import Template, TemplateSet, template_words, validate_text
from kontest_tui.kg.names import NodeNames
from kontest_tui.run.api import SessionTemplates, fill_question
from kontest_tui.tui.widgets.ticks import TickList

PREVIEW_ROWS = 12
NEW_TEMPLATE = "__new__"


class TemplateForm(Vertical):
    """The template being written or edited (see the module docstring). `with_domain`: the
    domain can be chosen (no session); `text` and `relation_type`: a new template's text to
    start from (a probe's rephrasing) and the relation type it is for."""

    class DomainChosen(Message):
        """Another domain's set is to be edited."""

        def __init__(self, domain: str) -> None:
            super().__init__()
            self.domain = domain

    def __init__(
        self,
        *,
        with_domain: bool,
        text: str | None = None,
        relation_type: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(id=id)
        self.with_domain = with_domain
        self.start_text = text
        self.start_type = relation_type
        self.template_set: TemplateSet | None = None
        self.session: SessionTemplates | None = None  # whose relations the preview fills
        self.relation_types: list[str] = []
        self.relation_type = ""  # the type whose text the field shows
        self.texts: dict[str, str] = {}  # the template's texts being edited, per type
        self.editing: Template | None = None  # the existing template being edited
        self.words_shown: list[str] = []  # the words listed in #template-words, in order
        self.fixed: set[str] = set()  # words kept as typed in every variant

    def compose(self) -> ComposeResult:
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

    def on_mount(self) -> None:
        self.query_one("#template-preview", DataTable).add_column("Question · relation asked")
        # It opens on a new template: what a user types first is its text.
        self.query_one("#template-text", Input).focus()
        for widget in ("#template-type", "#template-type-label"):
            self.query_one(widget).display = False
        for widget in ("#template-domain", "#template-domain-label"):
            self.query_one(widget).display = self.with_domain

    @property
    def old_tags(self) -> dict[str, str]:
        """The parts of speech of the template being edited (none for a new one)."""
        return dict(self.editing.pos) if self.editing is not None else {}

    # -- what the screen hands it ----------------------------------------------------------

    def show_set(
        self,
        template_set: TemplateSet,
        session: SessionTemplates | None,
        domains: Sequence[str] | None = None,
    ) -> None:
        """A set to edit (a new template started), the session whose relations the
        preview fills, and the domains to choose from (None: those offered already)."""
        self.template_set, self.session = template_set, session
        if domains is not None:
            choice = self.query_one("#template-domain", Select)
            with self.prevent(Select.Changed):
                choice.set_options([(domain, domain) for domain in domains])
                if template_set.domain in domains:
                    choice.value = template_set.domain
        self.show_choices(NEW_TEMPLATE)
        self.start_new()

    def show_saved(self, template_set: TemplateSet, template: Template) -> None:
        """The set as saved, `template` (the one saved) still edited."""
        self.template_set, self.editing = template_set, template
        self.show_choices(template.id)

    def show_choices(self, choose: str) -> None:
        """The choice of which template to edit (`choose` selected) and the relation types."""
        template_set = self.template_set
        assert template_set is not None
        self.relation_types = list(template_set.relation_types)
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
            self.query_one(widget).display = len(self.relation_types) > 1

    def start_new(self) -> None:
        """A new template: the first free id, the start text (once) or none."""
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

    # -- what the user does ----------------------------------------------------------------

    @on(Select.Changed, "#template-domain")
    def domain_changed(self, event: Select.Changed) -> None:
        current = self.template_set.domain if self.template_set is not None else None
        if isinstance(event.value, str) and event.value != current and self.session is None:
            self.post_message(self.DomainChosen(event.value))

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

    # -- the template as typed -------------------------------------------------------------

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
        return Template(
            id=template_id,
            texts={kind: self.texts[kind] for kind in self.relation_types if kind in self.texts},
            # The tags of the words still in the texts; new words are tagged on Save / Run
            # (tag_template: WordNet's guess, in a worker), so an edited word varies too.
            pos={word: tag for word, tag in self.old_tags.items() if word in words},
            fixed=self.fixed_words(),
        )

    def unsaved(self) -> Template | None:
        """The template typed when it is an edit of the one chosen not saved yet (its texts or
        the words kept differ); KontestError when what is typed is not a template."""
        editing = self.editing
        if editing is None or self.template_set is None:
            return None
        typed = self.typed_template()
        changed = dict(typed.texts) != dict(editing.texts) or set(typed.fixed) != set(editing.fixed)
        return typed if typed.id == editing.id and changed else None

    def show_preview(self, text: str) -> None:
        """Whether the text is a template (and what is still to write), and the text filled
        on the session's first relations of the type shown."""
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
