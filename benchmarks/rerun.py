"""Asking again what changed: model calls against changed questions, and the delta's delay.

On the places sample (265 relations, KONTEST t1/t2: 1,590 turns), a session is run with the
simulated model behind its HTTP server (`kontest sim serve`'s SimServer, in this process),
then template t1 is edited (saved in the user's copy of the places set, as the template
editor does) and the session asked again what changed:

1. `kontest rerun` (run.api.rerun_session): the model calls, counted by the server (the
   model's check before the run counted apart), against the plan's changed questions (its
   distinct requests: identical requests share one call); and the time from the last
   answer stored to the delta computed (results.delta.session_delta). Target: calls ==
   changed questions, the delta < 1 s after the last answer.
2. The explorer (a headless pilot): the live screen asks again (LiveRunScreen(rerun=...),
   what the template editor's Ask again opens) and shows the delta when the run ends; the
   time from the last answer stored (its `created` stamp) to the delta drawn there. Target
   < 1 s. Then `enter` opens the results on the Templates tab, which shows it again (the
   time from enter is printed too).

Each figure is the median of --runs (a fresh session database per run).
Run: .venv/bin/python benchmarks/rerun.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NEW_T1 = "Does {parent} hold {child}?"


def edit_t1() -> None:
    from kontest_tui.generate.templates import (
        save_template_set,
        template_set_for_domain,
        with_template,
    )

    places = template_set_for_domain("places")
    save_template_set(with_template(places, replace(places.get("t1"), texts={"contains": NEW_T1})))


def last_answer_at(db: Path, session_id: str) -> float:
    """When the newest answer of a session was received (its `created`), as time.time()."""
    from kontest_tui.store import Store

    with Store(db) as store:
        newest = store.conn.execute(
            "SELECT MAX(created) FROM responses WHERE session = ? AND origin IS NULL",
            (session_id,),
        ).fetchone()[0]
    return datetime.fromisoformat(newest).timestamp()


async def first_session(db: Path, model: str) -> str:
    from kontest_tui.run.api import SessionSpec, start_session
    from kontest_tui.store import Store

    with Store(db) as store:
        outcome = await start_session(store, SessionSpec("places", model=model), stream=False)
    return outcome.session_id


async def measure_engine(folder: Path) -> dict[str, float]:
    """Calls against the plan and the delta's delay, through the session API over HTTP."""
    from kontest_tui.kg.io import load_graph
    from kontest_tui.models.sim.server import SimServer
    from kontest_tui.models.specs import open_model
    from kontest_tui.run.api import RerunPlan, rerun_session, session_delta
    from kontest_tui.store import Store

    server = SimServer(kg=load_graph("places"))
    url = await server.start()
    model = f"ollama:default@{url}"
    db = folder / "engine.db"
    try:
        parent = await first_session(db, model)
        edit_t1()
        checking = server.requests
        probe = open_model(model)
        await probe.check()
        await probe.aclose()
        per_check = server.requests - checking
        plans: list[RerunPlan] = []
        before = server.requests
        with Store(db) as store:
            outcome = await rerun_session(store, parent, on_planned=plans.append, stream=False)
            delta = session_delta(store, outcome.session_id)
        done = time.time()
        calls = server.requests - before - per_check
    finally:
        await server.close()
    plan = plans[0]
    return {
        "turns": plan.turns,
        "reused": plan.reused,
        "asked": plan.asked,
        "changed": plan.requests,
        "calls": calls,
        "stored_calls": delta.calls,
        "delay": done - last_answer_at(db, outcome.session_id),
    }


async def measure_explorer(folder: Path) -> dict[str, float]:
    """The delta drawn on the live screen once it asked again, then on the results'
    Templates tab (enter)."""
    from kontest_tui.tui.app import make_app
    from kontest_tui.tui.screens.live_run import LiveRunScreen
    from kontest_tui.tui.screens.results import ResultsScreen
    from kontest_tui.tui.widgets.templates_pane import TemplatesPane

    db = folder / "explorer.db"
    parent = await first_session(db, "sim")
    edit_t1()
    app = make_app(db=str(db))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        started = time.time()
        live = LiveRunScreen(rerun=parent)
        app.push_screen(live)
        while live.end is None or live.end.delta is None:
            if live.failed is not None or time.time() - started > 120:
                raise RuntimeError(f"the run did not end with a delta: {live.failed}")
            await pilot.pause(0.001)
        shown = time.time()
        child = live.end.session_id
        opening = time.time()
        await pilot.press("enter")
        while True:
            screen = app.screen
            if (
                isinstance(screen, ResultsScreen)
                and "tab-templates" in screen.built_panes
                and screen.query_one(TemplatesPane).delta_read
            ):
                break
            if time.time() - opening > 60:
                raise RuntimeError("the Templates tab did not show the delta")
            await pilot.pause(0.001)
        tab = time.time() - opening
    return {"run": shown - started, "delay": shown - last_answer_at(db, child), "tab": tab}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    engine: list[dict[str, float]] = []
    explorer: list[dict[str, float]] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["KONTEST_HOME"] = tmp  # the edited template lives in this home only
            engine.append(asyncio.run(measure_engine(Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["KONTEST_HOME"] = tmp
            explorer.append(asyncio.run(measure_explorer(Path(tmp))))
    first = engine[0]
    print(f"places, t1 edited to {NEW_T1!r}; median of {args.runs} runs")
    print(
        f"  turns {first['turns']:.0f}: reused {first['reused']:.0f}, asked {first['asked']:.0f}"
        f"; changed questions (distinct requests) {first['changed']:.0f}"
    )
    calls = [run["calls"] for run in engine]
    met = all(run["calls"] == run["changed"] == run["stored_calls"] for run in engine)
    print(
        f"  model calls over HTTP: {', '.join(f'{c:.0f}' for c in calls)}"
        f" (stored with the session: {first['stored_calls']:.0f})"
        f"  target calls == changed questions: {'met' if met else 'NOT MET'}"
    )
    delay = statistics.median(run["delay"] for run in engine)
    print(
        f"  kontest rerun: delta computed {1000 * delay:.0f} ms after the last answer"
        f"  target < 1 s: {'met' if delay < 1 else 'NOT MET'}"
    )
    delay = statistics.median(run["delay"] for run in explorer)
    run_s = statistics.median(run["run"] for run in explorer)
    tab = statistics.median(run["tab"] for run in explorer)
    print(
        f"  explorer: delta shown on the live screen {1000 * delay:.0f} ms after the last"
        f" answer (the whole ask-again {run_s:.2f} s)  target < 1 s: "
        f"{'met' if delay < 1 else 'NOT MET'}"
    )
    print(f"  explorer: enter to the delta on the results' Templates tab {1000 * tab:.0f} ms")


if __name__ == "__main__":
    main()
