"""Read stored sessions for `report.compare`: which sessions, their reports, verdicts, timing.

`comparison_entries(store, ids, kg)` picks the sessions (the ids given, else every finished
session on the KG given or on the latest session's KG), refuses sessions on different KGs or
scopes, and evaluates each exactly as `kontest report` does (`evaluate_session`), so every
REPORT of the compare JSON equals that session's `kontest report --format json`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from kontest_tui.domain.records import TestKind
from kontest_tui.errors import InvalidInputError
from kontest_tui.report.compare import CompareEntry, check_comparable
from kontest_tui.run.session import evaluate_session
from kontest_tui.store.database import Store

VARIANT_KINDS = (TestKind.VARIANT, TestKind.ANNOTATION)


def pick_sessions(store: Store, ids: Sequence[str], kg: str | None) -> list[str]:
    """The sessions to compare: `ids` (checked), else the finished sessions on `kg` (a KG
    name as sessions record it), else on the latest session's KG; oldest first."""
    if ids:
        for session_id in ids:
            store.get_session(session_id)
        if len(set(ids)) != len(ids):
            raise InvalidInputError("a session is named twice")
        return list(ids)
    rows = list(store.iter_sessions())
    if not rows:
        raise InvalidInputError(f"no session in {store.path}")
    name = kg if kg is not None else str(rows[-1]["kg_name"])
    chosen = [str(row["id"]) for row in rows if row["kg_name"] == name and row["status"] == "done"]
    if not chosen:
        known = ", ".join(sorted({str(row["kg_name"]) for row in rows}))
        raise InvalidInputError(f"no finished session on KG {name!r} (sessions are on: {known})")
    return chosen


def session_identity(store: Store, session_id: str) -> tuple[str, str, tuple[str, ...]]:
    """(KG name, digest of the KG snapshot, relation ids): equal for one KG and scope."""
    row = store.get_session(session_id)
    snapshot = json.dumps(row["kg_json"], sort_keys=True).encode("utf-8")
    relations = tuple(sorted(str(r["id"]) for r in store.iter_relations(session_id)))
    return str(row["kg_name"]), hashlib.sha256(snapshot).hexdigest(), relations


def session_timing(store: Store, session_id: str) -> dict[str, Any]:
    """Calls (attempts, retries included), answers, cached answers, wall time, tokens where
    the server reported them, time per call and mean latency of the model's answers."""
    row = store.get_session(session_id)
    calls = answers = cached = 0
    tokens: int | None = None
    latencies: list[float] = []
    for response in store.iter_responses(session_id):
        answers += 1
        calls += int(response["attempts"] or 0)
        if response["cached"]:
            cached += 1
        elif response["latency_ms"] is not None:
            latencies.append(float(response["latency_ms"]))
        if response["tokens"] is not None:
            tokens = (tokens or 0) + int(response["tokens"])
    wall = round(float(row.get("elapsed_s") or 0.0), 3)
    return {
        "model": row["model"],
        "calls": calls,
        "answers": answers,
        "cached": cached,
        "wall_s": wall,
        "tokens": tokens,
        "s_per_call": round(wall / calls, 6) if calls else None,
        "mean_latency_ms": round(sum(latencies) / len(latencies), 3) if latencies else None,
    }


def comparison_entries(
    store: Store, ids: Sequence[str], kg: str | None = None
) -> list[CompareEntry]:
    """One CompareEntry per chosen session (see the module docstring)."""
    chosen = pick_sessions(store, ids, kg)
    identities = [session_identity(store, session_id) for session_id in chosen]
    entries = [CompareEntry(session_id, {}) for session_id in chosen]
    check_comparable(entries, identities)
    for entry in entries:
        evaluation = evaluate_session(store, entry.session)
        entry.report = evaluation.to_json()
        entry.verdicts = evaluation.verdicts
        entry.timing = session_timing(store, entry.session)
        answers = store.load_answers(entry.session)
        for conversation in store.load_conversations(entry.session):
            if conversation.test_kind in VARIANT_KINDS and conversation.turns:
                answer = answers.get((conversation.id, 0))
                if answer is not None:
                    entry.variant_answers[conversation.id] = (
                        conversation.turns[0].text,
                        answer.value,
                    )
                row = (conversation.meta or {}).get("variant")
                if isinstance(row, int):
                    entry.variant_rows[conversation.id] = row
                if conversation.expected and conversation.expected[0] is not None:
                    entry.variant_expected[conversation.id] = conversation.expected[0].value
    return entries
