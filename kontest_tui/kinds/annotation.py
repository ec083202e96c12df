"""The annotated-questions kind (KomMKonLLM thesis): BoolQ-style questions from a JSONL file
(`kontest run --questions`, generate/annotated.py), not from a KG, asked as covering-array
variants with the variant options, each held to its annotation and to its other variants
(oracles/annotation.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, TestKind, Verdict
from kontest_tui.kinds.base import (
    CellFormat,
    KindHeadline,
    KindInfo,
    KindOptions,
    KindResult,
    OracleWords,
    ReportData,
    SectionTable,
    wrong_answer_brief,
)
from kontest_tui.kinds.refusals import count_refusals
from kontest_tui.kinds.variant import OPTIONS, parse_variant
from kontest_tui.oracles.measures import AccuracyJSON, accuracy_cell, ratio

SECTION = "annotation"  # its Report JSON key (and its oracle's)


class AnnotationSection(TypedDict):
    """Its Report JSON section (oracles.annotation.AnnotationEvaluation, and the refusals):
    tests and errors of its two oracles, annotation and variant, never added up."""

    questions: int
    executions: int
    valid: int
    invalid: int
    tests: dict[str, int]
    errors: dict[str, int]
    correct: int
    accuracy: float | None
    questions_with_errors: list[str]
    problems: list[str]
    refusals: NotRequired[int]


def judge(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str],
) -> KindResult:
    from kontest_tui.oracles.annotation import evaluate_annotations

    result = evaluate_annotations(conversations, answers, problems)
    section = result.to_json()
    section["refusals"] = count_refusals(conversations, raw, answers)
    return KindResult(result.verdicts, {SECTION: section})


def build_annotated_questions(
    path: str | Path, options: KindOptions | None = None
) -> tuple[list[Conversation], list[str]]:
    """Variant conversations of an annotated-questions JSONL file, built with the variant
    options, and its skipped lines (`FILE:LINE: reason`); InvalidInputError when none is usable."""
    from kontest_tui.generate.annotated import build_annotation_conversations

    options = options or KindOptions()
    return build_annotation_conversations(
        path,
        strength=options.strength,
        seed=options.seed,
        limit=options.variant_limit,
        postfix=options.postfix,
    )


def verdict_sentence(verdict: Verdict, first: str, second: str, other: str) -> str:
    return f"the annotation says {other}; the model said {first}"


def conversation_name(conversation: Conversation) -> str:
    return "annotated question"


def section_tables(report: ReportData, cells: CellFormat) -> list[SectionTable]:
    annotation = cast("AnnotationSection | None", report.get(SECTION))
    if not annotation:
        return []
    accuracy = annotation["accuracy"]
    title = (
        f"Annotated questions: {annotation['questions']} questions, "
        f"{annotation['executions']} answers (valid {annotation['valid']}, invalid "
        f"{annotation['invalid']}, refusals {annotation.get('refusals', 0)}), accuracy "
        + (f"{100 * accuracy:.1f}%" if accuracy is not None else "-")
        + " (an undefined answer fails)"
    )
    rows: list[tuple[str, ...]] = [
        (
            cells.oracle_name(name),
            str(annotation["tests"][name]),
            str(annotation["errors"][name]),
            cells.rate(annotation["errors"][name], annotation["tests"][name]),
        )
        for name in KIND.oracles
    ]
    tables: list[SectionTable] = [(title, ("test", "tests", "errors", "rate"), rows)]
    if annotation["problems"]:
        problems: list[tuple[str, ...]] = [(str(problem),) for problem in annotation["problems"]]
        tables.append(("Skipped lines of the questions file", ("problem",), problems))
    return tables


def accuracy(section: Mapping[str, Any]) -> AccuracyJSON:
    """Its `accuracy` entry: the annotated answers of those asked (the annotation oracle's
    tests; its variant oracle's are apart), errors and error_rate of the valid answers."""
    asked = int(section["tests"]["annotation"])
    correct = int(section["correct"])
    valid = int(section["valid"])
    refusals = int(section.get("refusals", 0))
    return {
        "asked": asked,
        "valid": valid,
        "correct": correct,
        "errors": valid - correct,
        "refusals": refusals,
        "invalid": asked - valid - refusals,
        "accuracy": ratio(correct, asked),
        "error_rate": ratio(valid - correct, valid),
    }


def headline_counts(report: ReportData) -> tuple[int, int]:
    """Its headline, the failure rate (thesis: an undefined answer fails too): the asked
    questions not answered as annotated."""
    cell = accuracy_cell(report, SECTION)
    asked = int(cell.get("asked", 0))
    return asked - int(cell.get("correct", 0)), asked


KIND = KindInfo(
    TestKind.ANNOTATION,
    "Annotated questions",
    "BoolQ-style questions from a JSONL file, with variants, against their annotation.",
    ("annotation", "variant"),
    None,
    parse_variant,
    judge,
    words=(
        OracleWords(
            "annotation",
            "annotated questions",
            "annotated questions get their annotated answer",
            "An annotated question answered against its annotation",
            sentence=verdict_sentence,
            brief=wrong_answer_brief,
            card_builder="kontest_tui.report.cards.annotation:card",
            answer_from=None,
        ),
    ),
    section_keys=(SECTION,),
    section_tables=section_tables,
    options=OPTIONS,
    report_order=40,
    headline=KindHeadline(
        "annotation failure rate", headline_counts, rank=50, errors_of=("annotation",)
    ),
    not_sampled=("annotation",),  # asked in full: a questions file is never sampled
    accuracy=accuracy,
    conversation_name=conversation_name,
    unbuilt_hint="annotated questions come from a file: use --questions FILE.jsonl",
)
