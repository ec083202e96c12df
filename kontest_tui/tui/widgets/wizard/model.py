"""Step 5 of the wizard: the model (a preset or a typed spec), its connection check, the
plan's summary, and Run.

The step runs its own workers: the presets listed (the simulated profiles, the small local
model when installed, a local Ollama's models when one answers), the models an Ollama
server offers (Find Ollama models), and the model's check (`run.api.check_model`, started
by the screen for a version of its state: `ModelChecked` carries it).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static, TabPane

from kontest_tui.domain.answers import clean_text
from kontest_tui.errors import KontestError
from kontest_tui.run.api import (
    Problem,
    SessionSpec,
    check_model,
    describe_model_choice,
    discover_server_models,
    finder_title,
    list_server_models,
    model_presets,
    model_spec_patterns,
    server_title,
)
from kontest_tui.tui.workers import WorkerFailures


class ModelStep(WorkerFailures, TabPane):
    """The model step. `initial_model` is the spec the field starts with."""

    class CheckRequested(Message):
        """Check connection was pressed."""

    class ModelChecked(Message):
        """The model of `version` was checked: `problem` when it cannot run."""

        def __init__(self, version: int, problem: Problem | None, line: str) -> None:
            super().__init__()
            self.version = version
            self.problem = problem
            self.line = line

    class RunRequested(Message):
        """Run was pressed."""

    class ModelTyped(Message):
        """The model spec in the field changed (typed, or a preset chosen)."""

        def __init__(self, spec: str) -> None:
            super().__init__()
            self.spec = spec

    # What the step's own workers post to it.

    class PresetsListed(Message, bubble=False):
        """Models to offer: the built-in presets, or an Ollama server's models (`error` when
        they could not be listed; `quiet`: found when the wizard opened, offered without a
        word)."""

        def __init__(
            self, specs: list[str], error: str = "", title: str = "", *, quiet: bool = False
        ) -> None:
            super().__init__()
            self.specs = specs
            self.error = error
            self.title = title
            self.quiet = quiet

    def __init__(self, title: str, initial_model: str, *, id: str | None = None) -> None:
        super().__init__(title, id=id)
        self.initial_model = initial_model
        self.presets: list[str] = []
        self.checking = -1  # the version of the model check started last

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

    def on_mount(self) -> None:
        self.presets_worker()

    def worker_failed(self, group: str, error: BaseException) -> None:
        """A check that failed blocks the run like a model that does not answer."""
        if group == "wizard-model":
            self.post_message(self.ModelChecked(self.checking, Problem("model", str(error)), ""))

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
        """List the models of the Ollama server typed in the model field (its @URL), else
        the default local one; each keeps that URL."""
        self.ollama_worker(self.model_spec())

    # -- the step's workers ----------------------------------------------------------------

    @work(thread=True, exclusive=True, group="wizard-presets", exit_on_error=False)
    def presets_worker(self) -> None:
        self.post_message(self.PresetsListed(model_presets(), quiet=True))
        found = discover_server_models()  # the local Ollama's models, when one answers
        if found:
            self.post_message(self.PresetsListed(found, quiet=True))

    @work(thread=True, exclusive=True, group="wizard-ollama", exit_on_error=False)
    def ollama_worker(self, typed: str) -> None:
        title = server_title(typed)
        try:
            specs = list_server_models(typed)
        except KontestError as error:
            self.post_message(self.PresetsListed([], str(error), error.title))
            return
        except Exception as error:
            self.post_message(self.PresetsListed([], f"cannot list {title} models: {error}"))
            return
        self.post_message(self.PresetsListed(specs, title=title))

    @on(PresetsListed)
    def presets_listed(self, event: PresetsListed) -> None:
        if event.error:
            self.notify(event.error, title=event.title, severity="warning", markup=False)
            return
        self.presets += [spec for spec in event.specs if spec not in self.presets]
        self.show_presets(self.presets)
        if not event.quiet:
            self.notify(f"{len(event.specs)} {event.title} model(s) found", markup=False)

    def check(self, version: int, model: str) -> None:
        """Check the model (for the screen's state `version`): `ModelChecked` says."""
        self.checking = version
        self.show_status("Checking…")
        self.model_check_worker(version, model)

    @work(thread=True, exclusive=True, group="wizard-model", exit_on_error=False)
    def model_check_worker(self, version: int, model: str) -> None:
        problem, line = check_model(SessionSpec(None, model=model or "sim"))
        self.post_message(self.ModelChecked(version, problem, line))

    @on(ModelChecked)
    def model_checked(self, event: ModelChecked) -> None:
        """The check started last says how it went (the message goes on to the screen)."""
        if event.version != self.checking:
            return
        if event.problem is not None:
            self.show_status(f"✗ {event.problem.message}")
        else:
            self.show_status(f"✓ {clean_text(event.line)}")

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
