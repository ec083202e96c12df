"""A picture of the model's knowledge graph with its errors, as inline SVG.

The KG is drawn as a left-to-right tree in inline SVG (no script, no network: it opens from
a USB stick in a talk or attached to a bug report). Each node carries the atomic answers of
the relation from its parent (`t1:yes t2:no`); a node with error verdicts on relations into
it is red, with its error marks (report.legend: `≠ ⚠N ✗N`) and each verdict in its
tooltip; an edge the model answered *no* to under every template is dashed (a gap);
`errors_only` keeps only the nodes with errors and the way to them, for graphs too big to
read whole. `draw_picture` gives the SVG the session page (report.session_page, `kontest
report --format html`, the explorer's export) embeds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Answer, Relation, Verdict
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.names import NodeNames
from kontest_tui.report.legend import error_marks
from kontest_tui.report.render import describe_error

ROW = 22  # pixels per leaf row
COLUMN = 260  # pixels per tree level
COLOURS = {Answer.YES: "#1a7f37", Answer.NO: "#cf222e", Answer.INVALID: "#9a6700"}
WORDS = {Answer.YES: "yes", Answer.NO: "no", Answer.INVALID: "?", Answer.REFUSAL: "idk"}


@dataclass(frozen=True, slots=True)
class Picture:
    """The SVG of a KG with a session's answers and errors, and what it counts."""

    svg: str
    relations: int
    errors: int  # error verdicts on relations drawn
    nodes_with_errors: int


def draw_picture(
    kg: KnowledgeGraph,
    relations: list[Relation],
    atomic: Mapping[tuple[str, str], Answer | None],
    verdicts: list[Verdict],
    *,
    errors_only: bool = False,
    templates: list[str] | None = None,
) -> Picture:
    """The inline SVG of `kg` (a left-to-right tree) with each node's answers and error
    marks (report.legend); `templates` orders the answers (default: sorted ids)."""
    names = NodeNames(kg)
    by_pair = {(relation.parent, relation.child): relation for relation in relations}
    relation_by_id = {relation.id: relation for relation in relations}
    errors_into: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        relation = relation_by_id.get(verdict.relation_id)
        if verdict.error and relation is not None:
            errors_into.setdefault(relation.child, []).append(verdict)
    if templates is None:
        templates = sorted({template_id for _, template_id in atomic})
    keep = _with_errors_below(kg, set(errors_into)) if errors_only else None

    placed: list[tuple[str, str | None, int, int]] = []  # node, parent, level, row
    row = 0
    seen: set[str] = set()
    for root in kg.roots():
        if keep is not None and root not in keep:
            continue
        stack: list[tuple[str, str | None, int]] = [(root, None, 0)]
        while stack:
            node_id, parent, level = stack.pop()
            placed.append((node_id, parent, level, row))
            row += 1
            if node_id in seen:
                continue  # a node with two parents is drawn under each, its subtree once
            seen.add(node_id)
            children = [child for child in kg.children(node_id) if keep is None or child in keep]
            stack.extend((child, node_id, level + 1) for child in reversed(children))

    # Pre-order: a node's children come right after it, so its last place is theirs.
    position: dict[str, tuple[int, int]] = {}
    parts: list[str] = []
    for node_id, parent, level, at in placed:
        x, y = 10 + level * COLUMN, 20 + at * ROW
        if parent is not None:
            px, py = position.get(parent, (x - COLUMN, y))
            relation = by_pair.get((parent, node_id))
            gap = (
                relation is not None
                and templates
                and all(atomic.get((relation.id, t)) not in (None, Answer.YES) for t in templates)
            )
            dash = ' stroke-dasharray="4 3"' if gap else ""
            parts.append(
                f'<path d="M{px + 4},{py - 4} V{y - 4} H{x - 2}" fill="none" '
                f'stroke="#8c959f"{dash}/>'
            )
        position[node_id] = (x, y)
        errors = errors_into.get(node_id, [])
        label = escape(clean_text(kg.label(node_id)))
        colour = "#cf222e" if errors else "#24292f"
        weight = ' font-weight="bold"' if errors else ""
        tip = [f"{clean_text(kg.label(node_id))} ({node_id})"]
        tip += [
            describe_error(verdict, relation_by_id.get(verdict.relation_id), names)
            for verdict in errors
        ]
        parts.append(f"<g><title>{escape(chr(10).join(tip))}</title>")
        parts.append(
            f'<circle cx="{x + 4}" cy="{y - 4}" r="4" fill="{colour}"/>'
            f'<text x="{x + 12}" y="{y}" fill="{colour}"{weight}>{label}'
        )
        relation = by_pair.get((parent, node_id)) if parent else None
        if relation is not None:
            for template_id in templates:
                answer = atomic.get((relation.id, template_id))
                word = WORDS.get(answer, "·") if answer is not None else "·"
                fill = COLOURS.get(answer, "#8c959f") if answer is not None else "#8c959f"
                parts.append(
                    f'<tspan fill="#8c959f" dx="6">{escape(template_id)}:</tspan>'
                    f'<tspan fill="{fill}">{escape(word)}</tspan>'
                )
        marks = error_marks(errors).text()
        if marks:
            parts.append(f'<tspan dx="6" fill="#cf222e">{escape(marks)}</tspan>')
        parts.append("</text></g>")

    levels = max((level for _, _, level, _ in placed), default=0)
    width = 10 + (levels + 1) * COLUMN + 200
    height = 20 + max(row, 1) * ROW
    total = sum(len(found) for found in errors_into.values())
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
        + "".join(parts)
        + "</svg>"
    )
    return Picture(svg, len(relations), total, len(errors_into))


def _with_errors_below(kg: KnowledgeGraph, marked: set[str]) -> set[str]:
    """The marked nodes and every node above one of them."""
    parents: dict[str, list[str]] = {}
    for edge in kg.edges:
        parents.setdefault(edge.child, []).append(edge.parent)
    keep = set(marked)
    stack = list(marked)
    while stack:
        for parent in parents.get(stack.pop(), []):
            if parent not in keep:
                keep.add(parent)
                stack.append(parent)
    return keep
