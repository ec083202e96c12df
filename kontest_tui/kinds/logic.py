"""The logic-rules kind: HalluVault's negation, symmetric, inverse, transitive and composite
rules over the KG's facts (probes/logic.py), 'I don't know' allowed, judged with the
FactChecker questions (probes/evaluate.py); its headline is the hallucination rate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from kontest_tui.domain.extras import PREMISE, LogicExtras, PremiseExtras
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
    wrong_answer_brief,
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
from kontest_tui.oracles.measures import AccuracyJSON, accuracy_cell, ratio
from kontest_tui.probes.templates import LOGIC_RULES

# The HalluVault rules (a logic conversation's meta "rule"), in words.
RULE_NAMES: dict[str, str] = {
    "negation": "negation",
    "symmetric": "symmetry",
    "inverse": "inverse",
    "transitive": "transitivity",
    "composite": "composite",
}
SECTION = "logic"  # its Report JSON key


class LogicTallyJSON(TallyJSON, total=False):
    """A rule's counts (probes.evaluate.LogicTally): each error's cause, and its rates where
    it has answers."""

    error_knowledge: int
    error_inference: int
    error_both: int
    error_unstated: int
    premise_knowledge: int
    premise_inference: int
    premise_unclassified: int
    hallucination_rate: float
    error_rate: float


class LogicSection(LogicTallyJSON, total=False):
    """Its Report JSON section: every rule's counts together, per rule, and the premises."""

    per_rule: dict[str, LogicTallyJSON]
    premises: TallyJSON


LOGIC_HEADER = (
    "rule",
    "asked",
    "valid",
    "errors",
    "refusals",
    "halluc.",
    "of valid",
    "know.",
    "infer.",
    "both",
    "unstated",
    "premise",
)


def rule_name(steps: str) -> str:
    """A logic rule in words: "negation", "composite (inverse, then negation)"."""
    rule, _, chained = steps.partition(":")
    name = RULE_NAMES.get(rule, rule.replace("_", " "))
    if chained:
        return f"{name} ({', then '.join(chained.split('+'))})"
    return name


