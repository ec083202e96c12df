"""What every symbol of the model's KG means, one meaning everywhere: the explorer's results
tree, the exported picture (`kontest report --format html`, the explorer's `w`) and the help.

A node shows the answers to the relation from its parent, one per template (`t1:yes`), then
the errors on relations that end at it: `≠` when two phrasings disagreed (a metamorphic
error), `⚠N` its N ontological errors, `✗N` the N errors of the other test kinds; `▸N`, in
the explorer, the errors further down under a collapsed node. `error_marks` counts them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Verdict
from kontest_tui.generate.templates import TemplateSet

METAMORPHIC = ("atomic", "sequential_intra", "sequential_inter")

# (symbol, meaning), in the order a node shows them.
ANSWER_SYMBOLS: tuple[tuple[str, str], ...] = (
    ("yes", "the model answered yes to the relation from the parent (green)"),
    ("no", "it answered no (red)"),
    ("?", "its reply was neither yes nor no"),
    ("idk", "it refused (I don't know)"),
    ("·", "no answer: not asked yet, or the call failed"),
)
ERROR_SYMBOLS: tuple[tuple[str, str], ...] = (
    (
        "≠",
        "two phrasings of a question about a relation ending here got different answers "
        "(alone, or within or across conversations)",
    ),
    (
        "⚠N",
        "N ontological errors: the model's yes-answers imply a relation ending here, "
        "which it answered no",
    ),
    (
        "✗N",
        "N errors of the other test kinds (reworded variants, fact-check questions, "
        "logic rules) on relations ending here",
    ),
    ("▸N", "N errors on relations further down, under this collapsed node (explorer)"),
)
# One line under the explorer's tree (the help, f1, says it all).
TREE_LEGEND = "≠ phrasings disagree · ⚠N implied fact denied · ✗N other tests · ▸N below"

PICTURE_SYMBOLS: tuple[tuple[str, str], ...] = (
    ("red node", "a node with errors on relations ending at it"),
    ("dashed edge", "no template got a yes for this relation (the knowledge gap)"),
)


@dataclass(frozen=True, slots=True)
class ErrorMarks:
    """The error marks of one node: `≠` shown, `⚠N`, `✗N`."""

    metamorphic: int = 0
    ontological: int = 0
    others: int = 0

    @property
    def total(self) -> int:
        return self.metamorphic + self.ontological + self.others

    def text(self) -> str:
        """`≠ ⚠2 ✗1` ("" without errors)."""
        parts = ["≠"] if self.metamorphic else []
        if self.ontological:
            parts.append(f"⚠{self.ontological}")
        if self.others:
            parts.append(f"✗{self.others}")
        return " ".join(parts)


def error_marks(verdicts: Iterable[Verdict]) -> ErrorMarks:
    """The marks of the error verdicts on relations ending at one node."""
    metamorphic = ontological = others = 0
    for verdict in verdicts:
        if not verdict.error:
            continue
        if verdict.oracle in METAMORPHIC:
            metamorphic += 1
        elif verdict.oracle == "ontological":
            ontological += 1
        else:
            others += 1
    return ErrorMarks(metamorphic, ontological, others)


def template_legend(
    template_set: TemplateSet | None, template_ids: Sequence[str]
) -> list[tuple[str, str]]:
    """(template id, its text) for each template of a session, one text per relation type
    joined by " / " ("t1", "Does {parent} have a {child}?")."""
    if template_set is None:
        return [(template_id, "(its text is not stored)") for template_id in template_ids]
    texts = {template.id: template.text for template in template_set.templates}
    return [
        (template_id, clean_text(texts.get(template_id, "")) or "(its text is not stored)")
        for template_id in template_ids
    ]
