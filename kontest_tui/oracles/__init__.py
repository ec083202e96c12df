"""Test oracles and metrics: metamorphic, ontological, coverage/gap, and `evaluate` over all.

The variant and annotation oracles (covering-array extension) live in their own modules here.
"""

from kontest_tui.oracles.coverage import GapReport, compute_gap
from kontest_tui.oracles.evaluate import Evaluation, RelationSummary, evaluate
from kontest_tui.oracles.metamorphic import find_metamorphic_verdicts
from kontest_tui.oracles.ontological import build_sut_graph, find_ontological_verdicts

__all__ = [
    "Evaluation",
    "GapReport",
    "RelationSummary",
    "build_sut_graph",
    "compute_gap",
    "evaluate",
    "find_metamorphic_verdicts",
    "find_ontological_verdicts",
]
