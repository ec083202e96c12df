"""Every oracle over a session of any test kinds: the KONTEST oracles (oracles.evaluate) for
the paraphrase pairs, each other kind's own judge (kinds.registry) for the rest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation, TestKind
from kontest_tui.errors import StoreError
from kontest_tui.kinds.registry import all_kinds, count_refusals, judge_kinds, kind_rank
from kontest_tui.oracles.evaluate import Evaluation, evaluate
from kontest_tui.oracles.ontological import PAPER_RULE
from kontest_tui.oracles.stability import find_stability_verdicts


def evaluate_all(
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    answers: Mapping[AnswerKey, Answer],
    raw_answers: Mapping[AnswerKey, str],
    *,
    session: str | None = None,
    model: str | None = None,
    problems: Sequence[str] = (),
    stability: bool = False,
    ontological_rule: str = PAPER_RULE,
) -> Evaluation:
    """`evaluate` over a session of any test kinds (kinds.registry).

    KONTEST conversations go through the KONTEST oracles; every other kind is judged by its
    own judge (which may need the raw replies: multiple-choice and WH answers are text), its
    verdicts added to the evaluation's and its report section to `sections`. The counts of
    queries and executions are the KONTEST ones; each section has its own. `stability`: the
    conversations were asked from scratch, and the stability test runs (oracles.stability).
    `ontological_rule`: which ontological tests are valid (oracles.ontological).
    """
    _check_kinds(conversations)
    kontest = [c for c in conversations if c.test_kind is TestKind.KONTEST]
    stable = find_stability_verdicts(kontest, answers) if stability else []
    if len(kontest) == len(conversations):
        evaluation = evaluate(
            relations,
            conversations,
            answers,
            session=session,
            model=model,
            extra_verdicts=stable,
            ontological_rule=ontological_rule,
        )
        evaluation.refusals = count_refusals(kontest, raw_answers, answers)
        return evaluation
    judged = judge_kinds(conversations, raw_answers, answers, problems)
    evaluation = evaluate(
        relations,
        kontest,
        answers,
        session=session,
        model=model,
        extra_verdicts=[*stable, *judged.verdicts],
        ontological_rule=ontological_rule,
    )
    evaluation.refusals = count_refusals(kontest, raw_answers, answers)
    for name, cells in judged.rate_cells.items():
        for relation_id, (errors, tests) in cells.items():
            evaluation.rate_cells.add(name, relation_id, errors, tests)
    kinds = {c.test_kind for c in conversations}
    evaluation.sections = {"kinds": sorted((str(kind) for kind in kinds), key=kind_rank)}
    evaluation.sections.update(judged.sections)
    # what every kind adds to the report's measures (its headline, accuracy, consistency)
    evaluation.measures = tuple(info.measures for info in all_kinds().values())
    return evaluation


def _check_kinds(conversations: Sequence[Conversation]) -> None:
    """StoreError (one line) when a conversation's kind is none that can judge it: a row
    edited by hand, or a plugin's kind whose plugin is not installed here."""
    others = {str(c.test_kind) for c in conversations if not isinstance(c.test_kind, TestKind)}
    if not others:  # built-in kinds only: no plugin looked up
        return
    unknown = sorted(others - set(all_kinds()))
    if unknown:
        names = ", ".join(repr(name) for name in unknown)
        raise StoreError(
            f"a damaged row in conversations, or a missing plugin: test kind {names} is "
            "neither built in nor given by an installed plugin (entry points kontest.kinds)"
        )
