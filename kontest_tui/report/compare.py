"""Comparing sessions: the public names of the two parts, for callers that want one import.

- report.compare_pair: two sessions on one KG (their reports and the relations they answer
  differently; the sessions worth comparing with one), the explorer's Compare tab;
- report.compare_many: many sessions as the papers' tables (`kontest compare`), with
  report.compare_variants (the thesis's Table 4), report.compare_html (the standalone page)
  and report.compare_cells (a count with its rate and interval);
- report.stored_compare: the many-session comparison's inputs read from the store.
"""

from __future__ import annotations

from kontest_tui.report.compare_json import CompareJSON
from kontest_tui.report.compare_many import (
    COMPARE_FORMATS,
    CompareEntry,
    build_comparison,
    comparison_tables,
    compute_overlap,
    render_comparison,
)
from kontest_tui.report.compare_pair import (
    AnswerDifference,
    ComparableSessions,
    SessionComparison,
    StoredSessionChoice,
    compare_sessions,
    compare_stored_sessions,
    find_comparable_sessions,
)

__all__ = [
    "COMPARE_FORMATS",
    "AnswerDifference",
    "ComparableSessions",
    "CompareEntry",
    "CompareJSON",
    "SessionComparison",
    "StoredSessionChoice",
    "build_comparison",
    "compare_sessions",
    "compare_stored_sessions",
    "comparison_tables",
    "compute_overlap",
    "find_comparable_sessions",
    "render_comparison",
]
