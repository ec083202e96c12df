"""Step 3 of the wizard: the covering-array strength, with the variants of the first
question (the array a variant run asks)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, DataTable, Label, Select, Static, TabPane

from kontest_tui.generate.variants import VariantPreview


class VariantsStep(TabPane):
    """The variants step: strength t and the covering array of one question."""

    class StrengthChanged(Message):
        """Another strength was chosen."""

    class SynonymsRequested(Message):
        """The synonym editor was asked for."""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="row"):
            yield Label("Strength t")
            yield Select[int](
                [(str(t), t) for t in (1, 2, 3, 4)],
                id="strength-select",
                value=2,
                allow_blank=False,
            )
            yield Static("", id="array-size", classes="hint", markup=False)
            yield Button(
                "Synonyms…",
                id="open-synonyms",
                compact=True,
                tooltip="Pin or ban synonym values (ctrl+y)",
            )
        yield Static("", id="variants-note", classes="placeholder", markup=False)
        yield DataTable(id="variant-table", zebra_stripes=True)

    def selected_strength(self) -> int:
        value = self.query_one("#strength-select", Select).value
        return value if isinstance(value, int) else 2

    @on(Select.Changed, "#strength-select")
    def strength_changed(self) -> None:
        self.post_message(self.StrengthChanged())

    @on(Button.Pressed, "#open-synonyms")
    def open_synonyms(self) -> None:
        self.post_message(self.SynonymsRequested())

    def show_variants(self, preview: VariantPreview | None, note: str) -> None:
        """The array's rows (row 0 the original words; changed words bold), or a note."""
        note_widget = self.query_one("#variants-note", Static)
        note_widget.update(note)
        note_widget.display = bool(note)
        table = self.query_one("#variant-table", DataTable)
        table.clear(columns=True)
        if preview is None:
            self.query_one("#array-size", Static).update("")
            return
        table.add_columns("row", *preview.parameters)
        for index, row in enumerate(preview.rows):
            marker = Text("0 original", style="bold") if index == 0 else Text(str(index))
            cells = [
                Text(
                    value, style="bold" if index == 0 or value != preview.rows[0][column] else "dim"
                )
                for column, value in enumerate(row)
            ]
            table.add_row(marker, *cells)
        levels = " x ".join(str(level) for level in preview.levels)
        strength = self.query_one("#strength-select", Select).value
        self.query_one("#array-size", Static).update(
            f"{len(preview.rows)} rows (t={strength}) for {levels} values; "
            f"first: {preview.sentences[0]}"
        )
