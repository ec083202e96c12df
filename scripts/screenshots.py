"""Save SVG screenshots of the main screens (for docs/): `python scripts/screenshots.py DIR`.

Drives the same app the CLI runs, on the places sample with the simulated model, into a
throwaway session database: a KONTEST session (compared with a `sim:forgetful` session stored
beforehand, and both ensembled), then one with every test kind (the wizard's Kinds step and the
results' Kinds tab). `--text` also prints each screen as plain text.
"""

from __future__ import annotations

import asyncio
import io
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from kontest_tui.tui.app import make_app


def render_screen_text(app: App) -> str:
    """The current screen as plain text (what a screenshot shows, without colours)."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


async def wait_for(pilot: Pilot, condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("screen never got ready")
        await pilot.pause(0.05)
    await pilot.pause(0.2)


def pause_runs_at(app: App, answered: int) -> None:
    """Make the app's next live run pause itself after `answered` answers (the simulated
    model is so fast that the run would be over before a screenshot could catch it)."""
    from kontest_tui.tui.screens.live_run import LiveRunScreen

    def start_run(spec: Any, compare_with: str | None = None) -> None:
        screen = LiveRunScreen(spec, compare_with=compare_with)
        tally, control = screen.tally, screen.control
        add = tally.add
        count = 0

        def counted(conversation: Any, response: Any) -> None:  # called in the run's thread
            nonlocal count
            add(conversation, response)
            count += 1
            if count == answered:
                control.pause()  # the flag the screen shows
                # In the run's loop itself: the simulated model never yields, so a pause
                # scheduled into the loop would only be seen at the end of the run.
                if control.executor is not None:
                    control.executor.pause()

        tally.add = counted  # type: ignore[method-assign]
        app.push_screen(screen)

    app.start_run = start_run  # type: ignore[attr-defined]


async def shoot_paused_run(pilot: Pilot, shoot: Any) -> None:
    """Wait for the live run to pause itself, take the shot, let it finish."""
    from kontest_tui.tui.screens.live_run import LiveRunScreen

    app = pilot.app
    await wait_for(
        pilot, lambda: isinstance(app.screen, LiveRunScreen) and app.screen.control.paused
    )
    await pilot.pause(0.6)
    run = app.screen
    shoot()
    run.control.resume()


def make_shooter(app: App, folder: Path, suffix: str, text: bool) -> Callable[[str], None]:
    """A function saving the current screen as `{name}{suffix}.svg` (and printing its text)."""

    def shoot(name: str) -> None:
        app.save_screenshot(f"{name}{suffix}.svg", path=str(folder))
        if text:
            print(f"== {name}{suffix}\n{render_screen_text(app)}")

    return shoot


async def wait_for_wizard(pilot: Pilot) -> None:
    """Until the wizard shows with its template set loaded."""
    from kontest_tui.tui.screens.wizard import WizardScreen

    app = pilot.app
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, WizardScreen) and app.screen.state.run_state()[0],
    )


async def store_sim_session(db: str, spec: str, kg_name: str = "places") -> str:
    """Run a simulated model on a sample with the engine (as `kontest run` does), stored."""
    from kontest_tui.kg.io import load_graph
    from kontest_tui.run.api import SessionSpec, create_session
    from kontest_tui.run.session import open_session_model, run_session
    from kontest_tui.store import Store

    kg = load_graph(kg_name)
    with Store(db) as store:
        session_id = create_session(store, SessionSpec(kg, model=spec, kg_name=kg_name))
        model = open_session_model(spec, kg)
        try:
            await run_session(store, session_id, model)
        finally:
            await model.aclose()
    return session_id


async def save_screenshots(folder: Path, size: tuple[int, int], suffix: str, text: bool) -> None:
    from kontest_tui.tui.screens.results import ResultsScreen

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "sessions.db")
        await store_sim_session(db, "sim:forgetful")  # the session to compare with
        app = make_app(kg="places", model="sim", db=db)
        async with app.run_test(size=size) as pilot:
            shoot = make_shooter(app, folder, suffix, text)
            await wait_for_wizard(pilot)
            await app.workers.wait_for_complete()
            wizard = app.screen
            for step in ("step-graph", "step-templates", "step-variants", "step-model"):
                wizard.query_one("#wizard-tabs", TabbedContent).active = step
                await pilot.pause(0.3)
                shoot(f"wizard-{step.removeprefix('step-')}")
            pause_runs_at(app, 400)
            await pilot.press("ctrl+r")
            await shoot_paused_run(pilot, lambda: shoot("live-run"))
            await wait_for(
                pilot, lambda: isinstance(app.screen, ResultsScreen) and app.screen.ready
            )
            await pilot.press("down", "down", "down", "down", "down", "down", "down", "down")
            await pilot.pause(0.3)
            shoot("results-graph")
            for key, name in (
                ("g", "results-gap"),
                ("x", "results-errors"),
                ("c", "results-compare"),
                ("m", "results-ensemble"),
            ):
                await pilot.press(key)
                await pilot.pause(0.3)
                await app.workers.wait_for_complete()  # loading and comparing the other one
                await pilot.pause(0.3)
                shoot(name)
            await pilot.press("escape")
            await pilot.pause(0.5)
            await app.workers.wait_for_complete()
            await pilot.pause(0.3)
            shoot("start")
            await pilot.press("f1")
            await pilot.pause(0.3)
            shoot("help")


async def save_kind_screenshots(
    folder: Path, size: tuple[int, int], suffix: str, text: bool
) -> None:
    """The wizard's Kinds step with variants, FactChecker and logic rules ticked, and the
    Kinds tab of that session's results."""
    from textual.widgets import SelectionList

    from kontest_tui.tui.screens.results import ResultsScreen

    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(kg="places", model="sim", db=str(Path(tmp) / "sessions.db"))
        async with app.run_test(size=size) as pilot:
            shoot = make_shooter(app, folder, suffix, text)
            await wait_for_wizard(pilot)
            wizard = app.screen
            wizard.query_one("#wizard-tabs", TabbedContent).active = "step-kinds"
            kinds = wizard.query_one("#kind-select", SelectionList)
            for kind in ("variant", "factcheck", "logic"):
                kinds.select(kind)
            await wait_for(  # KONTEST and the three kinds counted
                pilot,
                lambda: wizard.preparation is not None and len(wizard.preparation.counts) == 4,
                timeout=120,
            )
            await app.workers.wait_for_complete()
            await pilot.pause(0.3)
            shoot("wizard-kinds")
            pause_runs_at(app, 2700)  # past KONTEST and the variants, into FactChecker
            await pilot.press("ctrl+r")
            await shoot_paused_run(pilot, lambda: shoot("live-run-kinds"))
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, ResultsScreen) and app.screen.ready,
                timeout=300,
            )
            await pilot.press("k")
            await pilot.pause(0.5)
            shoot("results-kinds")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(args):
        print("usage: python scripts/screenshots.py [FOLDER] [--text]")
        return
    text = "--text" in args
    args = [arg for arg in args if arg != "--text"]
    folder = Path(args[0] if args else "docs/screenshots")
    # The docs show what a user has: the built-in test kinds, not a plugin's installed here
    # (the test plugin, installed by make setup-test, would add its row to the Kinds step).
    from kontest_tui.kinds import registry

    registry._plugin_kinds = lambda: ((), ())  # type: ignore[method-assign]
    asyncio.run(save_screenshots(folder, (100, 32), "", text))
    asyncio.run(save_screenshots(folder, (80, 24), "-80x24", text))
    asyncio.run(save_kind_screenshots(folder, (100, 32), "", text))
    asyncio.run(save_kind_screenshots(folder, (80, 24), "-80x24", text))


if __name__ == "__main__":
    main()
