"""Read stored sessions for `kontest compare`: which sessions, their settings, reports,
errors, timing and variant answers.

`stored_comparison(store, ids, kg, allow_differences=False)` gives the compare JSON;
`comparison_entries(...)` its inputs: it picks the sessions (the ids
given, else every finished session on the KG given or on the latest session's KG: a KG is
known by its name, not the path it was read from), refuses sessions of other scopes
(results.settings.scope_differences: KG, graph, depth, per-path mode, relations;
`ScopeDiffersError`) or whose settings differ (results.settings: templates, system prompt,
temperature, max tokens, seeds, kinds and their options, sampling, conversation mode;
`SettingsDifferError`) unless `allow_differences`, one line per difference with every value.
Without ids, the sessions of another scope or settings than the latest are left out instead
(`LeftOut`, listed above the tables) and one session alone is "nothing to compare". It reads
each session's stored report (results.reports.current_report: what `kontest report --format
json` prints, evaluated in memory only when stale; nothing is written), its errors and
variant verdicts, its timing and variant answers, each one indexed query (store.relations,
store.responses, store.verdicts). Nothing here evaluates a whole session when its report is
current.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import VariantExtras
from kontest_tui.errors import InvalidInputError, KontestError
from kontest_tui.kinds.registry import KINDS, array_kinds
from kontest_tui.redact import scrub
from kontest_tui.report.compare_json import CompareJSON, LeftOutJSON, SessionTiming
from kontest_tui.report.compare_many import CompareEntry, build_comparison
from kontest_tui.report.compare_variants import VARIANT_ORACLES
from kontest_tui.results.evaluate import evaluate_session
from kontest_tui.results.reports import current_report
from kontest_tui.results.settings import (
    Difference,
    identity,
    scope_differences,
    session_scope,
    session_settings,
    setting_differences,
)
from kontest_tui.store.database import Store
from kontest_tui.store.records import template_set_from_dict


class DifferencesError(InvalidInputError):
    """Sessions that differ where a comparison needs them alike: a head line, then one line
    per difference (`lines`, what the CLI prints; the message joins them on one line)."""

    def __init__(self, head: str, differences: Sequence[Difference]) -> None:
        self.differences = list(differences)
        super().__init__(" ".join([head, *(d.describe() + ";" for d in self.differences)]))
        self.lines = [
            scrub(" ".join(line.split()))
            for line in (head, *(difference.describe() for difference in self.differences))
        ]


class SettingsDifferError(DifferencesError):
    """Sessions asked with different settings: comparing their numbers would mislead."""

    def __init__(self, differences: Sequence[Difference]) -> None:
        count = len(differences)
        super().__init__(
            f"the sessions' settings differ in {count} way{'s' if count != 1 else ''} "
            "(compare them anyway with --allow-differences):",
            differences,
        )


class ScopeDiffersError(DifferencesError):
    """Sessions that asked other relations (another KG, part of it, depth, per-path mode or
    number of relations): their numbers are not about the same facts."""

    def __init__(self, differences: Sequence[Difference]) -> None:
        super().__init__(
            "the sessions asked about other relations (compare sessions of one KG, entity, "
            "depth and size):",
            differences,
        )


class NothingToCompareError(InvalidInputError):
    """`kontest compare` without ids found no two sessions alike: the latest session's KG
    has one session, or every other differs (one line each, `lines`)."""

    def __init__(self, session_id: str, model: str, kg: str, left_out: Sequence[LeftOut]) -> None:
        head = f"nothing to compare: {session_id} ({model}) is the only finished session on {kg}"
        if left_out:
            head += " asked like it; the others differ:"
        else:
            head += " (run another model on it: o on the explorer's results)"
        self.lines = [scrub(head)]
        for left in left_out:  # each session, then one line per difference
            self.lines.append(scrub(f"{left.session} ({left.model}):"))
            self.lines += [scrub(f"  {d.describe()}") for d in left.differences]
        super().__init__(" ".join(self.lines))


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A session `kontest compare` without ids did not compare, and why (its differences
    from the latest session's scope or settings)."""

    session: str
    model: str
    differences: tuple[Difference, ...]

    def describe(self) -> str:
        """`S3 (sim:careful): depth: 2 (S1) vs 1 (S3); seed: 0 (S1) vs 3 (S3)`."""
        return f"{self.session} ({self.model}): " + "; ".join(
            difference.describe() for difference in self.differences
        )

    def to_json(self) -> LeftOutJSON:
        return {
            "session": self.session,
            "model": self.model,
            "differences": [difference.to_json() for difference in self.differences],
        }


def pick_sessions(store: Store, ids: Sequence[str], kg: str | None) -> list[str]:
    """The sessions to compare: `ids` (checked), else the finished sessions on `kg` (the
    KG's name, or the name or path a session was given it by), else on the latest session's
    KG (by its name: one file read under two paths is one KG); oldest first."""
    if ids:
        for session_id in ids:
            store.sessions.get(session_id)
        if len(set(ids)) != len(ids):
            raise InvalidInputError("a session is named twice")
        return list(ids)
    rows = list(store.sessions.listing())
    if not rows:
        raise InvalidInputError(f"no session in {store.path}")
    titles = store.sessions.kg_titles()
    if kg is not None:
        # the KG's name, or a name or path a session gave it by (then the KG it names)
        names = {kg} | {titles.get(str(row["id"]), "") for row in rows if row["kg_name"] == kg}
        wanted = {
            str(row["id"])
            for row in rows
            if row["kg_name"] in names or titles.get(str(row["id"])) in names
        }
        name = kg
    else:
        name = titles.get(str(rows[-1]["id"])) or str(rows[-1]["kg_name"])
        wanted = {str(row["id"]) for row in rows if titles.get(str(row["id"])) == name}
    chosen = [str(row["id"]) for row in rows if row["id"] in wanted and row["status"] == "done"]
    if not chosen:
        known = ", ".join(sorted(set(titles.values())))
        raise InvalidInputError(f"no finished session on KG {name!r} (sessions are on: {known})")
    return chosen


