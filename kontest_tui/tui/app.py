"""The Textual explorer (minimal start screen until the explorer issue lands)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


class KontestApp(App[None]):
    """kontest-tui: probe a language model's consistency against a knowledge graph."""

    TITLE = "kontest-tui"
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, kg: str | None = None, model: str | None = None, db: str | None = None) -> None:
        super().__init__()
        self.kg_name = kg
        self.model_spec = model
        self.db_path = db

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            f"Knowledge graph: {self.kg_name or '-'}    Model: {self.model_spec or '-'}",
            id="summary",
            markup=False,
        )
        yield Footer()


def make_app(kg: str | None = None, model: str | None = None, db: str | None = None) -> KontestApp:
    """The one factory the CLI and the tests use."""
    return KontestApp(kg=kg, model=model, db=db)


def run_app(kg: str | None = None, model: str | None = None, db: str | None = None) -> None:
    make_app(kg=kg, model=model, db=db).run()
