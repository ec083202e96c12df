"""Step 2 of the wizard: the templates to ask, with the questions they make for the first
relations."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import DataTable, SelectionList, Static, TabPane

from kontest_tui.generate.templates import TemplateSet


def describe_template(template_set: TemplateSet, template_id: str) -> str:
    """`t1: Is {child} in {parent}?` (its first text), or the id alone."""
    found = next((t for t in template_set.templates if t.id == template_id), None)
    if found is not None and found.texts:
        return f"{template_id}: {next(iter(found.texts.values()))}"
    return template_id


class TemplatesStep(TabPane):
    """The templates step: tick the templates, see the questions they make."""

    class TemplatesChosen(Message):
        """The ticked templates changed."""

        def __init__(self, template_ids: list[str]) -> None:
            super().__init__()
            self.template_ids = template_ids

    def compose(self) -> ComposeResult:
        yield Static(
            "Templates to ask (each relation gets atomic + sequential conversations)",
            classes="hint",
        )
        yield SelectionList[str](id="template-select")
        yield DataTable(id="query-preview", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#query-preview", DataTable).add_columns("Relation", "Template", "Question")

    def show_templates(self, template_set: TemplateSet, template_ids: Sequence[str]) -> list[str]:
        """Offer `template_ids` (the first two ticked); the ids ticked."""
        selection = self.query_one("#template-select", SelectionList)
        selection.clear_options()
        for index, template_id in enumerate(template_ids):
            selection.add_option(
                (describe_template(template_set, template_id), template_id, index < 2)
            )
        return list(selection.selected)

    @on(SelectionList.SelectedChanged, "#template-select")
    def templates_changed(self) -> None:
        selected = self.query_one("#template-select", SelectionList).selected
        self.post_message(self.TemplatesChosen(list(selected)))

    def show_preview(self, rows: Sequence[tuple[str, str, str]], note: str) -> None:
        """(relation, template, question) rows, or a note when there are none."""
        table = self.query_one("#query-preview", DataTable)
        table.clear()
        if note:
            table.add_row(Text(note, style="italic"), "", "")
        for name, template_id, text in rows:
            table.add_row(Text(name), template_id, Text(text))
