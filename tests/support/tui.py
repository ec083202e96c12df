"""Helpers for the explorer's tests: wait on screens, workers and conditions (never for a
fixed time: they poll a condition), read widget text, and write the paper's Kinawley example with hostile answers."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from weakref import WeakKeyDictionary

import pytest
from textual.app import App
from textual.notifications import Notification, SeverityLevel
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget

if TYPE_CHECKING:
    from kontest_tui.tui.widgets.paged_table import PagedTable
    from kontest_tui.tui.widgets.relation_tree import RelationTree

AnyApp = App[Any]
AnyPilot = Pilot[Any]
ScreenT = TypeVar("ScreenT", bound=Screen[Any])

# Ten relations of the places sample (Ireland, two provinces, two counties each: 60 turns with
# the simulated model, some of them errors and gaps): the graph of TUI flows and snapshots that
# run a session (the whole places sample is 1,590 turns).
TEN_RELATIONS = str(Path(__file__).resolve().parents[1] / "data" / "ireland_10_kg.json")


def write_sample_part(tmp_path: Path, root: str, sample: str = "places") -> Path:
    """One country of a sample graph (`root` and everything below it) as a graph file: a
    session of tens of relations where a flow needs more than ten (Denmark: 34, Norway: 56)."""
    from kontest_tui.kg.io import sample_path

    data = json.loads(sample_path(sample).read_text(encoding="utf-8"))
    below: dict[str, list[str]] = {}
    for edge in data["edges"]:
        below.setdefault(edge["parent"], []).append(edge["child"])
    kept, todo = {root}, [root]
    while todo:
        for child in below.get(todo.pop(), []):
            if child not in kept:
                kept.add(child)
                todo.append(child)
    data["name"] = f"{sample}-{root}"
    data["nodes"] = [node for node in data["nodes"] if node["id"] in kept]
    data["edges"] = [edge for edge in data["edges"] if edge["parent"] in kept]
    path = tmp_path / f"{data['name']}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


MARKUP = "[bold red]No[/bold red] [link=file:///etc/passwd]click[/link]"
ESCAPES = "\x1b[31mYes\x1b[0m, \x1b[2J\x1b]0;pwned\x07indeed."


async def wait_for_screen(
    pilot: AnyPilot, screen_type: type[ScreenT], timeout: float = 60.0
) -> ScreenT:
    """Let the app work until `screen_type` is on top (workers run meanwhile); the screen."""
    app: AnyApp = pilot.app
    deadline = time.monotonic() + timeout
    while True:
        screen = app.screen
        if isinstance(screen, screen_type) and getattr(screen, "ready", True):
            return screen
        assert time.monotonic() < deadline, f"{screen_type.__name__} never came (at {screen!r})"
        await pilot.pause(0.05)  # a poll interval, not a wait for a fixed time


def top_screen(app: AnyApp, screen_type: type[ScreenT]) -> ScreenT:
    """The screen on top, checked to be a `screen_type` (a test reads its attributes)."""
    screen = app.screen
    assert isinstance(screen, screen_type), f"{screen_type.__name__} is not on top ({screen!r})"
    return screen


async def wait_until(
    pilot: AnyPilot,
    condition: Callable[..., object],
    timeout: float = 60.0,
    what: str = "condition",
) -> None:
    """Let the app work until `condition()` is true."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)  # a poll interval, not a wait for a fixed time


async def wait_for_workers(pilot: AnyPilot) -> None:
    """Wait until no worker of the app is pending or running (a worker cancelled by a newer
    one of its exclusive group counts as done, unlike `workers.wait_for_complete`)."""
    from textual.worker import WorkerCancelled, WorkerFailed, WorkerState

    app: AnyApp = pilot.app
    while busy := [
        worker
        for worker in app.workers
        if worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
    ]:
        for worker in busy:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()
    await pilot.pause()


async def settle(pilot: AnyPilot) -> None:
    """Wait until no worker runs, no animation is scheduled and the app is idle (before a
    snapshot or an assertion on layout)."""
    await wait_for_workers(pilot)
    await pilot.wait_for_scheduled_animations()
    steady_cursors(pilot)
    await pilot.pause()


