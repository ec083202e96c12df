"""One call from answers to the report: all KONTEST oracles, counts, gap and coverage.

`evaluate(relations, conversations, answers)` is pure and cheap (one pass per oracle), so the
live view may call it on every batch of streamed answers. `Evaluation.to_json()` is the
Report JSON (docs/oracles-and-metrics.md); the per-relation summary and verdicts by oracle
feed the explorer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Relation,
    Verdict,
)
from kontest_tui.gc_pause import paused_gc
from kontest_tui.oracles.conversation_index import (
    VALID_ANSWERS,
    RelationConversations,
    coerce_answer,
    get_answer,
    index_conversations,
    ordered_templates,
)
from kontest_tui.oracles.coverage import GapReport, compute_gap
from kontest_tui.oracles.findings import Findings, tally_findings
from kontest_tui.oracles.intervals import (
    NOT_ESTIMATED,
    TOTAL,
    ClusterTally,
    RateCells,
    rates_json,
    sample_section,
)
from kontest_tui.oracles.measures import (
    AccuracyJSON,
    KindHeadline,
    KindMeasures,
    headline_of,
    ratio,
)
from kontest_tui.oracles.metamorphic import METAMORPHIC_ORACLES, find_metamorphic_verdicts
from kontest_tui.oracles.ontological import PAPER_RULE, find_ontological_verdicts
from kontest_tui.oracles.report_json import (
    FindingsJSON,
    HeadlineJSON,
    RateJSON,
    RatioJSON,
    RelationStatusJSON,
    ReportJSON,
)
from kontest_tui.oracles.stability import STABILITY

ORACLES: tuple[str, ...] = (*METAMORPHIC_ORACLES, "ontological")
METAMORPHIC = "metamorphic"  # the rate of the three metamorphic oracles together (Table 3)


def kontest_headline_counts(report: Mapping[str, object]) -> tuple[int, int]:
    """KONTEST's headline (count, of): its errors of its tests, the four oracles together."""
    errors, tests = report.get("errors") or {}, report.get("tests") or {}
    assert isinstance(errors, Mapping) and isinstance(tests, Mapping)
    return int(errors.get("total", 0)), sum(int(tests.get(name, 0)) for name in ORACLES)


# KONTEST's headline, its error rate: the session's when it asks KONTEST questions.
KONTEST_MEASURES = KindMeasures(
    "kontest",
    headline=KindHeadline(
        "KONTEST error rate", kontest_headline_counts, rank=10, errors_of=ORACLES
    ),
)


@dataclass(slots=True)
class RelationSummary:
    """What the explorer shows for one relation: its answers and which tests failed."""

    relation_id: str
    parent: str
    child: str
    type: str
    atomic: dict[str, Answer | None]  # template id -> atomic answer (None = not yet)
    sequential: dict[str, tuple[Answer | None, ...]]  # "t1+t2" -> answers per turn
    status: str  # covered | gap | pending (see oracles.coverage)
    tests: int = 0
    errors: int = 0
    metamorphic_errors: int = 0
    error_oracles: tuple[str, ...] = ()
    verdicts: list[Verdict] = field(default_factory=list)


