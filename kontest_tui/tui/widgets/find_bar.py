"""The results' find (`/`): a field under the tabs, the nodes it matched and the one selected.

A row with a one-line field and a status line. Enter looks the text up in a worker
(store.search through tui.sessions.find_nodes: labels, aliases, ids, best first) and posts
`Found` with the matches; `step` walks them (`n` / `p`), `clear` forgets them and posts
`Cleared`. The results screen selects the match in the graph and narrows the Errors tab to
the best matches' relations. It never touches another widget.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from kontest_tui.store.search import NodeMatch
from kontest_tui.tui.sessions import find_nodes


class FindBar(Horizontal):
    """`/`: a node by label, alias or id; its matches walked with `n` / `p`."""

    class Found(Message):
        """A find matched `matches` (best first); `best`: those of the best tier, named in
        `names` (`Grane`, `3 nodes like 'gar'`)."""

        def __init__(
            self, text: str, matches: list[NodeMatch], best: tuple[str, ...], names: str
        ) -> None:
            super().__init__()
            self.text = text
            self.matches = matches
            self.best = best
            self.names = names

    class Cleared(Message):
        """The find was cleared (escape, or enter on an empty field)."""

    class _Looked(Message):
        def __init__(self, text: str, matches: list[NodeMatch]) -> None:
            super().__init__()
            self.text = text
            self.matches = matches

    def __init__(self, *, db: str | None, session_id: str, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.db = db
        self.session_id = session_id
        self.matches: list[NodeMatch] = []  # the nodes the find matched, best first
        self.at = 0  # the match selected

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="/ find a node: a label, an alias or an id (enter)",
            id="find-input",
            compact=True,
        )
        yield Static("", id="find-status", classes="hint", markup=False)

    def on_mount(self) -> None:
        self.display = False  # shown by `open`

    @property
    def field(self) -> Input:
        return self.query_one("#find-input", Input)

    def open(self) -> None:
        """Show the field with the focus (the last find's text selected, to type over)."""
        self.display = True
        self.field.focus()
        self.field.select_all()

    @on(Input.Submitted, "#find-input")
    def submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self.clear()
            return
        self.show("finding…")
        self.look_worker(text)

    @work(thread=True, exclusive=True, group="results-find", exit_on_error=False)
    def look_worker(self, text: str) -> None:
        self.post_message(self._Looked(text, find_nodes(self.db, self.session_id, text)))

    @on(_Looked)
    def looked(self, event: _Looked) -> None:
        if not event.matches:
            self.show(f"no node matches {event.text!r}")
            self.notify(f"No node matches {event.text!r}.", markup=False)
            return
        self.matches, self.at = event.matches, 0
        best = [match for match in event.matches if match.tier == event.matches[0].tier]
        names = best[0].name if len(best) == 1 else f"{len(best)} nodes like {event.text!r}"
        self.show_match()
        self.post_message(
            self.Found(event.text, event.matches, tuple(match.node for match in best), names)
        )

    @property
    def current(self) -> NodeMatch:
        return self.matches[self.at]

    def step(self, offset: int) -> NodeMatch:
        """The match `offset` places after (before) the one selected, around the end."""
        self.at = (self.at + offset) % len(self.matches)
        self.show_match()
        return self.current

    def show_match(self) -> None:
        match = self.current
        how = "" if match.field == "label" else f" ({match.field} {match.matched!r})"
        self.show(f"{self.at + 1}/{len(self.matches)}: {match.name}{how} · n/p · esc clears")

    def show(self, text: str) -> None:
        self.query_one("#find-status", Static).update(text)

    def clear(self) -> None:
        """Forget the find and close the field."""
        self.matches, self.at = [], 0
        self.field.value = ""
        self.show("")
        self.display = False
        self.post_message(self.Cleared())
