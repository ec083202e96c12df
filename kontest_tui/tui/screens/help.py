"""The help screen (f1): what the screen under it is for, every key of that screen, and on
the results the meaning of every symbol of the tree (report.legend)."""

from __future__ import annotations

import re
from typing import Any

from textual.actions import parse as parse_action
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

from kontest_tui.report.legend import ANSWER_SYMBOLS, ERROR_SYMBOLS

# What each screen is for, by its class name (the first lines of its help).
SCREEN_HELP: dict[str, str] = {
    "StartScreen": "Your stored sessions, newest first. Open one's results, resume an "
    "unfinished one, or start a new session (the wizard).",
    "WizardScreen": "A new session in five steps: the graph and its scope, the templates, "
    "the covering-array variants, the test kinds, the model. `ctrl+r` runs it.",
    "LiveRunScreen": "The session being asked: questions stream as the model answers, errors "
    "appear as the oracles find them.",
    "ResultsScreen": "The model's knowledge graph with its errors. `n` goes to the clearest "
    "error first (two phrasings, each asked alone, with opposite yes/no answers and short "
    "distinct names), then the next; the card at the top of the right pane explains the "
    "selected error in plain sentences. `/` finds a node by label, alias or id (n / p then "
    "walk the matches, escape clears); the results reopen where you left them.",
    "TemplateEditorScreen": "Write a template or edit one: its text, the words that may "
    "vary, a preview on the session's relations; save it in your copy of the set or ask it "
    "in the session.",
    "ProbeScreen": "Ask the session's model your own question about one relation now (each "
    "template's text for the pair is there to start from) and see its answer beside the "
    "stored ones. Probes are stored with the session and change no metric; a rephrasing "
    "worth keeping becomes a template or a synonym.",
    "SynonymEditorScreen": "Pin or ban values of a word for the covering-array variants; your "
    "pins and bans are listed, and Undo (ctrl+z) takes one back.",
}

CONCEPTS = """\
## Concepts

- A **relation** is a fact of the graph, "A contains B"; each **template** phrases it as a
  question ("Does {parent} have a {child}?").
- An **error** is a set of answers that cannot all be right: two phrasings that disagree
  (alone, or within or across conversations), a *no* to a fact the model's own *yes*
  answers imply, or a wrong answer to a question whose answer is known.
- Model output is always shown as plain text with escape codes removed.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# A readable name per screen class.
SCREEN_NAMES: dict[str, str] = {
    "StartScreen": "Start",
    "WizardScreen": "New session",
    "LiveRunScreen": "Live run",
    "ResultsScreen": "Results",
    "TemplateEditorScreen": "Template editor",
    "SynonymEditorScreen": "Synonym editor",
    "ProbeScreen": "Probe",
}


def screen_name(screen: Screen[Any]) -> str:
    """What the help calls a screen: `Results`, `Probe` (its class name in words when it has
    no name of its own, never `ProbeScreen`)."""
    name = type(screen).__name__
    if name in SCREEN_NAMES:
        return SCREEN_NAMES[name]
    words = re.findall(r"[A-Z][a-z0-9]*", name.removesuffix("Screen")) or [name]
    return " ".join([words[0], *(word.lower() for word in words[1:])])


def screen_help(screen: Screen[Any]) -> str:
    """The help of one screen as Markdown: what it is for, every key that works on it now
    (the screen's own, the app's, then the focused widget's), and the results' symbols."""
    name = type(screen).__name__
    lines = [f"# {screen_name(screen)}: help", "", SCREEN_HELP.get(name, ""), ""]
    groups: dict[str, list[str]] = {"screen": [], "app": [], "widget": []}
    seen: set[tuple[str, str]] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not active.enabled:
            continue  # shown greyed in the footer: not a key of this moment
        description = binding.description or binding.action
        if (description, binding.action) in seen:
            continue  # one binding reached by several keys is listed once
        seen.add((description, binding.action))
        shown = binding.key_display or screen.app.get_key_display(binding) or key
        tooltip = active.tooltip or binding.tooltip or ""
        group = (
            "screen" if active.node is screen else "app" if active.node is screen.app else "widget"
        )
        line = f"- `{_cell(shown)}` **{_cell(description)}**"
        groups[group].append(line + (f": {_cell(tooltip)}" if tooltip else ""))
    for entry in type(screen).BINDINGS:  # a key a focused field takes over is listed too
        if not isinstance(entry, Binding) or not entry.description:
            continue
        _, action, parameters = parse_action(entry.action)
        if not screen.check_action(action, parameters):
            continue  # not now (Results while a run goes on, a tab this session lacks)
        if (entry.description, entry.action) not in seen:
            seen.add((entry.description, entry.action))
            shown = entry.key_display or screen.app.get_key_display(entry)
            line = f"- `{_cell(shown)}` **{_cell(entry.description)}**"
            note = " (when the focus is not in a text field)"
            groups["screen"].append(line + f": {_cell(entry.tooltip or '')}{note}")
    for group, heading in (
        ("screen", "Keys of this screen"),
        ("app", "Keys everywhere"),
        ("widget", "Keys of the focused widget"),
    ):
        if groups[group]:
            lines += [f"## {heading}", "", *groups[group], ""]
    lines += [
        "`ctrl+p` opens the command palette: every action by name. `tab` moves between "
        "widgets, arrows within trees and tables, `enter` opens what is highlighted.",
        "",
    ]
    if name == "ResultsScreen":
        lines += ["## Symbols of the tree", ""]
        lines += [f"- `{mark}` {_cell(meaning)}" for mark, meaning in ANSWER_SYMBOLS]
        lines += [f"- `{mark}` {_cell(meaning)}" for mark, meaning in ERROR_SYMBOLS]
        lines.append("")
    return "\n".join(lines) + "\n" + CONCEPTS


class HelpScreen(ModalScreen[None]):
    """Keys and concepts of the screen under it."""

    BINDINGS = [
        Binding("escape,q,f1", "dismiss", "Close", id="close_help", tooltip="Close the help")
    ]

    def __init__(self, over: Screen[object] | None = None) -> None:
        super().__init__()
        self.text = screen_help(over) if over is not None else CONCEPTS

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(self.text)
