"""Explorer benchmark: launch, and the explorer over stored sessions of 1k, 15k and 100k relations.

1. Launch: a fresh `python` process imports the app and runs it headless until the start
   screen is mounted and painted (interpreter start included). Target < 1.5 s.
2. Per size (a headless pilot, `App.run_test`), on a DB holding one session run by the engine
   (run.api.start_session with `sim`, as `kontest run` does) on a synthetic places KG: 1k
   (5 countries of 228 relations), 15k (one country at depth 3 as Wikidata has them: 20
   regions, 400 districts, 4,800 places = 15,220 relations) and 100k (439 countries):
   - start: the start screen's sessions list read again and shown (target < 0.5 s);
   - open: pushing the results screen to its report and tree shown (target < 1 s at 100k);
   - n, p: the next / previous error selected in the graph with its detail (target < 100 ms);
   - f: the errors-only tree shown with the node selected before still selected (and back;
     `f` keeps the node, checked at every run);
   - expand: a collapsed node's children read and shown (target < 100 ms);
   - find: `/`, a place's label, enter: until the first match is selected in the tree, the way
     down to it read and opened (target < 200 ms at 100k); typo: the same label
     with two letters swapped (no name holds it: every name compared fuzzily);
   - filter: an Errors filter chosen (template t1) until its list is counted and its first
     page shown (target < 200 ms).
   The last lines say which targets the medians met.
   Each figure is the time until the explorer has done it (a stamp taken when the method that
   shows it returns, so the pilot's polling is not counted; the paint follows within a
   frame), the median of --runs. The sessions are built once into cached DBs
   (--cache, default the temp dir's kontest-bench-tui/), so the benchmark is rerunnable;
   --rebuild builds them again. A measurement is a function `measure_*(pilot, ...)`; a
   column is added by adding one to MEASURES.
3. Run (`--runs-of-run N` times per size, 0 to skip): the same KG written to a file, run by
   `kontest run --kg FILE --model sim` and by the explorer (`kontest --kg FILE --model sim`,
   a headless pilot: ctrl+r once the wizard has prepared), each in a fresh process and DB,
   in turn. Printed: the command line's run time (its `run_cli` call: load, store, ask,
   evaluate, report), the explorer's run time (ctrl+r to the run's end and final report
   drawn on the live screen; its wizard's preparation before it is not counted, as the
   command line's imports are not) and to its results screen shown (the stored report and
   the tree's first level), the peak RSS of each process (wait4), and the explorer's ratios
   to the command line. Targets: run time <= 1.3x, peak RSS <= 1.5x.
Run: .venv/bin/python benchmarks/tui.py [--runs 5] [--sizes 1k,15k,100k] [--no-launch]
     [--runs-of-run 3] [--no-views]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LAUNCH_CHILD = """
import sys, time
started = float(sys.argv[1])
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.start import StartScreen

async def auto_pilot(pilot):
    while not isinstance(pilot.app.screen, StartScreen):
        await pilot.pause(0.001)
    await pilot.pause()
    print(f"{time.time() - started:.4f}")
    pilot.app.exit()

make_app(db=sys.argv[2]).run(headless=True, size=(100, 32), auto_pilot=auto_pilot)
"""


def time_launch(runs: int = 5) -> list[float]:
    """Seconds from spawning the process to the painted start screen."""
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "KONTEST_HOME": tmp}
        for _ in range(runs):
            started = time.time()
            done = subprocess.run(
                [sys.executable, "-c", LAUNCH_CHILD, str(started), str(Path(tmp) / "s.db")],
                capture_output=True,
                text=True,
                env=env,
                cwd=ROOT,
                timeout=60,
                check=True,
            )
            figures.append(float(done.stdout.strip().splitlines()[-1]))
    return figures


SIZES = {"1k": 1_000, "15k": 15_220, "100k": 100_000}
TARGETS = {
    "start": "< 0.5 s",
    "open": "< 1 s",
    "n": "< 100 ms",
    "p": "< 100 ms",
    "f": "keeps the node",
    "expand": "< 100 ms",
    "find": "< 200 ms",
    "typo": "< 200 ms",
    "filter": "< 200 ms",
}
LIMITS_S = {  # the targets in seconds (f's is that the node stays selected)
    "start": 0.5,
    "open": 1.0,
    "n": 0.1,
    "p": 0.1,
    "expand": 0.1,
    "find": 0.2,
    "typo": 0.2,
    "filter": 0.2,
}
KEPT: list[bool] = []  # per `f`: whether the node selected before it was selected after it


def size_graph(size: str):  # noqa: ANN201
    """The KG of one size (benchmarks/synthetic_kg.py)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from synthetic_kg import country_graph, synthetic_graph

    return country_graph() if size == "15k" else synthetic_graph(SIZES[size])