@dataclass(slots=True)
class Evaluation:
    """Verdicts and metrics of one session (possibly partial: missing answers not counted)."""

    session: str | None
    model: str | None
    relations: int
    queries: int
    executions: int
    valid: int
    invalid: int
    planned_executions: int
    templates: list[str]
    verdicts: list[Verdict]
    tests: dict[str, int]
    errors: dict[str, int]
    planned_tests: dict[str, int]  # tests the conversations allow (valid answers or not)
    gap: GapReport
    # Report sections of the other test kinds (each kind's own, kinds/), and "kinds": those asked.
    sections: dict[str, object] = field(default_factory=dict)
    # Turns with no answer after all attempts (failed calls and the later turns of their
    # conversations): in no count above, no test, gap or coverage (set by run.session).
    failed: int = 0
    failed_reasons: dict[str, int] = field(default_factory=dict)  # why, e.g. "not asked"
    # Answers the token limit ("length") or the timeout ("timeout") cut (set by run.session).
    stopped: dict[str, int] = field(default_factory=lambda: {"length": 0, "timeout": 0})
    refusals: int = 0  # KONTEST answers that decline ("I don't know"), part of `invalid`
    # Answers cut (token limit, timeout) before anything readable (Answer.CUT, set by
    # results.evaluate): in no count above, no test, gap or coverage; per test kind too.
    cut: int = 0
    cut_by_kind: dict[str, int] = field(default_factory=dict)
    # The margins section (oracles.margins; None: not computed, e.g. a streamed run's).
    margins: dict[str, object] | None = None
    # Unreadable replies continuing the prompt (a base model in chat mode: results.evaluate).
    echoes: int = 0
    from_cache: int = 0  # stored answers reused from the answer cache (`--reuse-cache`)
    # What each test kind adds to the report's measures (headline, accuracy, consistency),
    # declared by the kinds and handed down by kinds.evaluate; KONTEST's alone by default.
    measures: tuple[KindMeasures, ...] = field(default_factory=lambda: (KONTEST_MEASURES,))
    # Evaluated chunk by chunk (oracles.streamed): the counts and report are the session's,
    # `verdicts` is empty (they are in the store) and so are the per-relation views.
    streamed: bool = False
    # The clustered rates' sums (oracles.intervals) when they are not made from `verdicts`
    # (a streamed evaluation keeps only these), and rates of other kinds that are not
    # verdicts (the logic rules' hallucination rate: errors of all responses).
    tallies: dict[str, ClusterTally] | None = None
    rate_cells: RateCells = field(default_factory=RateCells)
    # A sampled session: its ontological rate is not estimated (biased low on a sample) and
    # its total is that of the other KONTEST oracles.
    sampled: bool = False
    # The graph's doubtful nodes (oracles.findings.label_doubts: node id -> why its label is
    # doubtful), set by the caller that knows the labels; None: implied facts are not flagged.
    label_doubts: Mapping[str, str] | None = None
    # The findings counted chunk by chunk (oracles.streamed); None: counted from `verdicts`.
    findings: Findings | None = None
    # Inputs kept (not copied) so the per-relation summary is built only when a view asks.
    source: tuple[
        Sequence[Relation], Mapping[str, RelationConversations], Mapping[AnswerKey, Answer]
    ] = field(repr=False, compare=False, default=((), {}, {}))
    _summaries: dict[str, RelationSummary] | None = field(default=None, repr=False, compare=False)
    _relations_by_id: dict[str, Relation] | None = field(default=None, repr=False, compare=False)

    @property
    def summaries(self) -> dict[str, RelationSummary]:
        """Relation id -> RelationSummary (answers per template, tests, errors), built once."""
        if self._summaries is None:
            relations, index, answers = self.source
            self._summaries = summarize_relations(
                relations, index, answers, self.verdicts, self.gap, self.templates
            )
        return self._summaries

    @property
    def relation_ids(self) -> list[str]:
        return [relation.id for relation in self.source[0]]

    def relation(self, relation_id: str) -> Relation | None:
        """The evaluated relation with this id, or None."""
        if self._relations_by_id is None:
            self._relations_by_id = {relation.id: relation for relation in self.source[0]}
        return self._relations_by_id.get(relation_id)

    @property
    def error_total(self) -> int:
        """KONTEST errors (the four oracles of the paper); other kinds are reported apart."""
        return sum(self.errors.get(name, 0) for name in ORACLES)

    @property
    def test_total(self) -> int:
        """KONTEST tests (valid answers only)."""
        return sum(self.tests.get(name, 0) for name in ORACLES)

    @property
    def error_rate(self) -> float:
        """KONTEST errors per valid KONTEST test (0.0 before any test ran).

        Consistency errors of other kinds (variants) and factual errors (FactChecker, logic
        rules, annotations) are never added in: see `consistency_json` and `accuracy_json`."""
        return self.error_total / self.test_total if self.test_total else 0.0

    @property
    def listed_error_rate(self) -> float | None:
        """The error rate a session list shows: None (shown "-") when no KONTEST test ran."""
        return round(self.error_rate, 6) if self.test_total else None

    def consistency_json(self) -> dict[str, RatioJSON]:
        """Consistency, answers held to other answers: KONTEST's oracles together, each
        kind's own consistency measure whose section the session has (`measures`: the
        covering-array variants) and the stability test (when its conversations were asked
        from scratch), each tests/errors/rate."""
        groups = {"kontest": (self.test_total, self.error_total)}
        for found in self.measures:
            if found.consistency and found.section in self.sections:
                oracle = found.consistency
                groups[oracle] = (self.tests.get(oracle, 0), self.errors.get(oracle, 0))
        if STABILITY in self.tests:  # fresh conversations (oracles.stability)
            groups[STABILITY] = (self.tests[STABILITY], self.errors.get(STABILITY, 0))
        return {
            name: RatioJSON(tests=tests, errors=errors, rate=ratio(errors, tests))
            for name, (tests, errors) in groups.items()
        }

    def accuracy_json(self) -> dict[str, AccuracyJSON]:
        """Accuracy, answers held to the KG or an annotation: one entry per kind whose
        section the session has and which declares one (`measures`), asked / valid (=
        tests) / correct / errors / refusals / invalid / accuracy (correct of asked) /
        error_rate (errors of valid), and what else the kind adds."""
        found: dict[str, AccuracyJSON] = {}
        for measures in self.measures:
            section = self.sections.get(measures.section)
            if measures.accuracy is not None and isinstance(section, Mapping):
                found[measures.kind] = measures.accuracy(section)
        return found

    @property
    def kinds(self) -> list[str]:
        """The test kinds the session asks (KONTEST alone when no other kind was judged)."""
        listed = self.sections.get("kinds")
        return [str(kind) for kind in listed] if isinstance(listed, list) else ["kontest"]

    def headline_json(self) -> HeadlineJSON:
        """The session's headline rate: that of the kind it asks with the lowest headline
        rank (oracles.measures.headline_of)."""
        return headline_of(
            {
                **self.sections,
                "kinds": self.kinds,
                "errors": {"total": self.error_total},
                "tests": {name: self.tests.get(name, 0) for name in ORACLES},
                "accuracy": self.accuracy_json(),
                "consistency": self.consistency_json(),
            },
            self.measures,
        )

    @property
    def total_oracles(self) -> tuple[str, ...]:
        """The oracles of the total rate: KONTEST's four, three on a sample."""
        if self.sampled:
            return tuple(name for name in ORACLES if name not in NOT_ESTIMATED)
        return ORACLES

    def rate_tallies(self) -> dict[str, ClusterTally]:
        """Rate name -> the sums of its clustered interval: each oracle with tests, the other
        kinds' rates (`rate_cells`), the three metamorphic oracles together (METAMORPHIC) and
        the total (`total_oracles`)."""
        if self.tallies is not None:
            return self.tallies
        cells = RateCells()
        cells.add_verdicts(self.verdicts, self.total_oracles)
        tallies = cells.tallies()
        total = tallies.pop(TOTAL, None)
        tallies.update(self.rate_cells.tallies())
        metamorphic = RateCells()
        metamorphic.add_verdicts(
            (v for v in self.verdicts if v.oracle in METAMORPHIC_ORACLES), METAMORPHIC_ORACLES
        )
        together = metamorphic.tallies().get(TOTAL)
        if together is not None:
            tallies[METAMORPHIC] = together
        if total is not None:
            tallies[TOTAL] = total
        return tallies

    def rates_json(self) -> dict[str, RateJSON]:
        """The Report JSON's `rates` (oracles.intervals): per oracle (and the total, and the
        logic rules' hallucination rate) errors, tests, rate and its clustered 95% interval."""
        rates = rates_json(self.rate_tallies(), NOT_ESTIMATED if self.sampled else ())
        if TOTAL in rates:
            rates[TOTAL]["oracles"] = list(self.total_oracles)
        return rates

    def findings_json(self) -> FindingsJSON:
        """KONTEST's errors folded per relation (oracles.findings): distinct disagreements,
        repeats, flips after the model's own reply, implied facts and the doubtful ones."""
        findings = self.findings
        if findings is None:
            findings = tally_findings(self.verdicts, self.label_doubts)
        return findings.to_json()

    def verdicts_by_oracle(self) -> dict[str, list[Verdict]]:
        return group_verdicts_by_oracle(self.verdicts, self.tests)

    def errors_by_relation(self) -> dict[str, int]:
        """Metamorphic errors per relation id (x_r of the weighted ensemble)."""
        counts = dict.fromkeys(self.relation_ids, 0)
        for verdict in self.verdicts:
            if verdict.error and verdict.oracle in METAMORPHIC_ORACLES:
                counts[verdict.relation_id] = counts.get(verdict.relation_id, 0) + 1
        return counts

    def atomic_answers(self) -> dict[tuple[str, str], Answer | None]:
        """(relation id, template id) -> atomic answer (None = not yet), for the ensemble."""
        relations, index, answers = self.source
        found: dict[tuple[str, str], Answer | None] = {}
        for relation in relations:
            entry = index.get(relation.id)
            if entry is None:
                continue
            for template_id, conversation in entry.atomic.items():
                found[(relation.id, template_id)] = get_answer(answers, (conversation.id, 0))
        return found

    def to_json(self, *, include_relations: bool = False) -> ReportJSON:
        """The Report JSON (docs/oracles-and-metrics.md): its keys in this order (the CSV
        report lists them so), the other kinds' sections after the rates."""
        report = {
            "session": self.session,
            "model": self.model,
            "relations": self.relations,
            "queries": self.queries,
            "executions": self.executions,
            "valid": self.valid,
            "invalid": self.invalid,
            "cut": self.cut,
            **({"cut_by_kind": dict(self.cut_by_kind)} if self.cut_by_kind else {}),
            "failed": self.failed,
            **({"failed_reasons": dict(self.failed_reasons)} if self.failed_reasons else {}),
            "stopped": dict(self.stopped),
            "tests": dict(self.tests),
            # "total" and "error_rate" are KONTEST's; other kinds' errors are in their sections.
            "errors": {**self.errors, "total": self.error_total},
            "error_rate": round(self.error_rate, 6),
            "gap": self.gap.to_json(),
            "coverage": {"covered": self.gap.covered, "pct": self.gap.covered_pct},
            "templates": list(self.templates),
            "planned_executions": self.planned_executions,
            "tests_planned": dict(self.planned_tests),
            "pending_relations": self.gap.pending,
            "refusals": self.refusals,
            **({"echoes": self.echoes} if self.echoes else {}),
            **({"margins": self.margins} if self.margins is not None else {}),
            "answers_from_cache": self.from_cache,
            "consistency": self.consistency_json(),
            "rates": self.rates_json(),
            **self.sections,
        }
        accuracy = self.accuracy_json()
        if accuracy:
            report["accuracy"] = accuracy
        report["headline"] = self.headline_json()
        if "kontest" in self.kinds:
            report["findings"] = self.findings_json()
        if include_relations:
            report["relation_status"] = [
                RelationStatusJSON(
                    relation=summary.relation_id,
                    parent=summary.parent,
                    child=summary.child,
                    type=summary.type,
                    answers={
                        tid: (answer.value if answer is not None else None)
                        for tid, answer in summary.atomic.items()
                    },
                    status=summary.status,
                    tests=summary.tests,
                    errors=summary.errors,
                    error_oracles=list(summary.error_oracles),
                )
                for summary in self.summaries.values()
            ]
        # The sections are the kinds' own JSON: the record is checked where it is read back
        # (report_json.report_from_json) and by the tests of every kind's report.
        return cast(ReportJSON, report)


