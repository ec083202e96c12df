"""The KONTEST kind: two equivalent questions per relation, alone and in sequence (the
paper's paraphrase pairs). The core of every session: its oracles (oracles/evaluate.py), its
report tables, gap and coverage are the report's own, so this entry only names it, builds
it (the suite's conversations) and reads its yes/no replies."""

from __future__ import annotations

from kontest_tui.domain.answers import parse_answer
from kontest_tui.domain.records import Answer, Conversation, TestKind
from kontest_tui.generate.conversations import Suite
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds.base import KindInfo, KindOption, KindOptions
from kontest_tui.oracles.evaluate import KONTEST_MEASURES
from kontest_tui.oracles.ontological import ONTOLOGICAL_RULES


def build(suite: Suite, kg: KnowledgeGraph, options: KindOptions) -> list[Conversation]:
    return [c for c in suite.conversations if c.test_kind == TestKind.KONTEST]


def parse_yes_no(conversation: Conversation, raw: str) -> Answer:
    return parse_answer(raw)


def conversation_name(conversation: Conversation) -> str:
    if conversation.kind == "atomic" or len(conversation.turns) < 2:
        return "asked alone"
    return "one conversation"


KIND = KindInfo(
    TestKind.KONTEST,
    "KONTEST paraphrases",
    "Two equivalent questions per relation, alone and in sequence (6 calls per relation).",
    ("atomic", "sequential_intra", "sequential_inter", "ontological"),
    build,
    parse_yes_no,
    options=(
        KindOption(
            "ontological_rule",
            "--ontological-rule",
            "Ontological rule",
            "Which ontological tests are valid: paper (its text: the test's own answer is yes "
            "or no) or prototype (the KONTEST prototype's: also no chain of invalid answers "
            "joins the two nodes; its Table 10 counts).",
            type="choice",
            default=ONTOLOGICAL_RULES[0],
            choices=ONTOLOGICAL_RULES,
            wizard=False,
        ),
    ),
    aliases=("paraphrases",),
    headline_rate="total",
    states_facts=True,
    headline=KONTEST_MEASURES.headline,
    conversation_name=conversation_name,
)