def build_db(size: str, cache: Path, rebuild: bool = False) -> tuple[Path, str, float]:
    """The cached DB of one size (run by the engine when missing) and its session id; the
    seconds spent building it (0 when cached). A stale stored report (other evaluating
    code) is evaluated and stored again here, untimed."""
    from kontest_tui.results.evaluate import evaluation_engine
    from kontest_tui.results.reports import ensure_report
    from kontest_tui.run.api import SessionSpec, start_session
    from kontest_tui.store import Store

    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"tui-{size}.db"
    if rebuild:
        for stale in cache.glob(f"tui-{size}.db*"):
            stale.unlink()
    started = time.perf_counter()
    built = 0.0
    with Store(path) as store:
        session_id = store.sessions.latest()
        if session_id is None:
            outcome = asyncio.run(start_session(store, SessionSpec(size_graph(size), model="sim")))
            session_id = outcome.session_id
            built = time.perf_counter() - started
        ensure_report(store, session_id, errors=0)
        store.views.ensure(session_id, evaluation_engine())
    return path, session_id, built


STAMPS: dict[str, float] = {}  # what the explorer just finished -> when (perf_counter)


def stamp_when_done() -> None:
    """Record when the explorer has done what a measure waits for (the last call of each
    method below), so a figure is the explorer's time, not the pilot's polling."""
    from kontest_tui.tui.screens.start import StartScreen
    from kontest_tui.tui.widgets.relation_tree import RelationTree

    def stamped(owner, name: str, key: str, done=lambda result: True) -> None:  # noqa: ANN001
        method = getattr(owner, name)

        def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            result = method(*args, **kwargs)
            if done(result):
                STAMPS[key] = time.perf_counter()
            return result

        setattr(owner, name, wrapper)

    from kontest_tui.tui.widgets.paged_table import PagedTable

    stamped(StartScreen, "show_sessions", "start")
    stamped(PagedTable, "add_page", "page")
    stamped(RelationTree, "reveal", "reveal", lambda line: line is not None)
    stamped(RelationTree, "show_roots", "roots")
    stamped(RelationTree, "add_children", "children")


async def until(pilot, key: str, started: float, timeout: float = 120.0) -> float:  # noqa: ANN001
    """Seconds from `started` to the explorer's stamp `key` (waited for)."""
    deadline = time.perf_counter() + timeout
    while STAMPS.get(key, 0.0) < started:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"the explorer never did {key}")
        await pilot.pause(0.002)
    return STAMPS[key] - started


async def measure_start(pilot, session_id: str) -> float:  # noqa: ANN001
    """The start screen's list read again (one summaries query in a worker) and shown."""
    from kontest_tui.tui.screens.start import StartScreen

    screen = StartScreen()
    await pilot.app.push_screen(screen)
    await until(pilot, "start", 0.0)
    started = time.perf_counter()
    screen.action_refresh()
    elapsed = await until(pilot, "start", started)
    pilot.app.pop_screen()
    await pilot.pause()
    return elapsed


def forget_place(db: str, session_id: str) -> None:
    """The results of the session reopen at the top (the place the last run left is
    forgotten: reopening there would read the way to it, which `find` then finds read)."""
    from kontest_tui.store import Store

    with Store(db) as store, store.transaction() as conn:
        conn.execute("DELETE FROM session_places WHERE session = ?", (session_id,))


