"""A summary of a KG for `kontest kg info` and the explorer: sizes, roots, depth, paths, relations.

Paths and relations are counted as `generate.relations` (Algorithm 1) makes them, so the
numbers shown here are exactly what a run would generate from the same KG, depth and mode;
they are counted without being made (a 2,000-node chain has 1,999,000 relations).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from kontest_tui.generate.relations import count_relations
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.paths import count_paths, iter_paths, measure_depth

ROOTS_SHOWN = 12


@dataclass(frozen=True)
class GraphSummary:
    """What `kontest kg info` prints; `to_dict()` is its `--json` form."""

    name: str
    domain: str
    source: str
    built: str
    nodes: int
    edges: int
    roots: list[str]  # labels of the root nodes, in node order
    max_depth: int  # edges on the longest root-to-leaf path (no depth bound)
    depth: int | None  # the depth bound used for paths and relations (None: no bound)
    paths: int  # root-to-leaf paths within the depth bound
    per_path: bool  # relations counted per path (paper) instead of deduplicated by node ids
    relations: int
    relations_by_type: dict[str, int] = field(default_factory=dict)
    node_types: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def describe_graph(
    kg: KnowledgeGraph,
    depth: int | None = None,
    per_path: bool = False,
    relations_by_type: Counter[str] | None = None,
) -> GraphSummary:
    """Count nodes, edges, roots, depth, depth-bounded paths and relations by type
    (`relations_by_type` when the caller counted them already, walking the relations)."""
    by_type = (
        count_relations(kg, depth=depth, per_path=per_path)  # refuses too many paths
        if relations_by_type is None
        else relations_by_type
    )
    paths = count_paths(kg, depth) or sum(1 for _ in iter_paths(kg, depth, guard=False))
    node_types = Counter(node.type or "(none)" for node in kg.nodes.values())
    return GraphSummary(
        name=kg.name,
        domain=kg.domain,
        source=kg.source,
        built=kg.built,
        nodes=len(kg.nodes),
        edges=len(kg.edges),
        roots=[kg.label(node_id) for node_id in kg.roots()],
        max_depth=measure_depth(kg),
        depth=depth,
        paths=paths,
        per_path=per_path,
        relations=by_type.total(),
        relations_by_type=dict(sorted(by_type.items())),
        node_types=dict(sorted(node_types.items())),
    )


def format_summary(summary: GraphSummary) -> str:
    """The plain-text report of `kontest kg info`."""
    shown = summary.roots[:ROOTS_SHOWN]
    roots = ", ".join(shown)
    if len(summary.roots) > len(shown):
        roots += f", ... ({len(summary.roots) - len(shown)} more)"
    bound = "no depth bound" if summary.depth is None else f"depth <= {summary.depth}"
    mode = "counted per path" if summary.per_path else "deduplicated by node ids"
    lines = [
        f"KG         {summary.name}" + (f" (domain {summary.domain})" if summary.domain else ""),
    ]
    if summary.source:
        lines.append(f"Source     {summary.source}")
    if summary.built:
        lines.append(f"Built      {summary.built}")
    lines += [
        f"Nodes      {summary.nodes}",
        f"Edges      {summary.edges}",
        f"Roots      {len(summary.roots)}: {roots}",
        f"Max depth  {summary.max_depth}",
        f"Paths      {summary.paths} ({bound})",
        f"Relations  {summary.relations} ({mode})",
    ]
    width = max((len(name) for name in summary.relations_by_type), default=0)
    lines += [f"  {name:<{width}}  {count}" for name, count in summary.relations_by_type.items()]
    types = ", ".join(f"{name} {count}" for name, count in summary.node_types.items())
    lines.append(f"Node types {types}")
    return "\n".join(lines)
