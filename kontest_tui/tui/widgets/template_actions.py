"""The template editor's buttons and what they start: a template saved in the user's copy
of its set, or asked in the session (its atomic questions, then its gap shown here), each in
the widget's own worker, after the words that may vary are tagged (WordNet: a thread).
`TemplateSaved` and `TemplateAsked` tell the editor; `SessionExtended` tells the app that a
session got a template's answers (its results are shown again from the start)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from kontest_tui.errors import KontestError
from kontest_tui.generate.ipm import tag_words
from kontest_tui.generate.synonyms import load_synonym_lists
from kontest_tui.generate.templates import Template, TemplateSet, save_template_set, with_template
from kontest_tui.run.api import SessionTemplates, read_session_templates
from kontest_tui.tui.run_control import ask_extra_template
from kontest_tui.tui.sessions import open_store
from kontest_tui.tui.widgets.gap_bars import render_gap
from kontest_tui.tui.workers import WorkerFailures


class SessionExtended(Message):
    """A session got a new template's answers (its results are stale)."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class TemplateActions(WorkerFailures, Vertical):
    """Run template, Save, Ask again, Restore built-in (their presses go to the editor), and
    the gap of a template asked; `db`: the store the session is in."""

    class TemplateSaved(Message):
        """A template was tagged and saved in the user's copy of the set; `ask_after`: the
        session is to be asked again now (Ask again pressed with the edit unsaved)."""

        def __init__(
            self, template_set: TemplateSet, template: Template, path: str, ask_after: bool
        ) -> None:
            super().__init__()
            self.template_set = template_set
            self.template = template
            self.path = path
            self.ask_after = ask_after

    class TemplateAsked(Message):
        """A template was asked in the session: the session as it is now."""

        def __init__(self, template: Template, session: SessionTemplates) -> None:
            super().__init__()
            self.template = template
            self.session = session

    def __init__(self, *, db: str | None, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.db = db

    def compose(self) -> ComposeResult:
        with Horizontal(classes="buttons"):
            yield Button("Run template", id="run-template", variant="success")
            yield Button("Save", id="save-template")
            yield Button("Ask again", id="ask-again")
            yield Button("Restore built-in", id="restore-templates")
        yield Static("", id="template-gap", markup=False)

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "curation-run":
            self.show_gap(f"✗ asking the template failed: {error}")

    def show_gap(self, text: object) -> None:
        self.query_one("#template-gap", Static).update(text)  # type: ignore[arg-type]

    # -- save ------------------------------------------------------------------------------

    def save(
        self,
        template_set: TemplateSet,
        template: Template,
        old_tags: dict[str, str],
        *,
        ask_after: bool = False,
    ) -> None:
        """Tag the template's words and save it in the user's copy of `template_set`."""
        self.save_worker(template_set, template, old_tags, ask_after)

    @work(thread=True, exclusive=True, group="curation-save", exit_on_error=False)
    def save_worker(
        self,
        template_set: TemplateSet,
        template: Template,
        old_tags: dict[str, str],
        ask_after: bool,
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
        self.post_message(self.TemplateSaved(saved, tagged, str(path), ask_after))

    # -- ask in the session ----------------------------------------------------------------

    def ask(
        self,
        session: SessionTemplates,
        template: Template,
        old_tags: dict[str, str],
        domain: str,
    ) -> None:
        """Ask `template` (of `domain`'s set) in the session (under a new id when the
        session has one by its name)."""
        asked_ids = set(session.template_ids) | (
            set(session.template_set.ids) if session.template_set is not None else set()
        )
        if template.id in asked_ids:
            # The session has answers under this id: the edited text is asked as a new one.
            new_id = next(
                f"{template.id}-edit{n}" if n else f"{template.id}-edit"
                for n in range(100)
                if (f"{template.id}-edit{n}" if n else f"{template.id}-edit") not in asked_ids
            )
            self.notify(f"The session has a {template.id}: asked as {new_id}", markup=False)
            template = replace(template, id=new_id)
        self.show_gap(f"asking {template.id}…")
        self.ask_worker(session.id, domain, template, old_tags)

    @work(exclusive=True, group="curation-run", exit_on_error=False)
    async def ask_worker(
        self, session_id: str, domain: str, template: Template, old_tags: dict[str, str]
    ) -> None:
        template = await asyncio.to_thread(tag_template, template, old_tags, domain)
        # A failure (KontestError or not) is notified and shown by `worker_failed`.
        report = await ask_extra_template(session_id, template, self.db)
        session = await asyncio.to_thread(self.read_session, session_id)
        self.post_message(SessionExtended(session_id))
        known = session.template_set
        texts = {t.id: t.text for t in known.templates} if known is not None else {}
        texts[template.id] = template.text
        self.show_gap(render_gap(report, texts=texts))
        self.notify(
            f"Template {template.id} asked and stored in the session; its gap is shown",
            markup=False,
        )
        self.post_message(self.TemplateAsked(template, session))

    def read_session(self, session_id: str) -> SessionTemplates:
        with open_store(self.db) as store:
            return read_session_templates(store, session_id)

    # -- a probe made a template -------------------------------------------------------------

    def promote(self, probe_id: int) -> None:
        """Mark the probe (its stored id) a template was made from as promoted."""
        self.promote_worker(probe_id)

    @work(thread=True, group="curation-promote", exit_on_error=False)
    def promote_worker(self, probe_id: int) -> None:
        with open_store(self.db) as store:
            store.probes.mark_promoted(probe_id, "template")


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