async def measure_open(pilot, session_id: str) -> float:  # noqa: ANN001
    """Pushing the results screen until its report and tree are shown (it stays open)."""
    from kontest_tui.tui.screens.results import ResultsScreen

    while isinstance(pilot.app.screen, ResultsScreen):
        pilot.app.pop_screen()
        await pilot.pause()
    forget_place(pilot.app.db_path, session_id)  # open at the top, nothing read below it
    started = time.perf_counter()
    await pilot.app.push_screen(ResultsScreen(session_id))
    elapsed = await until(pilot, "roots", started)  # the report, then the tree shown
    await pilot.pause()
    return elapsed


async def measure_n(pilot, session_id: str) -> float:  # noqa: ANN001
    """`n`: the next error (the clearest first) selected, the way to it opened."""
    started = time.perf_counter()
    await pilot.press("n")
    return await until(pilot, "reveal", started)


async def measure_p(pilot, session_id: str) -> float:  # noqa: ANN001
    """`p`: the previous error selected."""
    started = time.perf_counter()
    await pilot.press("p")
    return await until(pilot, "reveal", started)


async def measure_f(pilot, session_id: str) -> float:  # noqa: ANN001
    """`f`: the errors-only tree shown and the node selected before (an error's, by `n`)
    selected again (then `f` again, untimed). Whether it was is kept in KEPT."""
    tree = pilot.app.screen.query_one("#relation-tree")
    before = tree.cursor_node.data.node if tree.cursor_node and tree.cursor_node.data else None
    started = time.perf_counter()
    await pilot.press("f")
    await until(pilot, "roots", started)
    elapsed = await until(pilot, "reveal", started)
    line = tree.cursor_node
    KEPT.append(before is not None and line is not None and line.data.node == before)
    again = time.perf_counter()
    await pilot.press("f")
    await until(pilot, "roots", again)
    await until(pilot, "reveal", again)
    return elapsed


async def measure_expand(pilot, session_id: str) -> float:  # noqa: ANN001
    """A collapsed node whose children are not read yet: opened until they are shown."""
    tree = pilot.app.screen.query_one("#relation-tree")
    stack = list(tree.root.children)
    line = None
    while stack:
        candidate = stack.pop(0)
        if candidate.allow_expand and not candidate.children:
            line = candidate
            break
        stack.extend(candidate.children)
    if line is None:
        raise RuntimeError("no collapsed node left to open")
    started = time.perf_counter()
    line.expand()
    return await until(pilot, "children", started)


def deep_label(db: Path, session_id: str, back: int = 0) -> str:
    """The label of the node `back` places before the last of the tree (a place in one of
    the last countries): the way down to it is not read when the results open."""
    from kontest_tui.store import Store

    with Store(db) as store:
        rows = store.conn.execute(
            "SELECT label FROM result_nodes WHERE session = ? ORDER BY preorder DESC"
            " LIMIT 1 OFFSET ?",
            (session_id, back),
        ).fetchall()
    return str(rows[0][0])


async def measure_find(pilot, session_id: str, typo: bool = False) -> float:  # noqa: ANN001
    """`/`, a deep place's label (`typo`: two of its letters swapped), enter: until the
    first match is selected in the tree (the find cleared after, untimed)."""
    screen = pilot.app.screen
    await pilot.press("slash")
    text = FIND_TEXT[(session_id, typo)]  # two nodes: neither's way read by the other
    screen.query_one("#find-input").value = text[1] + text[0] + text[2:] if typo else text
    started = time.perf_counter()
    await pilot.press("enter")
    elapsed = await until(pilot, "reveal", started)
    await pilot.press("escape")
    return elapsed


async def measure_filter(pilot, session_id: str) -> float:  # noqa: ANN001
    """An Errors filter chosen (template t1): its list counted and the first page shown
    (then every template again, untimed). The tab is built untimed the first time."""
    screen = pilot.app.screen
    if not screen.query("#error-template"):
        shown = time.perf_counter()
        screen.action_show_tab("tab-errors")
        while not screen.query("#error-template"):
            await pilot.pause(0.01)
        await until(pilot, "page", shown)
    choice = screen.query_one("#error-template")
    started = time.perf_counter()
    choice.value = "t1"
    elapsed = await until(pilot, "page", started)
    again = time.perf_counter()
    choice.value = "all"
    await until(pilot, "page", again)
    screen.action_show_tab("tab-graph")
    await pilot.pause()
    return elapsed