def steady_cursors(pilot: AnyPilot) -> None:
    """Stop every text field's cursor blinking (hidden from now on): a snapshot taken half a
    second later must not depend on where the blink was."""
    from textual.widgets import Input

    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False


_NOTIFIED: WeakKeyDictionary[AnyApp, list[Notification]] = WeakKeyDictionary()


def record_notifications(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every notification an app posts through its public `notify` (screens' and widgets'
    `notify` call it), so a test reads them with `notifications(app)` after their toasts
    expired, without Textual's private `App._notifications`."""
    original = App.notify

    def notify(
        self: AnyApp,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        shown = self.NOTIFICATION_TIMEOUT if timeout is None else timeout
        posted = Notification(message, title, severity, shown, markup=markup)
        _NOTIFIED.setdefault(self, []).append(posted)
        original(self, message, title=title, severity=severity, timeout=timeout, markup=markup)

    monkeypatch.setattr(App, "notify", notify)


def notifications(app: AnyApp) -> list[Notification]:
    """The notifications `app` posted so far, oldest first (`record_notifications`)."""
    return list(_NOTIFIED.get(app, ()))


def cursor_node_id(tree: RelationTree) -> str | None:
    """The id of the KG node under the results tree's cursor, or None."""
    cursor = tree.cursor_node
    return cursor.data.node if cursor is not None and cursor.data is not None else None


def widget_text(widget: Widget) -> str:
    """What a Static shows, as plain text."""
    return str(widget.render())


def write_kinawley(tmp_path: Path) -> tuple[Path, Path]:
    """The paper's running example (Ireland > Ulster > Kinawley) and a hostile recording."""
    kg = {
        "name": "kinawley",
        "domain": "places",
        "source": "test",
        "built": "",
        "nodes": [
            {"id": "Q27", "label": "Ireland", "aliases": [], "type": "country"},
            {"id": "Q190", "label": "Ulster", "aliases": [], "type": "region"},
            {"id": "Q6413", "label": "Kinawley", "aliases": [], "type": "locality"},
        ],
        "edges": [
            {"parent": "Q27", "child": "Q190", "relation": "contains"},
            {"parent": "Q190", "child": "Q6413", "relation": "contains"},
        ],
    }
    answers = {
        "Does Ireland contain Ulster?": ESCAPES,
        "Is Ulster in Ireland?": "Yes",
        "Does Ulster contain Kinawley?": "Yes",
        "Is Kinawley in Ulster?": "Yes",
        "Does Ireland contain Kinawley?": MARKUP,
        "Is Kinawley in Ireland?": "No",
    }
    kg_path = tmp_path / "kinawley.json"
    kg_path.write_text(json.dumps(kg), encoding="utf-8")
    replay = tmp_path / "hostile.jsonl"
    replay.write_text(
        "".join(json.dumps({"query": q, "answer": a}) + "\n" for q, a in answers.items()),
        encoding="utf-8",
    )
    return kg_path, replay


async def paged_rows(
    pilot: AnyPilot, table: PagedTable, upto: int | None = None
) -> list[tuple[str, ...]]:
    """The rows of a PagedTable (its first `upto`), paged in as a user scrolling would:
    the cursor moves over them and each page is waited for (it is read in a worker)."""
    await wait_until(pilot, lambda: table.row_count == 0 or table.row(0) is not None, what="rows")
    count = table.row_count if upto is None else min(upto, table.row_count)
    rows: list[tuple[str, ...]] = []
    for index in range(count):
        if table.row(index) is None:
            table.move_cursor(index)

            def drawn(row_index: int = index) -> bool:
                return table.row(row_index) is not None

            await wait_until(pilot, drawn, what=f"row {index}")
        row = table.row(index)
        assert row is not None
        rows.append(tuple(str(cell) for cell in row))
    return rows


def notified(app: AnyApp, text: str) -> bool:
    """Whether a notification of the app says `text`."""
    return any(text in str(n.message) for n in notifications(app))


async def cancel_run(pilot: AnyPilot, run: Screen[Any]) -> None:
    """escape on a live run, and yes to its question: the run is cancelled."""
    await pilot.press("escape")
    await wait_until(pilot, lambda: pilot.app.screen is not run, what="the question")
    await pilot.press("y")
