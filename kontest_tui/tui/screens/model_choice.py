"""Ask for another model spec ("same scope, another model" from the results): a modal with an
input prefilled with a preset the session did not use, and the presets listed."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static


class ModelChoiceScreen(ModalScreen[str | None]):
    """Dismissed with the spec typed (enter, Run) or None (escape, Cancel)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="model_choice_cancel", tooltip="Cancel"),
    ]

    def __init__(self, current: str, presets: list[str]) -> None:
        super().__init__()
        self.current = current
        self.presets = presets

    def compose(self) -> ComposeResult:
        suggestion = next((p for p in self.presets if p != self.current), "")
        with Vertical(id="model-choice-box"):
            yield Static(
                f"Run the same session (scope, depth, templates, kinds, options) with another "
                f"model, then compare it with this one ({self.current}).",
                markup=False,
            )
            yield Input(
                suggestion, placeholder="ollama:MODEL, openai:MODEL, sim:PROFILE", id="model-choice"
            )
            yield Static(
                "Presets: " + ", ".join(self.presets) + ". Any spec works: "
                "ollama:MODEL[@URL], openai:MODEL[@BASE_URL], replay:FILE.jsonl.",
                classes="hint",
                markup=False,
            )
            with Horizontal(classes="buttons"):
                yield Button("Run (enter)", id="model-choice-run", variant="success")
                yield Button("Cancel (esc)", id="model-choice-cancel")

    def on_mount(self) -> None:
        self.query_one("#model-choice", Input).focus()

    @on(Input.Submitted, "#model-choice")
    @on(Button.Pressed, "#model-choice-run")
    def run_chosen(self) -> None:
        spec = self.query_one("#model-choice", Input).value.strip()
        if not spec:
            self.notify("Type a model spec", severity="warning", markup=False)
            return
        self.dismiss(spec)

    @on(Button.Pressed, "#model-choice-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