FIND_TEXT: dict[tuple[str, bool], str] = {}  # (session, typo) -> the label looked for

MEASURES = {
    "start": measure_start,
    "open": measure_open,
    "n": measure_n,
    "p": measure_p,
    "f": measure_f,
    "expand": measure_expand,
    "find": measure_find,
    "typo": lambda pilot, session_id: measure_find(pilot, session_id, typo=True),
    "filter": measure_filter,
}


async def measure_size(db: Path, session_id: str, runs: int) -> dict[str, list[float]]:
    """Every measure `runs` times on one DB (in one headless app)."""
    from kontest_tui.tui.app import make_app

    stamp_when_done()
    FIND_TEXT[session_id, False] = deep_label(db, session_id)
    FIND_TEXT[session_id, True] = deep_label(db, session_id, back=100)
    figures: dict[str, list[float]] = {name: [] for name in MEASURES}
    app = make_app(db=str(db))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.2)
        for _ in range(runs):
            for name, measure in MEASURES.items():
                figures[name].append(await measure(pilot, session_id))
    return figures


CLI_CHILD = """
import sys, time
from kontest_tui.cli import run_cli
started = time.perf_counter()
code = run_cli(["run", "--kg", sys.argv[1], "--model", "sim", "--db", sys.argv[2], "--quiet"])
print(f"RUN {time.perf_counter() - started:.4f}", file=sys.stderr)
sys.exit(code)
"""

EXPLORER_CHILD = """
import asyncio, sys, time
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen

ended = []
stop_clock = LiveRunScreen.stop_clock

def stopped(screen):  # the run is over (its RunEnded handled): stamp it
    ended.append(time.perf_counter())
    stop_clock(screen)

LiveRunScreen.stop_clock = stopped

async def auto_pilot(pilot):
    app = pilot.app
    while not (isinstance(app.screen, WizardScreen) and app.screen.state.run_state()[0]):
        await pilot.pause(0.01)
    await pilot.pause()
    started = time.perf_counter()
    await pilot.press("ctrl+r")
    # Polled with a plain sleep: pilot.pause() redraws the screen each time it returns, which
    # would load the explorer (and so its run) with hundreds of redraws a second.
    while not (isinstance(app.screen, ResultsScreen) and app.screen.ready):
        await asyncio.sleep(0.005)
    done = time.perf_counter()
    print(f"RUN {ended[0] - started:.4f}", file=sys.stderr)
    print(f"RESULTS {done - started:.4f}", file=sys.stderr)
    app.exit()

make_app(kg=sys.argv[1], model="sim", db=sys.argv[2]).run(
    headless=True, size=(120, 36), auto_pilot=auto_pilot
)
"""