def session_timing(store: Store, session_id: str) -> SessionTiming:
    """Calls made (attempts, retries included), answers, reused answers, wall time, tokens of
    the calls made (never of reused answers; None when none reported), time per call, mean
    latency of the model's answers and their seconds per kind of conversation (KONTEST
    Table 14)."""
    row = store.sessions.get(session_id)
    sums = store.responses.timing(session_id)
    seconds = store.responses.answer_seconds(session_id)
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
        atomic_s=round(seconds["atomic"], 3),
        sequential_s=round(seconds["sequential"], 3),
        other_s=round(seconds["other"], 3),
    )


def comparison_entries(
    store: Store, ids: Sequence[str], kg: str | None = None, *, allow_differences: bool = False
) -> tuple[list[CompareEntry], list[Difference], list[LeftOut]]:
    """One CompareEntry per chosen session, the settings that differ between them and the
    sessions left out (see the module docstring)."""
    chosen = pick_sessions(store, ids, kg)
    rows = {session_id: store.sessions.get(session_id) for session_id in chosen}
    scopes = {
        session_id: session_scope(
            row, store.sessions.kg_snapshot(session_id), store.relations.ids(session_id)
        )
        for session_id, row in rows.items()
    }
    left_out: list[LeftOut] = []
    if ids:
        if len(chosen) < 2:
            raise InvalidInputError("nothing to compare: give two or more sessions")
        scope = scope_differences(list(scopes.items()))
        if scope:
            raise ScopeDiffersError(scope)
    else:
        chosen, left_out = _one_group(chosen, rows, scopes, allow_differences)
    differences = setting_differences([rows[session_id] for session_id in chosen])
    if differences and not allow_differences:
        raise SettingsDifferError(differences)
    entries = [_read_entry(store, session_id) for session_id in chosen]
    return entries, differences, left_out


def _one_group(
    chosen: Sequence[str],
    rows: Mapping[str, Mapping[str, object]],
    scopes: Mapping[str, Mapping[str, object]],
    allow_differences: bool,
) -> tuple[list[str], list[LeftOut]]:
    """The largest group of sessions alike in scope (and settings, unless
    `allow_differences`), the latest session's on a tie, and the others left out with how
    each differs from the group's latest session. NothingToCompareError when no two are alike."""
    groups: dict[str, list[str]] = {}
    for session_id in chosen:
        key = identity(scopes[session_id])
        if not allow_differences:
            key += identity(session_settings(rows[session_id]))
        groups.setdefault(key, []).append(session_id)
    # the largest group; of equal ones, the one with the latest session
    kept = max(groups.values(), key=lambda group: (len(group), chosen.index(group[-1])))
    reference = kept[-1]
    left_out = []
    for session_id in chosen:
        if session_id in kept:
            continue
        pair = [(reference, scopes[reference]), (session_id, scopes[session_id])]
        differences = scope_differences(pair)
        if not allow_differences:
            differences += setting_differences([rows[reference], rows[session_id]])
        model = str(rows[session_id].get("model") or "")
        left_out.append(LeftOut(session_id, model, tuple(differences)))
    if len(kept) < 2:
        model = str(rows[reference].get("model") or "")
        raise NothingToCompareError(reference, model, str(scopes[reference]["KG"]), left_out)
    return kept, left_out


def _read_entry(store: Store, session_id: str) -> CompareEntry:
    """One session's entry from the store: its report, error and variant verdicts, timing and
    variant answers (its stored verdicts when its report is current, else an evaluation)."""
    timing = session_timing(store, session_id)
    report = current_report(store, session_id)
    if report is not None:
        entry = CompareEntry(session_id, report, timing)
        entry.verdicts = store.verdicts.errors_and_all_of(session_id, VARIANT_ORACLES)
    else:
        evaluation = evaluate_session(store, session_id)
        entry = CompareEntry(session_id, evaluation.to_json(), timing)
        entry.verdicts = [v for v in evaluation.verdicts if v.error or v.oracle in VARIANT_ORACLES]
    variant_kinds = sorted(array_kinds(KINDS))  # the kinds asked as variants
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
    entries, differences, left_out = comparison_entries(
        store, ids, kg, allow_differences=allow_differences
    )
    texts: dict[str, str] = {}
    for entry in entries:  # the first session's text of a template id wins
        for template_id, text in template_texts(store, entry.session).items():
            texts.setdefault(template_id, text)
    left = [item.to_json() for item in left_out]
    return build_comparison(entries, differences, left, templates=texts)


def template_texts(store: Store, session_id: str) -> dict[str, str]:
    """The texts of the templates a session asked, by id ({} when its set is unreadable)."""
    row = store.sessions.get(session_id)
    try:
        template_set = template_set_from_dict(row["templates_json"], f"session {session_id}")
    except KontestError:
        return {}
    asked = set(row["template_ids"])
    return {
        template.id: clean_text(template.text)
        for template in template_set.templates
        if template.id in asked
    }
