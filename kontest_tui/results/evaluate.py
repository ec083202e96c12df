"""Evaluate a stored session: every oracle over its stored answers, and what it was made of.

`evaluate_session(store, id)` reads the relations, conversations and responses and runs every
oracle (kinds.evaluate.evaluate_all); nothing is written. `store_evaluation` writes an
evaluation's verdicts and report (a run does at its end, `results.reports.refresh_report`
on request). `evaluation_engine()` names the evaluating code: a report stored by other code
is stale (store.reports).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import kontest_tui
from kontest_tui.domain.failures import failure_reason
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation, Response, TestKind
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import graph_from_dict
from kontest_tui.kinds.evaluate import evaluate_all
from kontest_tui.kinds.registry import KindOptions
from kontest_tui.oracles.evaluate import Evaluation, evaluation_sample_section
from kontest_tui.oracles.ontological import PAPER_RULE
from kontest_tui.store.database import Store

# The packages whose code decides verdicts and the Report JSON (with this one).
_ENGINE_PACKAGES = ("domain", "kinds", "oracles", "probes", "results")


@cache
def evaluation_engine() -> str:
    """The version of the evaluating code: kontest's version and a digest of the source of
    the packages that make verdicts and reports. A report stored by other code is stale."""
    digest = hashlib.sha256()
    root = Path(kontest_tui.__file__).parent
    files: list[Path] = []
    for package in _ENGINE_PACKAGES:
        files.extend(sorted((root / package).rglob("*.py")))
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        digest.update(path.name.encode() + b"\0" + data + b"\0")
    return f"{kontest_tui.__version__}+{digest.hexdigest()[:16]}"


def split_answers(
    responses: Mapping[AnswerKey, Response],
) -> tuple[dict[AnswerKey, Answer], dict[AnswerKey, str], Counter[str], dict[str, int]]:
    """The parsed answers and raw texts of the responses that are answers, the failed turns
    by reason (domain.failures.failure_reason: "not asked", "not in the recording", ...) and
    how many answers the token limit or the timeout cut ({"length": N, "timeout": M}), in one
    pass with no intermediate copies."""
    answers: dict[AnswerKey, Answer] = {}
    raw: dict[AnswerKey, str] = {}
    failed: Counter[str] = Counter()
    stopped = {"length": 0, "timeout": 0}
    for key, response in responses.items():
        if response.error is None:
            answers[key] = response.answer
            raw[key] = response.raw
        else:
            failed[failure_reason(response.error)] += 1
        if response.stopped is not None:
            stopped[response.stopped] = stopped.get(response.stopped, 0) + 1
    return answers, raw, failed, stopped


def evaluate_responses(
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    responses: Mapping[AnswerKey, Response],
    *,
    session: str,
    model: str | None,
    problems: Sequence[str] = (),
    from_cache: int = 0,
    sample: Mapping[str, Any] | None = None,
    fresh: bool = False,
    ontological_rule: str = PAPER_RULE,
) -> Evaluation:
    """All oracles and metrics over a session's responses (failed turns are no answers:
    left out of every count, test, gap and coverage and reported as `failed`); a sampled
    session's (`sample`: kinds_json["sample"]) rates get their intervals; a session whose
    conversations were all asked from scratch (`fresh`) gets the stability test; its
    ontological tests are valid by `ontological_rule` (`session_ontological_rule`)."""
    answers, raw, failed, stopped = split_answers(responses)
    evaluation = evaluate_all(
        relations,
        conversations,
        answers,
        raw,
        session=session,
        model=model,
        problems=problems,
        stability=fresh,
        ontological_rule=ontological_rule,
    )
    evaluation.failed = failed.total()
    evaluation.failed_reasons = dict(failed.most_common())
    evaluation.stopped = stopped
    if sample:  # a sampled session: every rate with its interval
        evaluation.sampled = True
        evaluation.sections["sample"] = evaluation_sample_section(sample, evaluation)
    evaluation.from_cache = from_cache
    return evaluation


def evaluate_session(store: Store, session_id: str) -> Evaluation:
    """All oracles and metrics over the session's stored answers (nothing is written)."""
    row = store.sessions.get(session_id)
    return evaluate_responses(
        store.relations.load(session_id),
        store.relations.load_conversations(session_id),
        store.responses.load(session_id),
        session=session_id,
        model=row["model"],
        problems=row["kinds_json"].get("problems", ()),
        from_cache=store.responses.count_cached(session_id),
        sample=row["kinds_json"].get("sample"),
        fresh=bool(row.get("fresh_conversations")),
        ontological_rule=session_ontological_rule(row),
    )


def session_ontological_rule(row: Mapping[str, Any]) -> str:
    """The ontological rule a stored session row was asked with (its kinds' options;
    "paper" for a session stored before the option existed)."""
    return KindOptions.from_json(row["kinds_json"].get("options")).ontological_rule


def store_evaluation(store: Store, session_id: str, evaluation: Evaluation) -> None:
    """Store an evaluation's verdicts and report (replacing the session's) in one transaction."""
    store.verdicts.replace(
        session_id,
        evaluation.verdicts,
        report=evaluation.to_json(),
        engine=evaluation_engine(),
        oracle_error_rate=evaluation.listed_error_rate,
        oracle_errors=evaluation.error_total,
    )


def session_kinds(store: Store, session_id: str) -> tuple[list[TestKind], KindOptions, list[str]]:
    """The test kinds a session asks, the options they were built with, input problems."""
    data = store.sessions.get(session_id)["kinds_json"]
    kinds = [TestKind(value) for value in data.get("kinds", ["kontest"])]
    return kinds, KindOptions.from_json(data.get("options")), list(data.get("problems", []))


def session_graph(store: Store, session_id: str) -> KnowledgeGraph:
    """The KG snapshot a session was created from (an empty one for annotated questions only)."""
    data = store.sessions.kg_snapshot(session_id)
    if not data.get("nodes"):
        return empty_graph(str(data.get("name") or store.sessions.get(session_id)["kg_name"]))
    return graph_from_dict(data, origin=f"session {session_id}")


def empty_graph(name: str) -> KnowledgeGraph:
    """The KG of a session that asks only annotated questions (kontest run --questions)."""
    return KnowledgeGraph(name, "annotation", {}, [], source="questions file")
