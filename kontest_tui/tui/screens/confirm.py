"""A yes/no question in a modal (cancel a running session, quit while one runs)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask once; dismissed with True (y, the first button) or False (n, escape)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm_yes", tooltip="Yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm_no", tooltip="No"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(self.question, id="confirm-question", markup=False)
            with Horizontal(classes="buttons"):
                yield Button(f"{self.yes} (y)", id="confirm-yes", variant="error")
                yield Button(f"{self.no} (n)", id="confirm-no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed, "#confirm-yes")
    def yes_pressed(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def no_pressed(self) -> None:
        self.dismiss(False)
