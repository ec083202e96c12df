"""`holds`: a test kind asking whether each relation of the KG holds, one question each.

A third-party kind is what this module holds and nothing more: a `KindInfo` with its build,
parse and judge, an option (`--holds-limit`, a flag of `kontest run` and `kontest generate`
made from its declaration), its oracle's words, its report section (a typed record) and its
table, all from
kontest_tui's kinds API (kinds.base) and records. Every relation of a KG holds, so the right
answer is yes: a no is an error (a yes/no answer is a test, anything else is not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict, cast

from kontest_tui.domain.answers import parse_answer
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Query, Verdict
from kontest_tui.generate.conversations import Suite, question_text
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds.base import (
    CellFormat,
    KindHeadline,
    KindInfo,
    KindOption,
    KindOptions,
    KindResult,
    OracleWords,
    ReportData,
    SectionTable,
)

NAME = "holds"  # the kind, its oracle and its Report JSON section


class HoldsSection(TypedDict):
    """Its Report JSON section: questions answered, yes/no answers among them, the noes."""

    asked: int
    valid: int
    errors: int


def build(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    """One question per relation (the first `--holds-limit` of them), in the first template."""
    limit = options.value("holds_limit")
    relations = suite.relations[: int(str(limit))] if limit is not None else suite.relations
    template_id = suite.template_ids[0]
    return [
        Conversation(
            id=f"{relation.id}/{NAME}",
            relation_id=relation.id,
            kind="atomic",
            label=NAME,
            turns=(
                Query(
                    relation.id,
                    template_id,
                    question_text(kg, relation, suite.template_set, template_id),
                ),
            ),
            test_kind=NAME,
            expected=(Answer.YES,),
        )
        for relation in relations
    ]


def parse(conversation: Conversation, raw: str) -> Answer:
    return parse_answer(raw)


def judge(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str],
) -> KindResult:
    verdicts = []
    asked = 0
    for conversation in conversations:
        key = (conversation.id, 0)
        answer = answers.get(key)
        if answer is None:
            continue
        asked += 1
        if answer in (Answer.YES, Answer.NO):
            verdicts.append(
                Verdict(
                    NAME,
                    conversation.relation_id,
                    conversation.turns[0].template_id,
                    answer is Answer.NO,
                    (key,),
                    (answer,),
                )
            )
    errors = sum(verdict.error for verdict in verdicts)
    section = HoldsSection(asked=asked, valid=len(verdicts), errors=errors)
    return KindResult(verdicts, {NAME: section})


def headline_counts(report: Mapping[str, object]) -> tuple[int, int]:
    """Its headline: the noes of the yes/no answers (read from its section of the report)."""
    section = cast("HoldsSection", report[NAME])
    return section["errors"], section["valid"]


def section_tables(report: ReportData, cells: CellFormat) -> list[SectionTable]:
    section = cast("HoldsSection | None", report.get(NAME))
    if not section:
        return []
    row = (
        cells.oracle_name(NAME),
        str(section["asked"]),
        str(section["valid"]),
        str(section["errors"]),
        cells.rate(section["errors"], section["valid"]),
    )
    return [
        ("Relations that hold (test plugin)", ("test", "asked", "valid", "errors", "rate"), [row])
    ]


KIND = KindInfo(
    NAME,
    "Relations that hold",
    "Each relation asked once; the KG says it holds, so a no is an error.",
    (NAME,),
    build,
    parse,
    judge,
    words=(
        OracleWords(
            NAME,
            "relations that hold",
            "a relation of the knowledge graph is answered yes",
            "A relation of the knowledge graph answered no",
            card=False,
        ),
    ),
    section_keys=(NAME,),
    section_tables=section_tables,
    headline=KindHeadline("relations denied", headline_counts),
    options=(
        KindOption(
            "holds_limit",
            "--holds-limit",
            "at most",
            "Ask whether at most N relations hold (holds kind).",
            type="int",
            minimum=1,
        ),
    ),
)
