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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import kontest_tui
from kontest_tui.domain.answers import echoes_prompt
from kontest_tui.domain.failures import failure_reason
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation, Response
from kontest_tui.errors import KontestError
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import graph_from_dict
from kontest_tui.kinds.evaluate import evaluate_all
from kontest_tui.kinds.registry import (
    KindOptions,
    answer_format,
    fact_phrasing_kinds,
    kind_of,
    read_reply,
)
from kontest_tui.oracles.evaluate import Evaluation, evaluation_sample_section
from kontest_tui.oracles.evidence import cut_answers, evidence_json
from kontest_tui.oracles.findings import label_doubts
from kontest_tui.oracles.margins import MarginTally
from kontest_tui.oracles.ontological import PAPER_RULE
from kontest_tui.oracles.report_json import CurationJSON
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
) -> tuple[
    dict[AnswerKey, Answer], dict[AnswerKey, str], Counter[str], dict[str, int], list[AnswerKey]
]:
    """The parsed answers and raw texts of the responses that are answers, the failed turns
    by reason (domain.failures.failure_reason: "not asked", "not in the recording", ...),
    how many answers the token limit or the timeout cut ({"length": N, "timeout": M}) and the
    answers cut before anything readable (Answer.CUT: left out of the answers like failed
    turns, in no test, gap or coverage, and counted apart), in one pass with no copies."""
    answers: dict[AnswerKey, Answer] = {}
    raw: dict[AnswerKey, str] = {}
    failed: Counter[str] = Counter()
    stopped = {"length": 0, "timeout": 0}
    cut: list[AnswerKey] = []
    for key, response in responses.items():
        if response.error is None:
            if response.stopped is not None:  # (a failed turn the timeout cut is no answer)
                stopped[response.stopped] = stopped.get(response.stopped, 0) + 1
            if response.answer is Answer.CUT:
                cut.append(key)
            else:
                answers[key] = response.answer
                raw[key] = response.raw
        else:
            failed[failure_reason(response.error)] += 1
    return answers, raw, failed, stopped, cut


def read_cut_again(
    responses: Mapping[AnswerKey, Response], conversations: Sequence[Conversation]
) -> Mapping[AnswerKey, Response]:
    """The responses with each answer the token limit or the timeout stopped read again by
    kinds.registry.read_reply (rows stored before cut answers existed: an open answer cut
    at " In the north" was stored as a wrong one); the same mapping when nothing changes."""
    stopped = [
        key
        for key, response in responses.items()
        if response.stopped is not None and response.error is None
    ]
    if not stopped:
        return responses
    by_id = {conversation.id: conversation for conversation in conversations}
    changed: dict[AnswerKey, Response] = {}
    for key in stopped:
        response, conversation = responses[key], by_id.get(key[0])
        if conversation is None:
            continue
        answer = read_reply(conversation, response.raw, response.stopped)
        if answer is not response.answer:
            changed[key] = replace(response, answer=answer)
    return {**responses, **changed} if changed else responses


def count_echoes(
    conversations: Sequence[Conversation], responses: Mapping[AnswerKey, Response]
) -> int:
    """Unreadable replies (invalid or cut) that continue the prompt (a chat template's tokens,
    the question itself): what a base model asked in chat mode answers
    (domain.answers.echoes_prompt)."""
    unread = [
        key
        for key, response in responses.items()
        if response.error is None and response.answer in (Answer.INVALID, Answer.CUT)
    ]
    if not unread:
        return 0
    by_id = {conversation.id: conversation for conversation in conversations}
    count = 0
    for key in unread:
        conversation = by_id.get(key[0])
        if conversation is not None and key[1] < len(conversation.turns):
            count += echoes_prompt(conversation.turns[key[1]].text, responses[key].raw)
    return count


def add_margins(
    tally: MarginTally,
    conversations: Sequence[Conversation],
    responses: Mapping[AnswerKey, Response],
) -> None:
    """Add the yes/no questions' answers and their margins (responses.p_yes) to `tally`."""
    kinds = {c.id: c.test_kind for c in conversations if answer_format(c) == "yes_no"}
    tally.add_responses(kinds, responses)


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
    doubts: Mapping[str, str] | None = None,
    labels: Callable[[Collection[str]], Mapping[str, str]] | None = None,
    ontological_rule: str = PAPER_RULE,
) -> Evaluation:
    """All oracles and metrics over a session's responses (failed turns are no answers:
    left out of every count, test, gap and coverage and reported as `failed`); a sampled
    session's (`sample`: kinds_json["sample"]) rates get their intervals; a session whose
    conversations were all asked from scratch (`fresh`) gets the stability test; its
    ontological tests are valid by `ontological_rule` (`session_ontological_rule`). `doubts`:
    the graph's doubtful nodes (`session_doubts`), which flag implied facts through them. The
    `curation` section (oracles.evidence) counts per template and per varied word; `labels`
    names the entities among those words (node ids -> labels)."""
    responses = read_cut_again(responses, conversations)
    answers, raw, failed, stopped, cut = split_answers(responses)
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
    add_evidence(
        evaluation,
        evidence_json(
            relations,
            conversations,
            answers,
            raw,
            evaluation.verdicts,
            evaluation.gap,
            cut=cut_answers(responses),
            labels=labels,
            asked=fact_phrasing_kinds(),
        ),
    )
    if cut:
        kinds = {conversation.id: str(conversation.test_kind) for conversation in conversations}
        evaluation.cut = len(cut)
        evaluation.cut_by_kind = dict(Counter(kinds.get(key[0], "kontest") for key in cut))
    margins = MarginTally()
    add_margins(margins, conversations, responses)
    margins.add_verdicts(evaluation.verdicts)
    evaluation.margins = margins.to_json()
    evaluation.echoes = count_echoes(conversations, responses)
    if sample:  # a sampled session: every rate with its interval
        evaluation.sampled = True
        evaluation.sections["sample"] = evaluation_sample_section(sample, evaluation)
    evaluation.from_cache = from_cache
    evaluation.label_doubts = doubts
    return evaluation


def session_doubts(store: Store, session_id: str) -> dict[str, str] | None:
    """The doubtful nodes of a session's KG snapshot (oracles.findings.label_doubts: a label
    shared by several nodes, or generic); None when the snapshot cannot be read."""
    try:
        return label_doubts(store.sessions.node_labels(session_id))
    except KontestError:
        return None


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
        doubts=session_doubts(store, session_id),
        labels=lambda nodes: store.relations.node_labels(session_id, nodes),
        ontological_rule=session_ontological_rule(row),
    )


def add_evidence(evaluation: Evaluation, evidence: CurationJSON) -> None:
    """The `curation` section in the evaluation's report, when the session asked questions
    in a template's phrasing (KONTEST or variants)."""
    if evidence["templates"]:
        evaluation.sections["curation"] = evidence


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


def session_kinds(store: Store, session_id: str) -> tuple[list[str], KindOptions, list[str]]:
    """The test kinds a session asks, the options they were built with, input problems."""
    data = store.sessions.get(session_id)["kinds_json"]
    kinds = [kind_of(value) for value in data.get("kinds", ["kontest"])]
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