def build(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    from kontest_tui.probes.logic import build_logic_conversations

    return build_logic_conversations(
        kg,
        suite.relations,
        options.probe_templates(suite.template_set.domain),
        rules=options.rules or LOGIC_RULES,
    )


def conversation_name(conversation: Conversation) -> str:
    extras = conversation.extras
    if isinstance(extras, PremiseExtras):
        return "a rule's premise"
    if isinstance(extras, LogicExtras):
        return f"logic rule: {rule_name(extras.steps or extras.rule)}"
    if conversation.label == PREMISE:
        return "a rule's premise"
    return f"logic rule: {rule_name(conversation.label)}"


def verdict_template(verdict: Verdict) -> str:
    return rule_name(verdict.template_id or "")


def verdict_sentence(verdict: Verdict, first: str, second: str, other: str) -> str:
    return (
        f"the {rule_name(verdict.template_id or 'rule')} rule gives the answer {other}; the "
        f"model said {first}"
    )


def _logic_row(name: str, cell: LogicTallyJSON, cells: CellFormat) -> tuple[str, ...]:
    return (
        name,
        *(str(cell[key]) for key in ("asked", "valid", "errors", "refusals")),
        cells.percent(cell.get("hallucination_rate")),
        cells.percent(cell.get("error_rate")),
        *(
            str(cast("Mapping[str, object]", cell).get(f"error_{cause}", "-"))
            for cause in ("knowledge", "inference", "both", "unstated")
        ),
        "/".join(
            str(cast("Mapping[str, object]", cell).get(f"premise_{cause}", "-"))
            for cause in ("knowledge", "inference", "unclassified")
        ),
    )


def section_tables(report: ReportData, cells: CellFormat) -> list[SectionTable]:
    section = cast("LogicSection | None", report.get(SECTION))
    if not section:
        return []
    per_rule = section.get("per_rule", {})
    rows = [_logic_row(rule_name(name), cell, cells) for name, cell in per_rule.items()]
    rows.append(_logic_row("total", section, cells))
    tables: list[SectionTable] = [
        (
            "Logic rules (HalluVault): halluc. = hallucination rate, errors of all responses "
            "('I don't know' is a normal response); of valid = errors of yes/no answers. "
            "Causes by the answer oracle (the stated knowledge vs the rule's knowledge "
            "points): knowledge, inference, both, unstated; by the premise questions "
            "(second signal): knowledge/inference/unclassified",
            LOGIC_HEADER,
            rows,
        )
    ]
    premises = section.get("premises")
    if premises:
        tables.append(
            (
                "Premises (each distinct KG fact a rule rests on, asked once)",
                ("premises", *TALLY_HEADER),
                [tally_row("premises", premises)],
            )
        )
    return tables


def compare_tables(
    reports: Sequence[ReportData], labels: Sequence[str], cells: CellFormat, keys: bool
) -> list[SectionTable]:
    """HalluVault's hallucination rate per rule per model, with each error's cause."""
    if not any(report.get(SECTION) for report in reports):
        return []
    name_of = str if keys else rule_name
    sections = [report.get(SECTION) or {} for report in reports]
    rows = []
    for rule, per_report in per_key_cells(sections, "per_rule"):
        shown_cells = []
        for report, cell in zip(reports, per_report, strict=True):
            if not cell:
                shown_cells.append("-")
                continue
            split = "/".join(
                str(cell.get(f"error_{cause}", 0))
                for cause in ("knowledge", "inference", "both", "unstated")
            )
            shown = (
                cells.report_rate_cell(report, "hallucination", cell["errors"], cell["asked"])
                if rule == "total"
                else cells.count_cell(cell["errors"], cell["asked"])
            )
            shown_cells.append(f"{shown} k/i/b/u {split}")
        rows.append((name_of(rule), *shown_cells))
    return [
        (
            "Logic hallucination rate, errors / all responses ('I don't know' is a normal "
            "response; HalluVault Fig. 6a overall, Fig. 11 per rule; 95% Wilson, the total "
            "clustered by fact with its design effect; k/i/b/u = the answer oracle's "
            "error-knowledge, error-inference, both, no reasoning stated)",
            ("rule", *labels),
            rows,
        )
    ]


def accuracy(section: Mapping[str, Any]) -> AccuracyJSON:
    """Its `accuracy` entry (kinds.probe_kinds.probe_accuracy) and HalluVault's
    hallucination_rate, errors of asked: a refusal is a normal response."""
    found = probe_accuracy(section)
    found["hallucination_rate"] = ratio(int(section["errors"]), int(section["asked"]))
    return found


def headline_counts(report: ReportData) -> tuple[int, int]:
    """Its headline, the hallucination rate (HalluVault): errors of all responses."""
    cell = accuracy_cell(report, SECTION)
    return int(cell.get("errors", 0)), int(cell.get("asked", 0))


KIND = KindInfo(
    TestKind.LOGIC,
    "Logic rules",
    "Negation, symmetric, inverse, transitive and composite rules; 'I don't know' allowed.",
    ("logic",),
    build,
    parse_probe,
    judge_probes,
    words=(
        OracleWords(
            "logic",
            "logic rules",
            "facts derived by logic rules get the rule's answer",
            "A fact derived by a logic rule answered wrongly",
            idk=True,
            template=verdict_template,
            sentence=verdict_sentence,
            brief=wrong_answer_brief,
            card_builder="kontest_tui.report.cards.logic:card",
            answer_from="follows by the rule from",
        ),
    ),
    section_keys=(SECTION,),
    section_tables=section_tables,
    compare_tables=compare_tables,
    options=(
        KindOption(
            "rules",
            "--rules",
            "Logic rules",
            "Logic rules to ask: negation, symmetric, inverse, transitive, composite "
            "(default all).",
            type="names",
            choices=LOGIC_RULES,
            item="rule",
            control="rule",
            metavar="RULE[,RULE]",
        ),
        PROBES_OPTION,
    ),
    report_order=20,
    aliases=("rules",),
    controls_label="Rules",
    headline_rate="hallucination",
    headline=KindHeadline(
        "hallucination rate", headline_counts, rank=20, errors_of=("logic",), bar=True
    ),
    accuracy=accuracy,
    conversation_name=conversation_name,
)
