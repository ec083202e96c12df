"""The FactChecker kind: yes-no (balanced with false distractors), multiple-choice, WH and
two-hop questions built from the KG's facts (probes/factcheck.py), judged against the KG's
answer (probes/evaluate.py, with the logic rules)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from kontest_tui.domain.extras import CHOICE_TYPES, WH, FactcheckExtras
from kontest_tui.domain.records import Conversation, TestKind, Verdict
from kontest_tui.generate.conversations import Suite
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds.base import (
    CellFormat,
    KindHeadline,
    KindInfo,
    KindOption,
    KindOptions,
    OracleWords,
    ReportData,
    SectionTable,
)
from kontest_tui.kinds.probe_kinds import (
    PROBES_OPTION,
    TALLY_HEADER,
    TallyJSON,
    judge_probes,
    parse_probe,
    per_key_cells,
    probe_accuracy,
    tally_row,
)
from kontest_tui.oracles.measures import accuracy_cell
from kontest_tui.probes.templates import QUESTION_TYPES

# The question types (a conversation's meta "question_type"), short enough for a heading.
QUESTION_NAMES: dict[str, str] = {
    "yes_no": "yes-or-no question",
    "multiple_choice": "multiple-choice question",
    "wh": "open question",
    "two_hop": "two-step yes-or-no question",
    "two_hop_choice": "two-step multiple-choice question",
}
SECTION = "factcheck"  # its Report JSON key


class FactcheckSection(TallyJSON):
    """Its Report JSON section (probes.evaluate.ProbeEvaluation): the counts of every
    question, per question type and per relation type, and which matcher judged WH answers."""

    per_type: dict[str, TallyJSON]
    per_relation_type: dict[str, TallyJSON]
    wh_matchers: dict[str, int]


def question_name(question_type: str) -> str:
    """A FactChecker question type in words: "multiple-choice question"."""
    return QUESTION_NAMES.get(question_type, question_type.replace("_", " "))


def build(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    from kontest_tui.probes.factcheck import build_factcheck_conversations

    return build_factcheck_conversations(
        kg,
        suite.relations,
        options.probe_templates(suite.template_set.domain),
        seed=options.seed,
        question_types=options.question_types or QUESTION_TYPES,
    )


def answer_format(conversation: Conversation) -> str:
    """A multiple-choice letter ("choice"), a name ("open": WH questions) or yes/no."""
    question_type = getattr(conversation.extras, "question_type", None)
    if question_type in CHOICE_TYPES:
        return "choice"
    if question_type == WH:
        return "open"
    return "yes_no"


def conversation_name(conversation: Conversation) -> str:
    extras = conversation.extras
    if isinstance(extras, FactcheckExtras):
        qtype, wrong = extras.question_type, " (a wrong name)" if extras.distractor else ""
    else:
        qtype, wrong = conversation.label.split(":", 1)[0], ""
    return f"fact check: {question_name(qtype)}{wrong}"


CHOICES = ("multiple_choice", "two_hop_choice")  # question types answered by a letter


def verdict_template(verdict: Verdict) -> str:
    return question_name((verdict.template_id or "").split(":", 1)[0])


def verdict_sentence(verdict: Verdict, first: str, second: str, other: str) -> str:
    qtype = (verdict.template_id or "").split(":", 1)[0]
    if qtype in CHOICES:
        return f"{QUESTION_NAMES[qtype]}: the model chose a wrong option"
    if qtype == "wh":
        return "open question: the model's reply does not name the right entity"
    name = QUESTION_NAMES.get(qtype, "fact check")
    return f"{name}: the right answer is {other}; the model said {first}"


def verdict_brief(verdict: Verdict, first: str, second: str, other: str) -> str:
    if (verdict.template_id or "").startswith((*CHOICES, "wh")):
        return "a wrong answer"
    return f"said {first}, the right answer is {other}"


def section_tables(report: ReportData, cells: CellFormat) -> list[SectionTable]:
    section = cast("FactcheckSection | None", report.get(SECTION))
    if not section:
        return []
    rows = [tally_row(question_name(name), cell) for name, cell in section["per_type"].items()]
    rows.append(tally_row("total", section))
    by_relation = [tally_row(name, cell) for name, cell in section["per_relation_type"].items()]
    return [
        ("FactChecker questions", ("question type", *TALLY_HEADER), rows),
        ("FactChecker by relation type", ("relation type", *TALLY_HEADER), by_relation),
    ]


def compare_tables(
    reports: Sequence[ReportData], labels: Sequence[str], cells: CellFormat, keys: bool
) -> list[SectionTable]:
    """FactChecker accuracy per question type per model (its Tables 5 and 6)."""
    if not any(report.get(SECTION) for report in reports):
        return []
    name_of = str if keys else question_name
    sections = [report.get(SECTION) or {} for report in reports]
    rows = [
        (name_of(qtype), *(cells.count_cell(c["correct"], c["asked"]) if c else "-" for c in per))
        for qtype, per in per_key_cells(sections, "per_type")
    ]
    return [
        (
            "FactChecker accuracy, correct / asked (Tables 5, 6; 95% Wilson)",
            ("question type", *labels),
            rows,
        )
    ]


def headline_counts(report: ReportData) -> tuple[int, int]:
    """Its headline, FactChecker's accuracy: the correct answers of those asked."""
    cell = accuracy_cell(report, SECTION)
    return int(cell.get("correct", 0)), int(cell.get("asked", 0))


KIND = KindInfo(
    TestKind.FACTCHECK,
    "FactChecker questions",
    "Yes-no (balanced with false distractors), multiple choice, WH and 2-hop questions.",
    ("factcheck",),
    build,
    parse_probe,
    judge_probes,
    words=(
        OracleWords(
            "factcheck",
            "fact checks",
            "fact-check questions get the knowledge graph's answer",
            "A fact-check question answered wrongly",
            template=verdict_template,
            sentence=verdict_sentence,
            brief=verdict_brief,
            card_builder="kontest_tui.report.cards.factcheck:card",
            answer_from="comes from",
        ),
    ),
    section_keys=(SECTION,),
    section_tables=section_tables,
    compare_tables=compare_tables,
    options=(
        KindOption(
            "question_types",
            "--question-types",
            "FactChecker",
            "FactChecker question types to ask (default all).",
            type="names",
            choices=QUESTION_TYPES,
            item="question type",
            control="qtype",
            metavar="TYPE[,TYPE]",
        ),
        PROBES_OPTION,
    ),
    report_order=10,
    aliases=("facts",),
    headline=KindHeadline("FactChecker accuracy", headline_counts, rank=30, bar=True),
    accuracy=probe_accuracy,
    controls_label="FactChecker",
    conversation_name=conversation_name,
    answer_format=answer_format,
)
