"""The Textual explorer: start screen, new-session wizard, live run, results and curation.

`make_app` is the one factory the CLI (`kontest`, `kontest --kg places --model sim`,
`kontest --web`) and the tests use. The app holds no session: screens pass each other
session ids, and each reads what it shows from the session database.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from kontest_tui.tui.commands import KontestCommands
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.run.api import SessionSpec
    from kontest_tui.tui.run_control import RunControl
    from kontest_tui.tui.screens.curation import SessionExtended

STYLES = Path(__file__).parent / "styles" / "app.tcss"
TERMINAL_CHECK_S = 0.5  # how often the explorer checks that its terminal is still there
EXIT_GRACE_S = 1.5  # how long a closing explorer waits for a run's thread before it ends
# ... and for a run that has every answer and is evaluating and storing them (its session
# would otherwise be left unevaluated): long enough for a 100,000-relation evaluation
FINISH_GRACE_S = 180.0
BEFORE_EXIT_S = 1.0  # then at most this long to mark the sessions it cut off (3 s in all)


def input_terminal() -> int | None:
    """The file descriptor of the terminal the explorer reads keys from (None: not a terminal).
    Once the terminal hangs up, isatty() on it turns false."""
    stream = sys.__stdin__
    try:
        fd = stream.fileno() if stream is not None else -1
    except (OSError, ValueError):
        return None
    return fd if fd >= 0 and os.isatty(fd) else None


class KontestApp(WorkerFailures, App[None]):
    """kontest-tui: probe a language model's consistency against a knowledge graph."""

    TITLE = "kontest-tui"
    CSS_PATH = str(STYLES)
    COMMANDS = App.COMMANDS | {KontestCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", tooltip="Quit kontest-tui", priority=True),
        Binding("f1,question_mark", "help", "Help", id="help", tooltip="Keys and concepts"),
        Binding(
            "ctrl+y",
            "edit_synonyms",
            "Synonyms",
            id="edit_synonyms",
            tooltip="Pin or ban synonym values (the variants of the next session use them)",
            show=False,
        ),
        Binding(
            "ctrl+n",
            "new_session",
            "New",
            id="new_session_global",
            tooltip="Start a new session",
            show=False,
        ),
    ]

    def __init__(
        self, kg: str | None = None, model: str | None = None, db: str | None = None
    ) -> None:
        super().__init__()
        self.kg_name = kg
        self.model_spec = model
        self.db_path = db
        # runs the explorer aborted (a live screen unmounted mid-run): their sessions are
        # marked cancelled if the process ends before they wind down
        self.aborted_runs: list[RunControl] = []
        # sessions that got a template's answers, until their results screen shows them again
        self.extended_sessions: set[str] = set()

    def on_mount(self) -> None:
        from kontest_tui.tui.screens.start import StartScreen

        self.push_screen(StartScreen())
        if self.kg_name or self.model_spec:
            # `kontest --kg places --model sim`: the wizard opens at its last step, ready to Run.
            self.open_wizard(kg=self.kg_name, model=self.model_spec, start_step="step-model")
        if not self.is_headless and not self.is_web:
            self.watch_terminal()

    def watch_terminal(self) -> None:
        """Quit when the terminal goes away (its window closed, tmux killed, SIGHUP): Textual's
        input thread would otherwise read the dead terminal in a loop at full CPU. A running
        session ends as on ctrl+q: cancelled, its answers so far stored."""
        terminal = input_terminal()
        if terminal is None:
            return
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.exit)
        self.set_interval(TERMINAL_CHECK_S, lambda: None if os.isatty(terminal) else self.exit())

    # -- navigation used by screens and the palette -----------------------------------------

    def open_wizard(
        self, kg: str | None = None, model: str | None = None, start_step: str = "step-graph"
    ) -> None:
        from kontest_tui.tui.screens.wizard import WizardScreen

        self.push_screen(
            WizardScreen(
                kg=kg or self.kg_name, model=model or self.model_spec, start_step=start_step
            )
        )

    def action_new_session(self) -> None:
        self.open_wizard()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's palette commands but its Quit: the app's own (ctrl+q, which asks first
        while a session runs) is listed with its key."""
        for command in super().get_system_commands(screen):
            if command.title != "Quit":
                yield command

    def deliver_screenshot(
        self,
        filename: str | None = None,
        path: str | None = None,
        time_format: str | None = None,
    ) -> str | None:
        """Screenshots (the palette's, `action_screenshot`) go to the exports folder, beside
        the session exports, not to ~/Downloads (which may not exist)."""
        if path is None and not self.is_web:
            from kontest_tui.tui.export import export_folder

            path = str(export_folder())
        return super().deliver_screenshot(filename, path, time_format)

    def action_help(self) -> None:
        from kontest_tui.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.screen))

    def action_go_home(self) -> None:
        from kontest_tui.tui.screens.start import StartScreen

        while len(self.screen_stack) > 2 and not isinstance(self.screen, StartScreen):
            self.pop_screen()

    def start_run(self, spec: SessionSpec, compare_with: str | None = None) -> None:
        """Run a new session (a spec the wizard prepared) on the live screen; its results
        open on Compare with `compare_with` (same scope, another model)."""
        from kontest_tui.tui.screens.live_run import LiveRunScreen

        self.push_screen(LiveRunScreen(spec, compare_with=compare_with))

    def open_results(
        self,
        session_id: str,
        replace: bool = False,
        compare_with: str | None = None,
        tab: str | None = None,
    ) -> None:
        """Show a stored session's results (`replace`: instead of the screen on top;
        `compare_with`: on the Compare tab with that session; `tab`: on that tab)."""
        if replace:
            self.switch_screen_to_results(session_id, compare_with=compare_with, tab=tab)
        else:
            self.show_results(session_id)

    def show_results(self, session_id: str) -> None:
        """The results of a stored session (read through the store's views)."""
        from kontest_tui.tui.screens.results import ResultsScreen

        self.push_screen(ResultsScreen(session_id))

    def on_session_extended(self, message: SessionExtended) -> None:
        """A template was asked in a session: its results screen shows it again."""
        self.extended_sessions.add(message.session_id)

    def switch_screen_to_results(
        self, session_id: str, compare_with: str | None = None, tab: str | None = None
    ) -> None:
        """Replace the live run with its stored session's results (`compare_with`: open
        Compare with that session; `tab`: open on that tab)."""
        from kontest_tui.tui.screens.results import ResultsScreen

        self.switch_screen(ResultsScreen(session_id, compare_with=compare_with, tab=tab))

    def ask_again(self, session_id: str) -> None:
        """Ask a stored session again with its templates and synonym lists as they are now,
        only the questions whose text changed (run.api.rerun_session), on the live screen;
        its results then open on the Templates tab with what changed."""
        from kontest_tui.tui.screens.live_run import LiveRunScreen

        self.push_screen(LiveRunScreen(rerun=session_id))

    def action_edit_synonyms(self) -> None:
        """The synonym editor on what the screen shows: the wizard's question, a stored
        session (results, probe, template editor, live run), else a domain to choose."""
        from kontest_tui.tui.screens.curation import SynonymEditorScreen, VariantSource
        from kontest_tui.tui.screens.wizard import WizardScreen

        screen = self.screen
        if isinstance(screen, WizardScreen):
            source = screen.variant_source()
            if source is not None:
                # From the wizard: the preview is the question its Variants step shows.
                kg, relation, template, strength = source
                preview = VariantSource(kg, relation, template, strength)
                self.push_screen(SynonymEditorScreen(domain=kg.domain, preview=preview))
                return
        session_id = getattr(screen, "session_id", None)
        if isinstance(session_id, str):
            # The relation selected there (results, probe) is the question previewed.
            selected = getattr(screen, "selected_relation_id", None)
            self.push_screen(
                SynonymEditorScreen(
                    session_id=session_id,
                    db=self.db_path,
                    relation_id=selected if isinstance(selected, str) else None,
                )
            )
            return
        domain = getattr(screen, "domain", None)
        self.push_screen(
            SynonymEditorScreen(domain=domain if isinstance(domain, str) else "places")
        )

    async def action_quit(self) -> None:
        """Quit, after asking when a session is running (its answers so far stay stored)."""
        from kontest_tui.tui.screens.confirm import ConfirmScreen
        from kontest_tui.tui.screens.live_run import LiveRunScreen

        running = [
            screen
            for screen in self.screen_stack
            if isinstance(screen, LiveRunScreen) and screen.running
        ]
        if not running or isinstance(self.screen, ConfirmScreen):
            self.exit()
            return

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self.exit()

        self.push_screen(
            ConfirmScreen(
                "A session is running. Quit anyway? The answers so far stay stored; "
                "Resume on the start screen asks the rest.",
                yes="Quit",
                no="Keep running",
            ),
            answered,
        )

    def resume_stored_session(self, session_id: str) -> None:
        """Go on with a cancelled or unfinished session: only its missing turns are asked."""
        from kontest_tui.tui.screens.live_run import LiveRunScreen

        self.push_screen(LiveRunScreen(resume=session_id))

    def open_stored_session(self, session_id: str) -> None:
        """A stored session's results, opened by id (nothing is loaded here)."""
        self.show_results(session_id)

    def on_unmount(self) -> None:
        """The explorer is closing: a run still busy in its thread (a final evaluation that
        cannot be interrupted) must not keep the process alive once the screen is gone; its
        session is marked cancelled before the process ends."""
        if not self.is_headless:
            from kontest_tui.tui.run_control import leave_cancelled

            runs, db = tuple(self.aborted_runs), self.db_path
            finishing = any(run.finishing for run in runs)
            end_process_after(
                FINISH_GRACE_S if finishing else EXIT_GRACE_S,
                self.return_code or 0,
                before=lambda: leave_cancelled(runs, db),
            )


def end_process_after(
    seconds: float, code: int, before: Callable[[], None] | None = None
) -> threading.Timer:
    """End this process after `seconds` unless it ends by itself first (a daemon timer: it
    dies with the process), calling `before` first for at most BEFORE_EXIT_S (in a thread
    of its own: a database locked by the run's thread makes it wait, never the process's
    end; a failure is ignored). The answers a run stored are committed;
    a session cut short is left resumable (its lease is taken over once its process is
    gone)."""

    def quietly() -> None:
        with contextlib.suppress(Exception):
            if before is not None:
                before()

    def end() -> None:
        if before is not None:  # bounded: the run's thread may hold the database's lock
            marking = threading.Thread(target=quietly, name="kontest-exit", daemon=True)
            marking.start()
            marking.join(BEFORE_EXIT_S)
        os._exit(code)

    timer = threading.Timer(seconds, end)
    timer.daemon = True
    timer.start()
    return timer


def make_app(kg: str | None = None, model: str | None = None, db: str | None = None) -> KontestApp:
    """The one factory the CLI and the tests use."""
    return KontestApp(kg=kg, model=model, db=db)


def run_app(
    kg: str | None = None, model: str | None = None, db: str | None = None, web: bool = False
) -> int:
    """Run the explorer in this terminal, or serve it to a browser with textual-serve.

    Returns the app's exit code: non-zero when the explorer failed (a missing stylesheet, an
    unhandled error), so a broken install does not look like a clean exit.
    """
    if web:
        serve_app(kg=kg, model=model, db=db)
        return 0
    app = make_app(kg=kg, model=model, db=db)
    app.run()
    return app.return_code or 0


def serve_app(
    kg: str | None = None,
    model: str | None = None,
    db: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    """The same app in a browser: textual-serve runs `kontest` with the same options for each
    tab, behind a per-launch token and an Origin check (`tui/web.py`)."""
    import shlex
    import sys

    from kontest_tui.tui.web import serve

    command = [sys.executable, "-m", "kontest_tui.cli"]
    for option, value in (("--kg", kg), ("--model", model), ("--db", db)):
        if value:
            command += [option, value]
    serve(shlex.join(command), host=host, port=port)
