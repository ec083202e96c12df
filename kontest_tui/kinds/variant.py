"""The covering-array variants kind (KomMKonLLM thesis): each question with synonyms and
aliases swapped in, a t-way covering array of them (generate/variants.py), judged by whether
a variant's answer flips against the original's (oracles/variant.py). Annotated questions
(kinds/annotation.py) are asked as such variants too, with the same options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NotRequired, TypedDict, cast

from kontest_tui.domain.extras import VariantExtras
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, TestKind, Verdict
from kontest_tui.generate.conversations import Suite
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds.base import (
    CellFormat,
    KindDelta,
    KindHeadline,
    KindInfo,
    KindOption,
    KindOptions,
    KindResult,
    OracleWords,
    ReportData,
    SectionTable,
)
from kontest_tui.kinds.kontest import parse_yes_no
from kontest_tui.kinds.refusals import count_refusals
from kontest_tui.oracles.measures import consistency_counts

SECTION = "variants"  # its Report JSON key


class FlipCauseJSON(TypedDict):
    """A word a variant swapped, what replaced it, and how often that flipped the answer."""

    word: str
    value: str
    flips: int
    uses: int


class VariantsSection(TypedDict):
    """Its Report JSON section (oracles.variant.summarize_variants, and the refusals)."""

    queries: int
    variants: int
    executions: int
    tests: int
    errors: int
    queries_with_flips: int
    flip_causes: list[FlipCauseJSON]
    refusals: NotRequired[int]


# The variant options, which annotated questions take too.
OPTIONS = (
    KindOption(
        "strength",
        "--strength",
        "Strength",
        "Covering-array strength t of the variants.",
        type="int",
        default=2,
        minimum=1,
        maximum=4,
        wizard=False,  # the explorer's Variants step sets it, beside the arrays it makes
    ),
    KindOption(
        "postfix",
        "--postfix",
        "end with '? Return a JSON Boolean.'",
        'Variants end with "? Return a JSON Boolean." and answers are read as JSON.',
        type="flag",
        default=False,
        control="variant-postfix",
        hint="Ask every covering-array variant for a JSON Boolean answer",
    ),
    KindOption(
        "variant_limit",
        "--variant-limit",
        "max per question",
        "At most this many variants per question.",
        type="int",
        minimum=1,
        control="variant-limit",
        hint="At most this many variants per question (blank: the whole covering array); "
        "also for annotated questions",
    ),
)


def build(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    from kontest_tui.generate.variants import build_variant_conversations

    return build_variant_conversations(
        kg,
        suite.relations,
        suite.template_set,
        suite.template_ids,
        strength=options.strength,
        seed=options.seed,
        limit=options.variant_limit,
        postfix=options.postfix,
    )


def parse_variant(conversation: Conversation, raw: str) -> Answer:
    from kontest_tui.generate.variants import parse_variant_answer

    return parse_variant_answer(conversation, raw) or parse_yes_no(conversation, raw)


def judge(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str],
) -> KindResult:
    from kontest_tui.oracles.variant import summarize_variants

    verdicts, section = summarize_variants(conversations, answers)
    section["refusals"] = count_refusals(conversations, raw, answers)
    return KindResult(verdicts, {SECTION: section})


def verdict_sentence(verdict: Verdict, first: str, second: str, other: str) -> str:
    from kontest_tui.oracles.variant import verdict_changes

    changes = verdict_changes(verdict)
    reworded = f"reworded ({changes})" if changes else "reworded"
    return f"the question got {first}; {reworded}, it got {second}"


def verdict_brief(verdict: Verdict, first: str, second: str, other: str) -> str:
    from kontest_tui.oracles.variant import verdict_changes

    changes = verdict_changes(verdict)
    return f"{first}, reworded{f' ({changes})' if changes else ''} {second}"


def conversation_name(conversation: Conversation) -> str:
    extras = conversation.extras
    if not isinstance(extras, VariantExtras):
        return "variant"
    return "original question" if extras.variant == 0 else f"variant {extras.variant}"


def section_tables(report: ReportData, cells: CellFormat) -> list[SectionTable]:
    variants = cast("VariantsSection | None", report.get(SECTION))
    if not variants:
        return []
    title = (
        f"Covering-array variants: {variants['variants']} variants of {variants['queries']} "
        f"questions, {variants['executions']} answered, {variants['errors']} of "
        f"{variants['tests']} disagree with the original ({variants['queries_with_flips']} "
        f"questions flip; {variants.get('refusals', 0)} refusals)"
    )
    rows: list[tuple[str, ...]] = [
        (cause["word"], cause["value"], str(cause["flips"]), str(cause["uses"]))
        for cause in variants["flip_causes"]
    ]
    return [(title, ("word", "replaced by", "flips", "uses"), rows)]


def compare_tables(
    reports: Sequence[ReportData], labels: Sequence[str], cells: CellFormat, keys: bool
) -> list[SectionTable]:
    """The thesis's measures per model: variant flips and the accuracy of annotated
    questions (asked as variants: the thesis reports both in one table)."""
    flips = any((report.get("consistency") or {}).get("variant") for report in reports)
    annotated = any(report.get("annotation") for report in reports)
    if not (flips or annotated):
        return []
    rows = []
    if flips:
        shown = []
        for report in reports:
            cell = (report.get("consistency") or {}).get("variant")
            if cell is None:
                shown.append("-")
                continue
            shown.append(cells.report_rate_cell(report, "variant", cell["errors"], cell["tests"]))
        rows.append(("variant flips / tests", *shown))
    if annotated:
        shown = []
        for report in reports:
            accuracy = (report.get("accuracy") or {}).get("annotation")
            shown.append(
                cells.count_cell(int(accuracy["correct"] or 0), int(accuracy["asked"] or 0))
                if accuracy
                else "-"
            )
        rows.append(("annotation accuracy", *shown))
    return [
        (
            "Covering-array variants (thesis; the flips with the report's 95% interval "
            "clustered by fact and its design effect, the accuracy 95% Wilson)",
            ("measure", *labels),
            rows,
        )
    ]


def headline_counts(report: ReportData) -> tuple[int, int]:
    """Its headline, the flip rate: variants answered against the original, of the tests."""
    return consistency_counts(report, "variant")


def delta_counts(section: Mapping[str, object]) -> tuple[int, int]:
    """Its measure in a delta: the variants that disagree with their original, of the tests."""
    variants = cast("VariantsSection", section)
    return int(variants["errors"]), int(variants["tests"])


KIND = KindInfo(
    TestKind.VARIANT,
    "Covering-array variants",
    "Each question with synonyms and aliases swapped in, a t-way covering array of them.",
    ("variant",),
    build,
    parse_variant,
    judge,
    words=(
        OracleWords(
            "variant",
            "reworded variants",
            "reworded variants of a question agree",
            "Changing a few words flipped the answer",
            sentence=verdict_sentence,
            brief=verdict_brief,
            card_builder="kontest_tui.report.cards.variant:card",
        ),
    ),
    section_keys=(SECTION,),
    section_tables=section_tables,
    compare_tables=compare_tables,
    options=OPTIONS,
    report_order=30,
    aliases=("variants",),
    controls_label="Variants",
    shortcut="--variants",
    headline_rate="variant",
    states_facts=True,
    headline=KindHeadline("variant flip rate", headline_counts, rank=40, errors_of=("variant",)),
    consistency="variant",
    delta=KindDelta("variants", "variants disagreeing (of variant tests)", delta_counts),
    conversation_name=conversation_name,
)
