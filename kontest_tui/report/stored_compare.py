"""Read stored sessions for `kontest compare`: which sessions, their settings, reports,
errors, timing and variant answers.

`stored_comparison(store, ids, kg, allow_differences=False)` gives the compare JSON;
`comparison_entries(...)` its inputs: it picks the sessions (the ids
given, else every finished session on the KG given or on the latest session's KG), refuses
sessions on different KGs or scopes, refuses sessions whose settings differ
(results.settings: templates, system prompt, temperature, max tokens, kinds and their
options, sampling, conversation mode; `SettingsDifferError`, one line per difference) unless
`allow_differences`, and reads each session's stored report (results.reports.current_report:
what `kontest report --format json` prints, evaluated in memory only when stale; nothing is
written), its errors and variant verdicts, its timing and variant answers, each one indexed
query (store.relations, store.responses, store.verdicts). Nothing here evaluates a whole session when its report is current.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from kontest_tui.domain.extras import VariantExtras
from kontest_tui.domain.records import TestKind
from kontest_tui.errors import InvalidInputError
from kontest_tui.redact import scrub
from kontest_tui.report.compare_json import CompareJSON, SessionTiming
from kontest_tui.report.compare_many import (
    CompareEntry,
    build_comparison,
    check_comparable,
)
from kontest_tui.report.compare_variants import VARIANT_ORACLES
from kontest_tui.results.evaluate import evaluate_session
from kontest_tui.results.reports import current_report
from kontest_tui.results.settings import Difference, setting_differences
from kontest_tui.store.database import Store

VARIANT_KINDS = (TestKind.VARIANT, TestKind.ANNOTATION)


class SettingsDifferError(InvalidInputError):
    """Sessions asked with different settings: comparing their numbers would mislead."""

    def __init__(self, differences: Sequence[Difference]) -> None:
        self.differences = list(differences)
        head = (
            f"the sessions' settings differ in {len(self.differences)} way"
            f"{'s' if len(self.differences) != 1 else ''} (compare them anyway with "
            "--allow-differences):"
        )
        super().__init__(" ".join([head, *(d.describe() + ";" for d in self.differences)]))
        # What the CLI prints: one line each (the message itself is one line, as every error's)
        self.lines = [
            scrub(" ".join(line.split()))
            for line in (head, *(difference.describe() for difference in self.differences))
        ]


def pick_sessions(store: Store, ids: Sequence[str], kg: str | None) -> list[str]:
    """The sessions to compare: `ids` (checked), else the finished sessions on `kg` (a KG
    name as sessions record it), else on the latest session's KG; oldest first."""
    if ids:
        for session_id in ids:
            store.sessions.get(session_id)
        if len(set(ids)) != len(ids):
            raise InvalidInputError("a session is named twice")
        return list(ids)
    rows = list(store.sessions.listing())
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
    row = store.sessions.get(session_id)
    kg = store.sessions.kg_snapshot(session_id)
    snapshot = json.dumps(kg, sort_keys=True).encode("utf-8")
    relations = tuple(sorted(store.relations.ids(session_id)))
    return str(row["kg_name"]), hashlib.sha256(snapshot).hexdigest(), relations


def session_timing(store: Store, session_id: str) -> SessionTiming:
    """Calls made (attempts, retries included), answers, reused answers, wall time, tokens of
    the calls made (never of reused answers; None when none reported), time per call and mean
    latency of the model's answers (KONTEST Table 14)."""
    row = store.sessions.get(session_id)
    sums = store.responses.timing(session_id)
    wall = round(float(row.get("elapsed_s") or 0.0), 3)
    return SessionTiming(
        model=row["model"],
        calls=sums.calls,
        answers=sums.answers,
        cached=sums.cached,
        wall_s=wall,
        tokens=sums.tokens,
        s_per_call=round(wall / sums.calls, 6) if sums.calls else None,
        mean_latency_ms=sums.mean_latency_ms,
    )


def comparison_entries(
    store: Store, ids: Sequence[str], kg: str | None = None, *, allow_differences: bool = False
) -> tuple[list[CompareEntry], list[Difference]]:
    """One CompareEntry per chosen session and the settings that differ (see the module
    docstring)."""
    chosen = pick_sessions(store, ids, kg)
    identities = [session_identity(store, session_id) for session_id in chosen]
    check_comparable(chosen, identities)
    differences = setting_differences([store.sessions.get(session_id) for session_id in chosen])
    if differences and not allow_differences:
        raise SettingsDifferError(differences)
    return [_read_entry(store, session_id) for session_id in chosen], differences


def _read_entry(store: Store, session_id: str) -> CompareEntry:
    """One session's entry from the store: its report, error and variant verdicts, timing and
    variant answers (its stored verdicts when its report is current, else an evaluation)."""
    report = current_report(store, session_id)
    timing = session_timing(store, session_id)
    if report is not None:
        entry = CompareEntry(session_id, report, timing)
        entry.verdicts = store.verdicts.errors_and_all_of(session_id, VARIANT_ORACLES)
    else:
        evaluation = evaluate_session(store, session_id)
        entry = CompareEntry(session_id, evaluation.to_json(), timing)
        entry.verdicts = [v for v in evaluation.verdicts if v.error or v.oracle in VARIANT_ORACLES]
    variant_kinds = [kind.value for kind in VARIANT_KINDS]
    for found in store.relations.first_answers(session_id, variant_kinds):
        if found.answer is not None:
            entry.variant_answers[found.conversation] = (found.question, found.answer)
        if isinstance(found.extras, VariantExtras):
            entry.variant_rows[found.conversation] = found.extras.variant
        if found.expected is not None:
            entry.variant_expected[found.conversation] = found.expected
    return entry


def stored_comparison(
    store: Store, ids: Sequence[str], kg: str | None = None, *, allow_differences: bool = False
) -> CompareJSON:
    """The compare JSON of stored sessions (`kontest compare`, the explorer's Compare
    tables): `build_comparison` over `comparison_entries`."""
    entries, differences = comparison_entries(store, ids, kg, allow_differences=allow_differences)
    return build_comparison(entries, differences)
