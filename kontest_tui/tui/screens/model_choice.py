"""Ask for another model spec ("same scope, another model" from the results): a modal with a
field and a list to pick from: the models of the other stored sessions, the simulated presets,
`local:gemma3-270m` when the [local] extra is installed ("a real small model, offline"), and
the models an Ollama server offers (those of the session's server or the local default are
added when one answers; Find models asks the server typed in the field, an OpenAI-compatible
one too). The spec shapes shown are the providers' hints (run.api). The field
starts empty: up and down in it move in the list, and moving fills the field; enter on an
entry, or in the field once it holds a spec, runs it (nothing runs that was not chosen)."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from kontest_tui.errors import KontestError
from kontest_tui.run.api import (
    describe_model_choice,
    discover_server_models,
    finder_title,
    list_server_models,
    model_spec_patterns,
    server_title,
)
from kontest_tui.tui.workers import WorkerFailures


class ModelChoiceScreen(WorkerFailures, ModalScreen[str | None]):
    """Dismissed with the spec typed or picked (enter, Run) or None (escape, Cancel)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="model_choice_cancel", tooltip="Cancel"),
        Binding(
            "down",
            "move_list(1)",
            "Next in the list",
            id="model_choice_next",
            show=False,
            tooltip="The next model of the list, into the field",
        ),
        Binding(
            "up",
            "move_list(-1)",
            "Previous in the list",
            id="model_choice_previous",
            show=False,
            tooltip="The previous model of the list, into the field",
        ),
    ]
    AUTO_FOCUS = "#model-choice"

    class OllamaListed(Message):
        """The models of a server, `title` its name (`error` when they could not be listed)."""

        def __init__(
            self, specs: list[str], title: str, error: str = "", *, quiet: bool = False
        ) -> None:
            super().__init__()
            self.specs = specs
            self.title = title
            self.error = error
            self.quiet = quiet  # listed when the picker opened: added without a word

    def __init__(self, current: str, presets: list[str], used: list[str] | None = None) -> None:
        super().__init__()
        self.current = current
        self.presets = presets  # the simulated presets and local:gemma3-270m when installed
        # models of other stored sessions, newest first (not the session's own)
        self.used = [spec for spec in dict.fromkeys(used or []) if spec != current]
        self.listed: list[str] = []  # the specs of the list, in order

    def compose(self) -> ComposeResult:
        with Vertical(id="model-choice-box"):
            yield Static(
                f"Run the same session (scope, depth, templates, kinds, options) with another "
                f"model, then compare it with this one ({self.current}).",
                markup=False,
            )
            yield Input(
                placeholder="↓ picks from the list; or type a model spec", id="model-choice"
            )
            used = [spec for spec in self.used if spec not in self.presets]
            yield OptionList(
                *self.new_options(used, "used by another session"),
                *(
                    option
                    for preset in self.presets
                    if preset != self.current
                    for option in self.new_options(
                        [preset],
                        f"{describe_model_choice(preset)}, used by another session"
                        if preset in self.used
                        else describe_model_choice(preset),
                    )
                ),
                id="model-options",
            )
            yield Static(
                "Up and down pick one (into the field, enter runs it), or type any spec: "
                f"{', '.join(model_spec_patterns())}.",
                classes="hint",
                markup=False,
            )
            with Horizontal(classes="buttons"):
                yield Button("Run (enter)", id="model-choice-run", variant="success")
                yield Button(f"Find {finder_title()} models", id="model-choice-ollama")
                yield Button("Cancel (esc)", id="model-choice-cancel")

    def new_options(self, specs: list[str], what: str) -> list[Option]:
        """Options for `specs` not listed yet, each saying what it is (its id: its index in
        `listed`)."""
        options = []
        for spec in specs:
            if spec not in self.listed:
                self.listed.append(spec)
                options.append(Option(f"{spec}  ({what})", id=str(len(self.listed) - 1)))
        return options

    def spec_of(self, option: Option) -> str:
        return self.listed[int(str(option.id))]

    def on_mount(self) -> None:
        """The Ollama models of the session's server (or the local default), listed when
        one answers; nothing is said when none does."""
        self.ollama_worker("", self.current, quiet=True)

    def action_move_list(self, step: int) -> None:
        """Up / down in the field: the previous / next entry of the list, into the field."""
        options = self.query_one("#model-options", OptionList)
        if not options.option_count:
            return
        if options.highlighted is None or not self.moved:  # the list's own first highlight
            index = 0 if step > 0 else options.option_count - 1
        else:
            index = min(max(options.highlighted + step, 0), options.option_count - 1)
        self.moved = True
        options.highlighted = index
        self.query_one("#model-choice", Input).value = self.spec_of(options.options[index])

    moved = False  # the list was moved (by the keys or the mouse): its entry fills the field

    @on(OptionList.OptionHighlighted, "#model-options")
    def option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        options = self.query_one("#model-options", OptionList)
        if self.moved or self.focused is options:
            self.query_one("#model-choice", Input).value = self.spec_of(event.option)

    @on(OptionList.OptionSelected, "#model-options")
    def option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.spec_of(event.option))

    @on(Button.Pressed, "#model-choice-ollama")
    def find_ollama(self) -> None:
        """The models of the server in the field (its @URL), else of the session's model
        when it is an Ollama one, else of the local default server."""
        typed = self.query_one("#model-choice", Input).value.strip()
        self.notify(f"Looking for {server_title(typed, self.current)} models…", markup=False)
        self.ollama_worker(typed, self.current)

    @work(thread=True, exclusive=True, group="model-choice-ollama", exit_on_error=False)
    def ollama_worker(self, typed: str, current: str, *, quiet: bool = False) -> None:
        title = server_title(typed, current)
        if quiet:
            found = discover_server_models(current)
            self.post_message(self.OllamaListed(found, title, quiet=True))
            return
        try:
            specs = list_server_models(typed, current)
        except KontestError as error:
            self.post_message(self.OllamaListed([], title, str(error)))
            return
        self.post_message(self.OllamaListed(specs, title))

    @on(OllamaListed)
    def ollama_listed(self, event: OllamaListed) -> None:
        if event.quiet:
            self.query_one("#model-options", OptionList).add_options(
                self.new_options(event.specs, event.title)
            )
            return
        if event.error:
            self.notify(event.error, title=event.title, severity="warning", markup=False)
            return
        if not event.specs:
            self.notify(f"The {event.title} server offers no model.", markup=False)
            return
        self.query_one("#model-options", OptionList).add_options(
            self.new_options(event.specs, event.title)
        )
        self.notify(f"{len(event.specs)} {event.title} model(s) listed", markup=False)
        self.query_one("#model-options", OptionList).focus()

    @on(Input.Submitted, "#model-choice")
    @on(Button.Pressed, "#model-choice-run")
    def run_chosen(self) -> None:
        spec = self.query_one("#model-choice", Input).value.strip()
        if not spec:
            self.notify(
                "Pick a model (down moves in the list) or type a spec",
                severity="warning",
                markup=False,
            )
            return
        self.dismiss(spec)

    @on(Button.Pressed, "#model-choice-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
