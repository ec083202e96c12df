"""Curation: a template editor with live validation and preview, and a synonym editor.

A new template can be run on its own against the same model (its atomic conversations only);
its gap then appears next to the other templates' in the session's evaluation.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Header, Input, Label, Static

from kontest_tui.errors import KontestError
from kontest_tui.tui import services
from kontest_tui.tui.services import SessionResult
from kontest_tui.tui.widgets.gap_bars import render_gap

PREVIEW_ROWS = 12


class TemplateEditorScreen(Screen[None]):
    """Write a new template (one text per relation type), see it filled, run it alone."""

    BINDINGS = [
        Binding(
            "ctrl+s",
            "save_template",
            "Save",
            id="template_save",
            tooltip="Save the template set to your config dir",
        ),
        Binding(
            "ctrl+r",
            "run_template",
            "Run new template",
            id="template_run",
            tooltip="Ask only the new template's questions",
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

    def __init__(self, result: SessionResult | None) -> None:
        super().__init__()
        self.result = result
        self.template_set: Any = result.plan.template_set if result else None
        self.relation_types: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="template-existing", classes="hint", markup=False)
        with Horizontal(classes="row"):
            yield Label("Id")
            yield Input(placeholder="t4", id="template-id")
        yield Input(placeholder="e.g. Is {child} part of {parent}?", id="template-text")
        yield Static("", id="template-status", markup=False)
        yield DataTable(id="template-preview", zebra_stripes=True)
        with Horizontal(classes="buttons"):
            yield Button("Run new template", id="run-template", variant="success")
            yield Button("Save", id="save-template")
        yield Static("", id="template-gap", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#template-preview", DataTable).add_columns("Relation", "Question")
        if self.template_set is None:
            self.load_templates_worker()
        else:
            self.show_template_set()

    @work(thread=True, exclusive=True, group="curation-load", exit_on_error=False)
    def load_templates_worker(self) -> None:
        try:
            template_set = services.load_template_set("places")
        except KontestError as error:
            self.app.call_from_thread(
                self.query_one("#template-status", Static).update, f"✗ {error}"
            )
            return
        self.template_set = template_set
        self.app.call_from_thread(self.show_template_set)

    def show_template_set(self) -> None:
        template_set = self.template_set
        self.relation_types = list(getattr(template_set, "relation_types", ()) or [])
        lines = [
            f"Domain {template_set.domain}; relation type(s): {', '.join(self.relation_types)}"
        ]
        for template in template_set.templates:
            lines.append(f"  {template.id}: " + " | ".join(template.texts.values()))
        if self.result is None:
            lines.append(
                "Run a session first to preview on its relations and re-run a new template."
            )
        self.query_one("#template-existing", Static).update("\n".join(lines))
        ids = set(template_set.ids)
        self.query_one("#template-id", Input).value = next(
            f"t{index}" for index in range(1, 100) if f"t{index}" not in ids
        )

    @on(Input.Changed, "#template-text")
    def text_changed(self, event: Input.Changed) -> None:
        self.show_preview(event.value)

    def new_template(self) -> Any:
        """The typed template (same text for each relation type), or TemplateError."""
        text = self.query_one("#template-text", Input).value
        template_id = self.query_one("#template-id", Input).value.strip()
        validate = services.find_engine("generate.templates", "validate_text")
        validate(text)
        if not template_id:
            raise KontestError("give the template an id", title="Templates")
        if template_id in self.template_set.ids:
            raise KontestError(f"template id {template_id} already exists", title="Templates")
        template_class = services.find_engine("generate.templates", "Template")
        return template_class(id=template_id, texts=dict.fromkeys(self.relation_types, text))

    def show_preview(self, text: str) -> None:
        status = self.query_one("#template-status", Static)
        table = self.query_one("#template-preview", DataTable)
        table.clear()
        try:
            self.new_template()
        except KontestError as error:
            status.update(Text(f"✗ {error}", style="red"))
            return
        status.update(Text("✓ placeholders OK", style="green"))
        if self.result is None:
            return
        kg = self.result.plan.kg
        for relation in self.result.plan.relations[:PREVIEW_ROWS]:
            try:
                question = services.fill_template(
                    text, kg.label(relation.parent), kg.label(relation.child)
                )
            except KontestError as error:
                question = str(error)
            table.add_row(
                Text(f"{kg.label(relation.parent)} ⊃ {kg.label(relation.child)}"), Text(question)
            )

    @on(Button.Pressed, "#save-template")
    def action_save_template(self) -> None:
        try:
            template = self.new_template()
            path = services.save_user_template_set(
                dataclasses.replace(
                    self.template_set, templates=(*self.template_set.templates, template)
                )
            )
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        self.notify(f"Saved to {path}", markup=False)

    @on(Button.Pressed, "#run-template")
    def action_run_template(self) -> None:
        if self.result is None:
            self.notify(
                "Run a session first: the new template is asked against its model.",
                severity="warning",
                markup=False,
            )
            return
        try:
            template = self.new_template()
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        self.query_one("#template-gap", Static).update("asking the new template…")
        self.rerun_worker(template)

    @work(exclusive=True, group="curation-run", exit_on_error=False)
    async def rerun_worker(self, template: Any) -> None:
        result = self.result
        assert result is not None
        try:
            updated = await services.ask_extra_template(
                result, template, getattr(self.app, "db_path", None)
            )
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            self.query_one("#template-gap", Static).update(f"✗ {error}")
            return
        except Exception as error:  # an engine bug must not pass silently
            self.notify(f"re-run failed: {error}", severity="error", markup=False)
            self.query_one("#template-gap", Static).update(f"✗ re-run failed: {error}")
            return
        report = services.report_of(updated.evaluation)
        self.query_one("#template-gap", Static).update(render_gap(report))
        self.notify(f"Template {template.id} asked; gap shown next to the others", markup=False)


class SynonymEditorScreen(Screen[None]):
    """Pin or ban synonym values per domain and word; the covering-array size updates live."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="synonyms_back", tooltip="Back")]

    def __init__(self, *, result: SessionResult | None = None, domain: str = "places") -> None:
        super().__init__()
        self.result = result
        self.domain = result.plan.kg.domain if result else domain

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
        yield Static("", id="synonym-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.show_array_size("")

    @on(Button.Pressed, "#pin-value")
    def pin_pressed(self) -> None:
        self.change_value(services.pin_synonym, "pinned")

    @on(Button.Pressed, "#ban-value")
    def ban_pressed(self) -> None:
        self.change_value(services.ban_synonym, "banned")

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
        self.show_array_size(f"{done} {value!r} for {word!r} in {path}")

    def show_array_size(self, note: str) -> None:
        """The variants' array size for the session's first question, after the change."""
        status = self.query_one("#synonym-status", Static)
        if self.result is None or not self.result.plan.relations:
            status.update(note or "Run a session to see the covering-array size change here.")
            return
        plan = self.result.plan
        try:
            template = plan.template_set.get(plan.template_ids[0])
            size = services.variant_array_size(plan.kg, plan.relations[0], template, plan.kg.domain)
        except KontestError as error:
            status.update(f"{note}\n{error}".strip())
            return
        status.update(f"{note}\narray size for the first question: {size} rows (t=2)".strip())
