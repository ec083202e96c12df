"""Step 3 of the wizard: the covering-array strength, with the variant rows of every
question of the relation browsed in step 2 (the arrays a variant run asks)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Label, Select, Static, TabPane

from kontest_tui.run.api import QueryVariants, RelationPreview


def variant_table(variants: QueryVariants) -> Table | Text:
    """One question's covering array: a column per word, a row per array row (row 0 the
    original question; values that differ from it in bold), or why there is none."""
    preview = variants.preview
    if preview is None:
        return Text(f"{variants.template_id}: {variants.note}", style="italic yellow")
    levels = " x ".join(str(level) for level in preview.levels)
    table = Table(
        title=Text(f"{variants.template_id}: {variants.question}", style="bold"),
        caption=f"{len(preview.rows)} rows for {levels} values",
        title_justify="left",
        caption_justify="left",
        expand=False,
    )
    table.add_column("row", no_wrap=True)
    for parameter in preview.parameters:
        table.add_column(Text(parameter))
    original = preview.rows[0] if preview.rows else []
    for index, row in enumerate(preview.rows):
        marker = Text("0 original", style="bold") if index == 0 else Text(str(index))
        cells = [
            Text(value, style="bold" if index == 0 or value != original[column] else "dim")
            for column, value in enumerate(row)
        ]
        table.add_row(marker, *cells)
    return table


class VariantsStep(TabPane):
    """The variants step: strength t and the covering arrays of one relation's questions."""

    class StrengthChanged(Message):
        """Another strength was chosen."""

        def __init__(self, strength: int) -> None:
            super().__init__()
            self.strength = strength

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
        with VerticalScroll(id="variant-scroll"):
            yield Static("", id="variant-tables", markup=False)

    def selected_strength(self) -> int:
        value = self.query_one("#strength-select", Select).value
        return value if isinstance(value, int) else 2

    @on(Select.Changed, "#strength-select")
    def strength_changed(self) -> None:
        self.post_message(self.StrengthChanged(self.selected_strength()))

    @on(Button.Pressed, "#open-synonyms")
    def open_synonyms(self) -> None:
        self.post_message(self.SynonymsRequested())

    def show_variants(self, preview: RelationPreview | None, note: str = "") -> None:
        """The covering arrays of the relation's questions (one table per template)."""
        tables = self.query_one("#variant-tables", Static)
        size = self.query_one("#array-size", Static)
        if preview is not None and preview.variants is None:
            # Being made (or made when this step is shown): say what, not "nothing".
            tables.update(
                Text(
                    f"Making the covering arrays of {preview.name}'s questions "
                    f"(t={self.selected_strength()}; WordNet is read the first time: a few "
                    "seconds)…",
                    style="italic",
                )
            )
            size.update("")
            return
        if preview is None or preview.variants is None:
            tables.update(Text(note or "making the covering arrays…", style="italic"))
            size.update("")
            return
        rows = sum(len(v.preview.rows) for v in preview.variants if v.preview is not None)
        size.update(
            f"{preview.name}: {len(preview.variants)} questions, {rows} variant rows "
            f"(t={self.selected_strength()})"
        )
        tables.update(Group(*(variant_table(variants) for variants in preview.variants)))