def evaluation_sample_section(
    sample: Mapping[str, object], evaluation: Evaluation
) -> dict[str, object]:
    """The sample section (oracles.intervals.sample_section) of an evaluated sampled session
    (`sample`: generate.sample.Sample.to_json)."""
    gap = {tid: gap.missing for tid, gap in evaluation.gap.per_template.items()}
    gap["intersection"] = evaluation.gap.intersection
    not_sampled = {oracle for found in evaluation.measures for oracle in found.not_sampled}
    return sample_section(sample, evaluation.verdicts, gap, evaluation.relations, not_sampled)


def group_verdicts_by_oracle(
    verdicts: Iterable[Verdict], oracles: Iterable[str] = ORACLES
) -> dict[str, list[Verdict]]:
    """Verdicts grouped by oracle name; every name in `oracles` is present (maybe empty)."""
    grouped: dict[str, list[Verdict]] = {oracle: [] for oracle in oracles}
    for verdict in verdicts:
        grouped.setdefault(verdict.oracle, []).append(verdict)
    return grouped


def count_verdicts(
    verdicts: Iterable[Verdict], tests: dict[str, int], errors: dict[str, int]
) -> None:
    """Add the verdicts to the tests and errors per oracle (an oracle seen gets an errors
    entry, 0 when none of its verdicts is an error)."""
    for verdict in verdicts:
        tests[verdict.oracle] = tests.get(verdict.oracle, 0) + 1
        if verdict.error:
            errors[verdict.oracle] = errors.get(verdict.oracle, 0) + 1
        else:
            errors.setdefault(verdict.oracle, 0)


