"""Two sessions on one KG side by side: their reports and the relations they answer differently.

`find_comparable_sessions` lists the stored sessions worth comparing with the current one
(same KG, shared relations, answers stored) and says why the others are left out;
`compare_stored_sessions(store, a, b)` pairs two stored sessions' reports (the stored Report
JSON, results.reports) with each shared relation whose atomic answers differ under a template
both asked (read from the store: results.answers), with no evaluation when the reports are
current; `compare_sessions` does the same for two sessions already in memory.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kontest_tui.domain.records import Answer, Relation
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.results.answers import stored_model_answers
from kontest_tui.results.reports import session_report
from kontest_tui.results.settings import Difference, setting_differences
from kontest_tui.store.database import Store


class AnsweredSession(Protocol):
    """What a comparison reads of a session (run.api.StoredSession has it)."""

    @property
    def relations(self) -> Sequence[Relation]: ...

    @property
    def evaluation(self) -> Evaluation: ...


@dataclass(frozen=True)
class AnswerDifference:
    """A shared relation the two sessions' models answer differently (atomic questions):
    (this answer, other answer) per template both asked."""

    relation: Relation
    answers: dict[str, tuple[Answer | None, Answer | None]]

    @property
    def differing_templates(self) -> list[str]:
        """Templates whose answers differ (both answered)."""
        return [tid for tid, (mine, theirs) in self.answers.items() if _differ(mine, theirs)]


@dataclass
class SessionComparison:
    """Two sessions on one KG: their reports (the engine's Report JSON) and the shared
    relations whose atomic answers differ."""

    left: ReportJSON
    right: ReportJSON
    shared: int  # relations both sessions asked
    templates: list[str]  # templates both asked
    differences: list[AnswerDifference]
    # settings the two sessions were asked with that differ (kontest compare refuses them
    # without --allow-differences); filled for stored sessions
    settings: list[Difference] = field(default_factory=list)

    def differing(self, template_id: str) -> int:
        """Shared relations whose `template_id` answers differ."""
        return sum(template_id in diff.differing_templates for diff in self.differences)


def compare_sessions(left: AnsweredSession, right: AnsweredSession) -> SessionComparison:
    """Both reports, and each shared relation where the two models' atomic answers (from
    each Evaluation's `atomic_answers`) differ under a template both asked, both answered."""
    right_ids = {relation.id for relation in right.relations}
    shared = [relation for relation in left.relations if relation.id in right_ids]
    templates = [tid for tid in left.evaluation.templates if tid in right.evaluation.templates]
    return SessionComparison(
        left=left.evaluation.to_json(),
        right=right.evaluation.to_json(),
        shared=len(shared),
        templates=templates,
        differences=answer_differences(
            shared,
            templates,
            left.evaluation.atomic_answers(),
            right.evaluation.atomic_answers(),
        ),
    )


def compare_stored_sessions(store: Store, left: str, right: str) -> SessionComparison:
    """`compare_sessions` for two stored sessions, read from the store: their stored reports
    and atomic answers (no evaluation when the reports are current; nothing is written)."""
    reports = [session_report(store, sid, errors=0).report for sid in (left, right)]
    mine, theirs = (stored_model_answers(store, sid).atomic for sid in (left, right))
    right_ids = set(store.relations.ids(right))
    shared = [rid for rid in store.relations.ids(left) if rid in right_ids]
    templates = [str(t) for t in reports[0]["templates"] if t in reports[1]["templates"]]
    differing = [
        rid
        for rid in shared
        if any(_differ(mine.get((rid, tid)), theirs.get((rid, tid))) for tid in templates)
    ]
    relations = store.relations.by_id(left, differing)
    return SessionComparison(
        left=reports[0],
        right=reports[1],
        shared=len(shared),
        templates=templates,
        differences=answer_differences(
            [relations[rid] for rid in differing if rid in relations], templates, mine, theirs
        ),
        settings=setting_differences([store.sessions.get(sid) for sid in (left, right)]),
    )


def _differ(mine: Answer | None, theirs: Answer | None) -> bool:
    return mine is not None and theirs is not None and mine != theirs


def answer_differences(
    relations: Sequence[Relation],
    templates: Sequence[str],
    mine: Mapping[tuple[str, str], Answer | None],
    theirs: Mapping[tuple[str, str], Answer | None],
) -> list[AnswerDifference]:
    """The relations whose atomic answers differ under a template of `templates`."""
    differences = []
    for relation in relations:
        pairs = {
            tid: (mine.get((relation.id, tid)), theirs.get((relation.id, tid))) for tid in templates
        }
        difference = AnswerDifference(relation, pairs)
        if difference.differing_templates:
            differences.append(difference)
    return differences


@dataclass(frozen=True)
class StoredSessionChoice:
    """A stored session offered for comparison (or an ensemble) with the current one."""

    id: str
    model: str
    date: str
    status: str
    relations: int  # relations the stored session asked
    shared: int  # of them, relations the current session has too

    def describe(self, total: int) -> str:
        """`sim:forgetful · 2026-11-23 11:11 · ID` (with the overlap when partial)."""
        text = f"{self.model} · {self.date} · {self.id}"
        if not self.shared == self.relations == total:
            text += f" · {self.shared}/{total} relations shared"
        return text


@dataclass
class ComparableSessions:
    """The stored sessions offered, and one line per reason others are not."""

    offered: list[StoredSessionChoice]
    left_out: list[str]


def find_comparable_sessions(
    store: Store,
    kg_names: Sequence[str],
    relation_ids: Collection[str],
    exclude: str | None = None,
) -> ComparableSessions:
    """Stored sessions on the same KG (a name in `kg_names`) sharing relations with the
    current session, newest first; sessions on other KGs, without a shared relation or
    without answers are left out, with the reason."""
    offered: list[StoredSessionChoice] = []
    other_kgs: dict[str, int] = {}
    disjoint = unanswered = 0
    titles = store.sessions.kg_titles()  # a KG by its own name: one file under two paths
    for row in reversed(list(store.sessions.listing())):
        session_id = str(row["id"])
        if session_id == exclude:
            continue
        kg_name = str(row.get("kg_name") or "")
        if kg_name not in kg_names and titles.get(session_id) not in kg_names:
            kg_name = titles.get(session_id) or kg_name
            other_kgs[kg_name] = other_kgs.get(kg_name, 0) + 1
            continue
        if not row.get("answered"):
            unanswered += 1
            continue
        ids = store.relations.ids(session_id)
        shared = sum(relation_id in relation_ids for relation_id in ids)
        if not shared:
            disjoint += 1
            continue
        date = str(row.get("created") or row.get("updated") or "")[:16].replace("T", " ")
        offered.append(
            StoredSessionChoice(
                session_id,
                str(row.get("model") or ""),
                date,
                str(row.get("status") or ""),
                len(ids),
                shared,
            )
        )
    name = kg_names[0] if kg_names else "this KG"
    left_out: list[str] = []
    if other_kgs:
        names = ", ".join(sorted(other_kgs))
        count = sum(other_kgs.values())
        left_out.append(
            f"{count} session{'s' if count != 1 else ''} on other KGs ({names}): "
            "their answers are about other relations"
        )
    if disjoint:
        left_out.append(
            f"{disjoint} on {name} with no relation in common (another depth or per-path setting)"
        )
    if unanswered:
        left_out.append(f"{unanswered} on {name} without answers yet")
    return ComparableSessions(offered, left_out)