def run_child(code: str, kg: Path, db: Path) -> tuple[float, float, float]:
    """(run seconds, seconds to the results (the run's when none), peak RSS in MB) of one
    fresh process: what it printed, and wait4's figure."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    process = subprocess.Popen(
        [sys.executable, "-c", code, str(kg), str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=os.environ.copy(),
    )
    assert process.stderr is not None
    err = process.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    said = {
        line.split()[0]: float(line.split()[1])
        for line in err.splitlines()
        if line.startswith(("RUN ", "RESULTS "))
    }
    if process.returncode != 0 or "RUN" not in said:
        raise RuntimeError(f"the child failed ({process.returncode}): {err[-2000:]}")
    return said["RUN"], said.get("RESULTS", said["RUN"]), usage.ru_maxrss / 1024


def measure_run(size: str, cache: Path, runs: int) -> dict[str, list[float]]:
    """The same session run by `kontest run` and by the explorer, `runs` times each, in
    turn (a fresh process and DB each time): run seconds and peak RSS of both."""
    from kontest_tui.kg.io import save_graph

    kg = cache / f"run-{size}.json"
    if not kg.exists():
        save_graph(size_graph(size), kg)
    names = ("cli", "cli_rss", "tui", "results", "tui_rss")
    figures: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(runs):
        seconds, _, rss = run_child(CLI_CHILD, kg, cache / f"run-cli-{size}.db")
        figures["cli"].append(seconds)
        figures["cli_rss"].append(rss)
        seconds, results, rss = run_child(EXPLORER_CHILD, kg, cache / f"run-tui-{size}.db")
        figures["tui"].append(seconds)
        figures["results"].append(results)
        figures["tui_rss"].append(rss)
    return figures


def describe_run(size: str, figures: dict[str, list[float]]) -> str:
    """`15k | 6.41 s | 7.02 s | 1.10x | 7.30 s | 1.14x | 199 MB | 260 MB | 1.31x` (medians;
    the ratio of the medians of the same runs)."""
    median = {name: statistics.median(values) for name, values in figures.items()}
    cli, tui, results = median["cli"], median["tui"], median["results"]
    return (
        f"{size} | {cli:.2f} s | {tui:.2f} s | {tui / cli:.2f}x | {results:.2f} s | "
        f"{results / cli:.2f}x | {median['cli_rss']:.0f} MB | {median['tui_rss']:.0f} MB | "
        f"{median['tui_rss'] / median['cli_rss']:.2f}x"
    )


def describe(seconds: list[float], name: str) -> str:
    median = statistics.median(seconds)
    return f"{median:.2f} s" if name in ("start", "open") else f"{median * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each measure")
    parser.add_argument("--sizes", default="1k,15k,100k", help="of 1k, 15k, 100k")
    parser.add_argument("--no-launch", action="store_true", help="skip the launch timing")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "kontest-bench-tui"
    )
    parser.add_argument("--rebuild", action="store_true", help="run the sessions again")
    parser.add_argument(
        "--runs-of-run", type=int, default=3, help="runs of `kontest run` and the explorer"
    )
    parser.add_argument("--no-views", action="store_true", help="skip the stored-session views")
    args = parser.parse_args()
    os.environ.setdefault("KONTEST_HOME", str(args.cache / "home"))
    if not args.no_launch:
        launch = time_launch(args.runs)
        print(
            f"launch to first screen: median {statistics.median(launch) * 1000:.0f} ms "
            f"(min {min(launch) * 1000:.0f}, max {max(launch) * 1000:.0f}; {len(launch)} runs; "
            "target < 1500 ms)"
        )
    if args.runs_of_run:
        print(f"load: {os.getloadavg()[0]:.1f}; run: medians of {args.runs_of_run} runs")
        print(
            "size | kontest run | explorer run | ratio | to results | ratio | "
            "CLI peak RSS | explorer | ratio"
        )
        print("target | | | <= 1.3x | | | | | <= 1.5x")
        for size in args.sizes.split(","):
            print(describe_run(size, measure_run(size, args.cache, args.runs_of_run)), flush=True)
    if args.no_views:
        return
    print(f"load: {os.getloadavg()[0]:.1f}; medians of {args.runs} runs")
    rows = []
    for size in args.sizes.split(","):
        db, session_id, built = build_db(size, args.cache, args.rebuild)
        if built:
            print(f"{size}: session {session_id} run and stored in {built:.1f} s ({db})")
        figures = asyncio.run(measure_size(db, session_id, args.runs))
        rows.append(
            (
                size,
                {name: describe(values, name) for name, values in figures.items()},
                {name: statistics.median(values) for name, values in figures.items()},
            )
        )
    names = list(MEASURES)
    print(" | ".join(["size", *names]))
    print(" | ".join(["target", *(TARGETS.get(name, "-") for name in names)]))
    for size, cells, _medians in rows:
        print(" | ".join([size, *(cells[name] for name in names)]))
    for name in names:
        if name == "f":
            verdict = "met" if KEPT and all(KEPT) else "NOT met"
            print(f"target f keeps the node: {verdict} ({sum(KEPT)} of {len(KEPT)} presses)")
            continue
        limit = LIMITS_S.get(name)
        if limit is None:
            continue
        missed = [size for size, _cells, medians in rows if medians[name] >= limit]
        verdict = "met" if not missed else f"NOT met at {', '.join(missed)}"
        print(f"target {name} {TARGETS[name]}: {verdict} (medians, sizes {args.sizes})")


if __name__ == "__main__":
    main()
