"""What changed between a session and the one asked again from it (run.rerun): the delta.

`session_delta(store, id)` compares a session with its parent (or with any session of the
same scope): the answers reused and the questions asked anew, the errors gone and the new
ones (store.verdicts.changes: an error is the same one when the same oracle compares the same
turns of the same relation and template; a variant's is known by its sentences), and the
rates before and after, each from the two stored reports (results.reports.ensure_report:
evaluated and stored first when stale), per template too (the reports' `curation` rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypedDict

from kontest_tui.errors import InvalidInputError
from kontest_tui.kg.names import NodeNames
from kontest_tui.kinds.registry import all_kinds
from kontest_tui.oracles.evaluate import ORACLES
from kontest_tui.oracles.report_json import EvidenceJSON, ReportJSON
from kontest_tui.results.evaluate import session_graph
from kontest_tui.results.reports import ensure_report
from kontest_tui.store.database import Store
from kontest_tui.store.verdicts import ChangedError, ErrorChanges

ERRORS_LISTED = 20  # errors gone and new listed (the counts are of all)


class RatioJSON(TypedDict):
    count: int
    of: int
    rate: float | None


class RateChangeJSON(TypedDict):
    measure: str
    before: RatioJSON
    after: RatioJSON


class ChangedErrorJSON(TypedDict):
    oracle: str
    relation: str
    parent: str
    child: str
    template: str | None
    detail: str


class DeltaJSON(TypedDict):
    """The delta as `kontest rerun --format json` prints it (under `delta`)."""

    before: str
    after: str
    reused: int
    asked: int
    calls: int
    errors: dict[str, int]
    gone: list[ChangedErrorJSON]
    new: list[ChangedErrorJSON]
    rates: list[RateChangeJSON]


@dataclass(frozen=True, slots=True)
class Ratio:
    """`count` of `of` (a rate when `of` is not 0)."""

    count: int
    of: int

    @property
    def rate(self) -> float | None:
        return self.count / self.of if self.of else None

    def to_json(self) -> RatioJSON:
        rate = self.rate
        return RatioJSON(
            count=self.count, of=self.of, rate=None if rate is None else round(rate, 6)
        )


@dataclass(frozen=True, slots=True)
class RateChange:
    """One measure before and after."""

    measure: str
    before: Ratio
    after: Ratio


@dataclass(frozen=True, slots=True)
class SessionDelta:
    """A session against the one it was asked again from (see the module docstring)."""

    before: str
    after: str
    reused: int  # answers of `after` taken from `before`
    asked: int  # turns of `after` asked anew (failed ones included)
    calls: int  # model calls `after` made (retries included)
    errors: ErrorChanges
    rates: list[RateChange] = field(default_factory=list)

    def to_json(self) -> DeltaJSON:
        return DeltaJSON(
            before=self.before,
            after=self.after,
            reused=self.reused,
            asked=self.asked,
            calls=self.calls,
            errors={
                "before": self.errors.before,
                "after": self.errors.after,
                "gone": self.errors.gone,
                "new": self.errors.new,
                "kept": self.errors.kept,
            },
            gone=[changed_error_json(found) for found in self.errors.first_gone],
            new=[changed_error_json(found) for found in self.errors.first_new],
            rates=[
                RateChangeJSON(
                    measure=change.measure,
                    before=change.before.to_json(),
                    after=change.after.to_json(),
                )
                for change in self.rates
            ],
        )


def changed_error_json(found: ChangedError) -> ChangedErrorJSON:
    verdict = found.verdict
    return ChangedErrorJSON(
        oracle=verdict.oracle,
        relation=verdict.relation_id,
        parent=found.parent_label,
        child=found.child_label,
        template=verdict.template_id,
        detail=verdict.detail,
    )


def named_changes(changes: ErrorChanges, names: NodeNames) -> ErrorChanges:
    """The listed errors with their nodes named as the explorer names them (a label two
    nodes share gets its parent: kg.names)."""

    def named(found: ChangedError) -> ChangedError:
        if not found.parent or not found.child:
            return found
        return replace(
            found, parent_label=names.name(found.parent), child_label=names.name(found.child)
        )

    return replace(
        changes,
        first_gone=[named(found) for found in changes.first_gone],
        first_new=[named(found) for found in changes.first_new],
    )


def _evidence_rows(report: ReportJSON) -> dict[str, EvidenceJSON]:
    section = report.get("curation")
    return {row.get("template", ""): row for row in section["templates"]} if section else {}


def rate_changes(before: ReportJSON, after: ReportJSON) -> list[RateChange]:
    """The measures of two reports side by side, each named by a code (report.delta words
    them): `errors` (KONTEST's, of their tests) and `errors:ORACLE` each, `invalid` and
    `refusals` of the answers, `gap:TEMPLATE` of the relations, each kind's own measure where
    it declares one (kinds.base.KindDelta: the variants that disagree with their question's
    original, of the variant tests, `variants`), and per template (its
    `curation` row) `template_invalid:TEMPLATE` and `template_errors:TEMPLATE` of its
    questions."""
    changes: list[RateChange] = []

    def add(measure: str, first: Ratio, second: Ratio) -> None:
        if first.of or second.of:
            changes.append(RateChange(measure, first, second))

    def kontest(report: ReportJSON, names: Sequence[str]) -> Ratio:
        tests, errors = report["tests"], report["errors"]
        return Ratio(sum(errors.get(n, 0) for n in names), sum(tests.get(n, 0) for n in names))

    add("errors", kontest(before, ORACLES), kontest(after, ORACLES))
    for name in ORACLES:
        add(f"errors:{name}", kontest(before, (name,)), kontest(after, (name,)))
    add(
        "invalid",
        Ratio(before["invalid"], before["executions"]),
        Ratio(after["invalid"], after["executions"]),
    )
    add(
        "refusals",
        Ratio(before["refusals"], before["executions"]),
        Ratio(after["refusals"], after["executions"]),
    )
    for template_id, cell in before["gap"]["per_template"].items():
        other = after["gap"]["per_template"].get(template_id)
        if other is not None:
            add(
                f"gap:{template_id}",
                Ratio(cell["missing"], before["relations"]),
                Ratio(other["missing"], after["relations"]),
            )
    for info in all_kinds().values():
        if info.delta is None or not info.section_keys:
            continue
        first, second = (report.get(info.section_keys[0]) for report in (before, after))
        if first and second and isinstance(first, Mapping) and isinstance(second, Mapping):
            add(
                info.delta.code,
                Ratio(*info.delta.counts(first)),
                Ratio(*info.delta.counts(second)),
            )
    rows = (_evidence_rows(before), _evidence_rows(after))
    for template_id, first in rows[0].items():
        second = rows[1].get(template_id)
        if second is None:
            continue
        add(
            f"template_invalid:{template_id}",
            Ratio(first["invalid"], first["questions"]),
            Ratio(second["invalid"], second["questions"]),
        )
        add(
            f"template_errors:{template_id}",
            Ratio(first["errors"], first["questions"]),
            Ratio(second["errors"], second["questions"]),
        )
    return changes


def session_delta(
    store: Store, session_id: str, before: str | None = None, *, listed: int = ERRORS_LISTED
) -> SessionDelta:
    """The delta of session `session_id` against `before` (default: the session it was
    asked again from); both stored reports are made current first."""
    row = store.sessions.get(session_id)
    before = before or row["parent"]
    if before is None:
        raise InvalidInputError(
            f"session {session_id} was not asked again from another: name the session to "
            "compare it with"
        )
    reports: Mapping[str, ReportJSON] = {
        sid: ensure_report(store, sid, errors=0).report for sid in (before, session_id)
    }
    reused = store.responses.count_reused(session_id)
    timing = store.responses.timing(session_id)
    return SessionDelta(
        before=before,
        after=session_id,
        reused=reused,
        asked=timing.answers - reused,
        calls=timing.calls,
        errors=named_changes(
            store.verdicts.changes(before, session_id, limit=listed),
            NodeNames(session_graph(store, session_id)),
        ),
        rates=rate_changes(reports[before], reports[session_id]),
    )
