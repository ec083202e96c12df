"""The report sections of the other test kinds as tables: FactChecker, logic rules, variants.

Reads the Report JSON's "factcheck", "logic", "variants" and "annotation" keys (the
sections `oracles.evaluate.evaluate_all` adds, the ones `kontest report` prints); it
computes nothing, only lays the engine's figures out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

SECTIONS = ("factcheck", "logic", "variants", "annotation")
TALLY_COLUMNS = ("asked", "valid", "correct", "errors", "refusals", "accuracy")
TOP_FLIP_CAUSES = 12


def has_kind_sections(report: Mapping[str, Any]) -> bool:
    """Whether a report has any section of another test kind (KONTEST-only reports do not)."""
    return any(report.get(name) for name in SECTIONS)


def new_table() -> Table:
    return Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)


def heading(title: str) -> Text:
    """A section title, with a blank line above it."""
    return Text(f"\n{title}", style="bold")


def tally_table(first: str, rows: Mapping[str, Mapping[str, Any]]) -> Table:
    """asked / valid / correct / errors / refusals / accuracy per question type, rule, ..."""
    table = new_table()
    table.add_column(first)
    for column in TALLY_COLUMNS:
        table.add_column(column, justify="right")
    for name, cell in rows.items():
        style = "bold" if name == "total" else ""
        errors = int(cell.get("errors", 0))
        table.add_row(
            Text(str(name), style=style),
            str(cell.get("asked", 0)),
            str(cell.get("valid", 0)),
            str(cell.get("correct", 0)),
            Text(str(errors), style="bold red" if errors else "green"),
            Text(str(cell.get("refusals", 0)), style="yellow" if cell.get("refusals") else ""),
            f"{float(cell.get('accuracy', 0.0)):.1f}%",
        )
    return table


def with_total(rows: Mapping[str, Any], section: Mapping[str, Any]) -> dict[str, Any]:
    """The rows of a section, then its own totals as a `total` row."""
    return {**rows, "total": section}


def render_variants(variants: Mapping[str, Any]) -> list[RenderableType]:
    """The variants summary and the word choices that flip answers most."""
    summary = Text()
    summary.append(
        f"{variants.get('variants', 0)} variants of {variants.get('queries', 0)} questions, "
        f"{variants.get('executions', 0)} answered; "
    )
    errors = int(variants.get("errors", 0))
    summary.append(str(errors), style="bold red" if errors else "green")
    summary.append(
        f" of {variants.get('tests', 0)} disagree with the original "
        f"({variants.get('queries_with_flips', 0)} questions flip)"
    )
    causes: Sequence[Mapping[str, Any]] = variants.get("flip_causes") or []
    parts: list[RenderableType] = [heading("Covering-array variants"), summary]
    if not causes:
        return [*parts, Text("No word choice flipped an answer.", style="italic")]
    parts.append(heading("Top flip causes: the word, the value put in, flips / uses"))
    table = new_table()
    for column, justify in (("word", "left"), ("replaced by", "left"), ("flips", "right"),
                            ("uses", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for cause in causes[:TOP_FLIP_CAUSES]:
        table.add_row(
            Text(str(cause["word"])),
            Text(str(cause["value"])),
            Text(str(cause["flips"]), style="bold red"),
            str(cause["uses"]),
        )
    parts.append(table)
    if len(causes) > TOP_FLIP_CAUSES:
        parts.append(Text(f"… {len(causes) - TOP_FLIP_CAUSES} more", style="dim"))
    return parts


def render_annotation(annotation: Mapping[str, Any]) -> list[RenderableType]:
    """Annotated questions: accuracy against the annotation, variant agreement, problems."""
    accuracy = annotation.get("accuracy")
    text = Text()
    text.append(
        f"{annotation.get('questions', 0)} questions, {annotation.get('executions', 0)} answers "
        f"(valid {annotation.get('valid', 0)}, invalid {annotation.get('invalid', 0)}), accuracy "
        + (f"{100 * float(accuracy):.1f}%" if accuracy is not None else "-")
    )
    tests = annotation.get("tests") or {}
    errors = annotation.get("errors") or {}
    for name in ("annotation", "variant"):
        text.append(f"\n  {name}: {errors.get(name, 0)} errors of {tests.get(name, 0)} tests")
    parts: list[RenderableType] = [heading("Annotated questions"), text]
    problems = annotation.get("problems") or []
    if problems:
        parts.append(heading("Skipped lines of the questions file"))
        parts.append(Text("\n".join(str(problem) for problem in problems), style="yellow"))
    return parts


def render_kind_sections(report: Mapping[str, Any]) -> RenderableType:
    """Every other-kind section of a report, one after the other."""
    parts: list[RenderableType] = []
    kinds = report.get("kinds")
    if kinds:
        parts.append(Text("Test kinds asked: " + ", ".join(map(str, kinds)), style="dim"))
    factcheck = report.get("factcheck")
    if factcheck:
        parts.append(heading("FactChecker questions"))
        parts.append(
            tally_table("question type", with_total(factcheck.get("per_type") or {}, factcheck))
        )
        parts.append(heading("FactChecker by relation type"))
        parts.append(tally_table("relation type", factcheck.get("per_relation_type") or {}))
    logic = report.get("logic")
    if logic:
        parts.append(heading("Logic rules ('I don't know' is a refusal, not an error)"))
        parts.append(tally_table("rule", with_total(logic.get("per_rule") or {}, logic)))
    variants = report.get("variants")
    if variants:
        parts.extend(render_variants(variants))
    annotation = report.get("annotation")
    if annotation:
        parts.extend(render_annotation(annotation))
    if not parts:
        return Text("This session asked only KONTEST paraphrases.", style="italic")
    return Group(*parts)


class KindSections(Static):
    """The sections of the test kinds other than KONTEST in one report."""

    def show_report(self, report: Mapping[str, Any]) -> None:
        self.update(render_kind_sections(report))