def count_executions(
    conversations: Iterable[Conversation], answers: Mapping[AnswerKey, Answer]
) -> tuple[int, int, int, int, int]:
    """(queries, executions, valid, invalid, planned executions) over all conversations.

    queries = distinct questions (relation, template, text) that got an answer;
    executions = answered turns (model calls); valid = YES/NO answers; invalid = the rest.
    """
    queries: set[tuple[str, str, str]] = set()
    executions = valid = planned = 0
    for conversation in conversations:
        for position, query in enumerate(conversation.turns):
            planned += 1
            answer = answers.get((conversation.id, position))
            if answer is None:
                continue
            executions += 1
            if type(answer) is not Answer:
                answer = coerce_answer(answer)
            if answer in VALID_ANSWERS:
                valid += 1
            queries.add((query.relation_id, query.template_id, query.text))
    return len(queries), executions, valid, executions - valid, planned


def summarize_relations(
    relations: Sequence[Relation],
    index: Mapping[str, RelationConversations],
    answers: Mapping[AnswerKey, Answer],
    verdicts: Iterable[Verdict],
    gap: GapReport,
    templates: Sequence[str],
) -> dict[str, RelationSummary]:
    """Per relation: atomic answers per template, sequential answers, tests and errors."""
    summaries: dict[str, RelationSummary] = {}
    for relation in relations:
        entry = index.get(relation.id)
        atomic: dict[str, Answer | None] = {}
        sequential: dict[str, tuple[Answer | None, ...]] = {}
        if entry is not None:
            for template_id in templates:
                conversation = entry.atomic.get(template_id)
                if conversation is not None:
                    atomic[template_id] = get_answer(answers, (conversation.id, 0))
            for conversation in entry.sequential:
                key = "+".join(turn.template_id for turn in conversation.turns)
                sequential[key] = tuple(
                    get_answer(answers, (conversation.id, turn))
                    for turn in range(len(conversation.turns))
                )
        summaries[relation.id] = RelationSummary(
            relation_id=relation.id,
            parent=relation.parent,
            child=relation.child,
            type=relation.type,
            atomic=atomic,
            sequential=sequential,
            status=gap.status.get(relation.id, "pending"),
        )
    for verdict in verdicts:
        summary = summaries.get(verdict.relation_id)
        if summary is None:
            continue
        summary.verdicts.append(verdict)
        summary.tests += 1
        if verdict.error:
            summary.errors += 1
            if verdict.oracle in METAMORPHIC_ORACLES:
                summary.metamorphic_errors += 1
            if verdict.oracle not in summary.error_oracles:
                summary.error_oracles = (*summary.error_oracles, verdict.oracle)
    return summaries


