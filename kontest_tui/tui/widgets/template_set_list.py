"""The template editor's list of the set's templates, by text, with its own worker reading
what the editor works on: the session's templates and first relations (no answer or
evaluation: run.api.read_session_templates) and its domain's set (your copy or the built-in
one), or a domain's set alone. `TemplateSetLoaded` carries what was read."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from kontest_tui.errors import KontestError
from kontest_tui.generate.templates import (
    TemplateSet,
    list_template_sets,
    template_set_for_domain,
)
from kontest_tui.run.api import SessionTemplates, read_session_templates
from kontest_tui.tui.sessions import open_store
from kontest_tui.tui.workers import WorkerFailures


class TemplateSetList(WorkerFailures, VerticalScroll):
    """The set's templates (each relation type's text when it has several); `db`: the store
    the session is read from."""

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
            self.domains = domains  # the domains the editor may switch to (no session)

    def __init__(self, *, db: str | None, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.db = db

    def compose(self) -> ComposeResult:
        yield Static("Reading the templates…", id="template-existing", classes="hint", markup=False)

    def load(self, session_id: str | None, domain: str) -> None:
        """Read the session's templates and its domain's set (or `domain`'s set alone)."""
        self.load_worker(session_id, domain)

    @work(thread=True, exclusive=True, group="curation-load", exit_on_error=False)
    def load_worker(self, session_id: str | None, domain: str) -> None:
        """A failure is shown by `worker_failed`."""
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

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "curation-load":
            self.query_one("#template-existing", Static).update(f"✗ {error}")

    @on(TemplateSetLoaded)
    def loaded(self, event: TemplateSetLoaded) -> None:
        self.show(event.template_set, event.session)

    def show(self, template_set: TemplateSet, session: SessionTemplates | None) -> None:
        """The set's templates by text (the session's model and KG first, when there is one)."""
        relation_types = list(template_set.relation_types)
        several = len(relation_types) > 1
        lines = [f"Domain {template_set.domain}; relation type(s): {', '.join(relation_types)}"]
        if session is not None:
            lines[0] = f"Session: {session.model} on {session.kg_title} · " + lines[0]
        for template in template_set.templates:
            if several:
                lines.append(f"  {template.id}:")
                lines += [f"    {kind}: {text}" for kind, text in template.texts.items()]
            else:
                lines.append(f"  {template.id}: " + " | ".join(template.texts.values()))
        if session is None:
            lines.append(
                "No session: Save writes your copy of the set; open the editor from a "
                "session's results (e) to preview on its relations and ask a template."
            )
        self.query_one("#template-existing", Static).update("\n".join(lines))
