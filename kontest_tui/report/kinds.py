"""The test kinds as the reports see them: every kind's report section and compare table,
read from the kinds' registry (kinds/registry.py) in their report order, with the report's
cell formats handed to them (`CELLS`); and what the explorer asks of the registry through
the report: which Report JSON keys are kind sections, which oracles are other kinds'."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from kontest_tui.kinds.base import KindInfo, ReportData, SectionTable
from kontest_tui.kinds.registry import KINDS, all_kinds
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.compare_cells import count_cell, report_rate_cell


class _Cells:
    """The report's cell formats (kinds.base.CellFormat)."""

    def oracle_name(self, oracle: str) -> str:
        from kontest_tui.report.words import oracle_name

        return oracle_name(oracle)

    def percent(self, value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    def rate(self, errors: int, tests: int) -> str:
        return f"{100.0 * errors / tests:.1f}%" if tests else "-"

    def count_cell(self, count: int, of: int) -> str:
        return count_cell(count, of)

    def report_rate_cell(self, report: ReportData, name: str, count: int, of: int) -> str:
        return report_rate_cell(cast(ReportJSON, report), name, count, of)


CELLS = _Cells()


def reported_kinds(reports: Sequence[ReportData] = ()) -> list[KindInfo]:
    """The kinds with a report section or a compare table, in their report order: the
    built-in ones, and the plugins' unless every report names built-in kinds only (then no
    plugin is looked up: a report starts as fast as before plugins)."""
    named = {str(kind) for report in reports for kind in report.get("kinds") or ()}
    known = KINDS if reports and named <= set(KINDS) else all_kinds()
    kinds = [info for info in known.values() if info.section_tables or info.compare_tables]
    return sorted(kinds, key=lambda info: info.report_order)


def kind_section_tables(report: ReportData) -> list[SectionTable]:
    """Every kind's section of a report, as tables, in the kinds' report order."""
    tables: list[SectionTable] = []
    for info in reported_kinds([report]):
        if info.section_tables is not None:
            tables += info.section_tables(report, CELLS)
    return tables


def kind_compare_tables(
    reports: Sequence[ReportData], labels: Sequence[str], *, keys: bool = False
) -> list[SectionTable]:
    """Every kind's `kontest compare` table over these reports (by JSON keys with `keys`)."""
    tables: list[SectionTable] = []
    for info in reported_kinds(reports):
        if info.compare_tables is not None:
            tables += info.compare_tables(reports, labels, CELLS, keys)
    return tables


def kind_section_keys() -> tuple[str, ...]:
    """The Report JSON keys of the kinds' sections (each kind's `section_keys`)."""
    return tuple(key for info in all_kinds().values() for key in info.section_keys)


def idk_oracles() -> frozenset[str]:
    """The oracles whose tests take 'I don't know' as an answer (kinds.base.OracleWords.idk)."""
    return frozenset(w.oracle for info in all_kinds().values() for w in info.words if w.idk)


def kind_oracles() -> tuple[str, ...]:
    """The oracles of the kinds other than KONTEST, in registry order, each once."""
    oracles = (o for info in all_kinds().values() if not info.is_core for o in info.oracles)
    return tuple(dict.fromkeys(oracles))
