"""The help screen: what each screen does and its keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP_TEXT = """\
# kontest-tui explorer

Test whether a language model is **consistent** about the facts of a knowledge graph.

**Flow**: Start → New session wizard (graph, templates, variants, kinds, model) → Live run → Results.

| Key | Action |
|---|---|
| `ctrl+p` | command palette: every action by name |
| `n` | new session (start screen) |
| `u` | resume a cancelled or unfinished session (start screen) |
| `ctrl+r` | run (wizard), pause/resume (`p`) and cancel (`escape`) in the live run |
| `ctrl+pgdn` / `ctrl+pgup` | next / previous wizard step |
| `tab` / arrows | move between widgets / within trees and tables |
| `enter` | open the highlighted session / node |
| `n` / `p` | next / previous node with errors (results) |
| `f` | only the nodes with errors (results; again: everything) |
| `e` | template editor (curation) |
| `f1` / `?` | this help |
| `ctrl+q` | quit |

**Results**: the tree shows every KG node with its relation's atomic answer per template
(green yes, red no, yellow ? invalid). `≠` marks a metamorphic error on a relation into that
node, `⚠N` ontological errors (a *no* to a relation the model's own *yes* answers imply),
`▸N` on a collapsed node the errors below it. The right pane lists the verdicts of the
relations into the selected node first, then every conversation and raw answer.

Model output is always shown as plain text with escape codes removed.
"""


class HelpScreen(ModalScreen[None]):
    """Keys and concepts, over the current screen."""

    BINDINGS = [
        Binding("escape,q,f1", "dismiss", "Close", id="close_help", tooltip="Close the help")
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(HELP_TEXT)