def evaluate(
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    answers: Mapping[AnswerKey, Answer],
    *,
    session: str | None = None,
    model: str | None = None,
    extra_verdicts: Iterable[Verdict] = (),
    ontological_rule: str = PAPER_RULE,
) -> Evaluation:
    """Run every KONTEST oracle and metric over the answers given so far.

    `extra_verdicts` (e.g. from the variant oracle) are added to the verdict list and counted
    under their own oracle name in tests/errors; `ontological_rule` says which ontological
    tests are valid (oracles.ontological.ONTOLOGICAL_RULES).
    """
    # Snapshots (cheap copies): the live view keeps adding answers to its own mapping, and the
    # lazily built summaries must describe the same answers as the verdicts.
    relations = list(relations)
    if not isinstance(conversations, Sequence):
        conversations = list(conversations)
    answers = dict(answers)
    with paused_gc():
        return _evaluate(
            relations, conversations, answers, session, model, extra_verdicts, ontological_rule
        )


def _evaluate(
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    answers: Mapping[AnswerKey, Answer],
    session: str | None,
    model: str | None,
    extra_verdicts: Iterable[Verdict],
    ontological_rule: str = PAPER_RULE,
) -> Evaluation:
    index = index_conversations(conversations)
    templates = ordered_templates(index)
    planned_tests = dict.fromkeys(ORACLES, 0)
    verdicts = find_metamorphic_verdicts(conversations, answers, index=index, planned=planned_tests)
    verdicts.extend(
        find_ontological_verdicts(
            relations,
            conversations,
            answers,
            index=index,
            templates=templates,
            planned=planned_tests,
            rule=ontological_rule,
        )
    )
    verdicts.extend(extra_verdicts)
    tests = dict.fromkeys(ORACLES, 0)
    errors = dict.fromkeys(ORACLES, 0)
    count_verdicts(verdicts, tests, errors)
    gap = compute_gap(relations, conversations, answers, index=index, templates=templates)
    queries, executions, valid, invalid, planned = count_executions(conversations, answers)
    return Evaluation(
        session=session,
        model=model,
        relations=len(relations),
        queries=queries,
        executions=executions,
        valid=valid,
        invalid=invalid,
        planned_executions=planned,
        templates=templates,
        verdicts=verdicts,
        tests=tests,
        errors=errors,
        planned_tests=planned_tests,
        gap=gap,
        source=(relations, index, answers),
    )
