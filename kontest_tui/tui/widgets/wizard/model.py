"""Step 5 of the wizard: the model (a preset or a typed spec), its connection check, the
plan's summary, and Run."""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static, TabPane

from kontest_tui.run.api import describe_model_choice, finder_title, model_spec_patterns


class ModelStep(TabPane):
    """The model step. `initial_model` is the spec the field starts with."""

    class CheckRequested(Message):
        """Check connection was pressed."""

    class OllamaRequested(Message):
        """Find models was pressed (the server typed, else the local Ollama)."""

    class RunRequested(Message):
        """Run was pressed."""

    class ModelTyped(Message):
        """The model spec in the field changed (typed, or a preset chosen)."""

        def __init__(self, spec: str) -> None:
            super().__init__()
            self.spec = spec

    def __init__(self, title: str, initial_model: str, *, id: str | None = None) -> None:
        super().__init__(title, id=id)
        self.initial_model = initial_model

    def compose(self) -> ComposeResult:
        with Horizontal(classes="row"):
            yield Label("Model")
            yield Select[str]([], id="model-presets", prompt="presets", allow_blank=True)
        yield Input(
            value=self.initial_model,
            placeholder=" | ".join(model_spec_patterns()),
            id="model-spec",
        )
        with Horizontal(classes="buttons"):
            yield Button("Check connection", id="check-model")
            yield Button(f"Find {finder_title()} models", id="find-ollama")
            yield Button("Run", id="run", variant="success")
        yield Static("", id="model-status", markup=False)
        yield Static("", id="run-reason", classes="hint", markup=False)
        yield Static("", id="plan-summary", classes="counts", markup=False)

    def model_spec(self) -> str:
        """The spec typed (stripped)."""
        return self.query_one("#model-spec", Input).value.strip()

    @on(Select.Changed, "#model-presets")
    def preset_chosen(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.query_one("#model-spec", Input).value = event.value

    @on(Input.Changed, "#model-spec")
    def model_typed(self, event: Input.Changed) -> None:
        self.post_message(self.ModelTyped(event.value.strip()))

    @on(Button.Pressed, "#check-model")
    def check_pressed(self) -> None:
        self.post_message(self.CheckRequested())

    @on(Button.Pressed, "#find-ollama")
    def ollama_pressed(self) -> None:
        self.post_message(self.OllamaRequested())

    @on(Button.Pressed, "#run")
    def run_pressed(self) -> None:
        self.post_message(self.RunRequested())

    def show_presets(self, specs: Sequence[str]) -> None:
        """The models to pick from, each with what it is (`local:gemma3-270m  a real small
        model, offline`)."""
        self.query_one("#model-presets", Select).set_options(
            [(f"{spec}  {describe_model_choice(spec)}".rstrip(), spec) for spec in specs]
        )

    def show_status(self, text: str) -> None:
        self.query_one("#model-status", Static).update(text)

    def show_summary(self, text: str) -> None:
        self.query_one("#plan-summary", Static).update(text)

    def show_run_state(self, ready: bool, reason: str) -> None:
        """Run on or off, and why it is off (or what it waits for)."""
        self.query_one("#run", Button).disabled = not ready and not reason.startswith("Waiting")
        self.query_one("#run-reason", Static).update(
            "" if ready else (reason if reason.startswith("Waiting") else f"Run is off: {reason}")
        )
