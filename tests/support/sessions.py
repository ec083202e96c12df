"""Stored sessions made by the engine for tests that open them (compare, ensemble)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from kontest_tui.domain.records import TestKind
from kontest_tui.kg.io import load_graph
from kontest_tui.run.api import SessionSpec, create_session
from kontest_tui.run.session import open_session_model, run_session
from kontest_tui.store import Store


def store_sessions(
    db: str,
    runs: Sequence[tuple[str, int | None]],
    kg_name: str = "places",
    kinds: Sequence[TestKind] = (TestKind.KONTEST,),
) -> list[str]:
    """Run each (simulated model spec, relation limit) on a sample with `kinds` of
    questions, each session stored in `db`; their ids, in order."""

    async def run_all() -> list[str]:
        kg = load_graph(kg_name)
        ids = []
        for spec, limit in runs:
            with Store(db) as store:
                session_id = create_session(
                    store, SessionSpec(kg, model=spec, kg_name=kg_name, limit=limit, kinds=kinds)
                )
                model = open_session_model(spec, kg)
                try:
                    await run_session(store, session_id, model)
                finally:
                    await model.aclose()
            ids.append(session_id)
        return ids

    return asyncio.run(run_all())


# Every test kind's errors on a small scope (checked: sim:forgetful on the first 20 places
# relations makes errors of each KONTEST oracle, variants, fact checks and logic rules).
EVERY_KIND = ("kontest", "variant", "factcheck", "logic")
ANNOTATED = (
    '{"question": "is ireland part of the united kingdom", "answer": false, "passage": "p"}\n'
    '{"question": "does ulster have a coastline", "answer": true, "passage": "p"}\n'
)
ANNOTATION_REPLIES = (
    '{"query": "is ireland part of the united kingdom", "answer": "Yes."}\n'
    '{"query": "does ulster have a coastline", "answer": "Yes."}\n'
)


def store_every_kind(
    db: str, folder: Path, models: Sequence[str] = ("sim:forgetful",)
) -> list[str]:
    """Through `kontest run`: per model, a session of every test kind on the places sample
    (20 relations, fresh conversations, 4 variants a question), then one annotated-questions
    session (a replayed wrong answer: one annotation error). Their ids, in that order."""
    from kontest_tui.cli import run_cli

    for model in models:
        code = run_cli(
            [
                "--db",
                db,
                "run",
                "--kg",
                "places",
                "--model",
                model,
                "--limit",
                "20",
                "--kind",
                ",".join(EVERY_KIND),
                "--fresh-conversations",
                "--variant-limit",
                "4",
                # 32 in flight: a model's waits (sim:flaky's retries and slow first bytes)
                # overlap; the simulated answers are the same at any concurrency
                "--concurrency",
                "32",
                "--quiet",
            ]
        )
        assert code == 0, model
    questions, replies = folder / "questions.jsonl", folder / "replies.jsonl"
    questions.write_text(ANNOTATED, encoding="utf-8")
    replies.write_text(ANNOTATION_REPLIES, encoding="utf-8")
    code = run_cli(
        [
            "--db",
            db,
            "run",
            "--questions",
            str(questions),
            "--variant-limit",
            "1",
            "--model",
            f"replay:{replies}",
            "-q",
        ]
    )
    assert code == 0
    with Store(db) as store:
        return store.sessions.ids()
