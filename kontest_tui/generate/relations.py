"""Relations of a knowledge graph: Algorithm 1 of the KONTEST paper.

The paths come from kg.paths (root to leaf, at most `depth` edges). Every ordered ancestor -> descendant pair (ni, nj), i < j, on a path
is a relation "ni contains nj". Relations are deduplicated by node ids unless `per_path`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator

from kontest_tui.domain.records import Relation
from kontest_tui.errors import TemplateError
from kontest_tui.generate.templates import TemplateSet, template_set_for_domain
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.paths import iter_paths

FALLBACK_TYPE = "contains"


def known_relation_types(kg: KnowledgeGraph) -> TemplateSet | None:
    """The template set for the KG's domain, or None when there is none (or it is broken)."""
    try:
        return template_set_for_domain(kg.domain)
    except TemplateError:
        return None


def _type_of(
    kg: KnowledgeGraph,
    parent_id: str,
    child_id: str,
    known: Collection[str] | None,
    default: str,
) -> str:
    parent = kg.nodes.get(parent_id)
    child = kg.nodes.get(child_id)
    if parent is not None and child is not None and parent.type and child.type:
        typed = f"{parent.type}->{child.type}"
        if known is None or typed in known:
            return typed
    return default


def relation_type(
    kg: KnowledgeGraph,
    parent_id: str,
    child_id: str,
    template_set: TemplateSet | None = None,
) -> str:
    """The relation type of a pair: "<parent type>-><child type>" when both nodes have types
    and the template set has texts for it, else the template set's default type ("contains"
    for places). Without a template set for the domain, typed pairs keep their type."""
    template_set = template_set or known_relation_types(kg)
    if template_set is None:
        return _type_of(kg, parent_id, child_id, None, FALLBACK_TYPE)
    return _type_of(
        kg, parent_id, child_id, set(template_set.relation_types), template_set.default_type
    )


def extract_relations(
    kg: KnowledgeGraph,
    depth: int | None = None,
    per_path: bool = False,
    template_set: TemplateSet | None = None,
    paths: Iterable[tuple[str, ...]] | None = None,
) -> list[Relation]:
    """Every ancestor -> descendant pair on every path (Algorithm 1).

    Default: one relation per (parent, child) node pair, id "PARENT>CHILD", its path taken
    from the first path it appears on. `per_path`: every pair on every path, id
    "pN:PARENT>CHILD" with N the 0-based index of the path in `find_paths` order.
    `template_set` decides the relation types (default: the one for the KG's domain).
    """
    return list(iter_relations(kg, depth, per_path, template_set, paths))


def iter_relations(
    kg: KnowledgeGraph,
    depth: int | None = None,
    per_path: bool = False,
    template_set: TemplateSet | None = None,
    paths: Iterable[tuple[str, ...]] | None = None,
    *,
    guard: bool = True,
) -> Iterator[Relation]:
    """The relations of `extract_relations` in the same order, made as they are read: the
    first N cost in proportion to N, not to the KG (`--limit`; such a caller passes
    `guard=False`, else a KG of more than kg.paths.MAX_PATHS paths is refused up front)."""
    if paths is None:
        paths = iter_paths(kg, depth, guard=guard)
    template_set = template_set or known_relation_types(kg)
    known = set(template_set.relation_types) if template_set is not None else None
    default = template_set.default_type if template_set is not None else FALLBACK_TYPE
    node_types = {node_id: node.type for node_id, node in kg.nodes.items()}
    types: dict[tuple[str, str], str] = {}  # (parent type, child type) -> relation type
    seen: set[tuple[str, str]] = set()
    for index, path in enumerate(paths):
        prefix = f"p{index}:" if per_path else ""
        for i in range(len(path) - 1):
            parent = path[i]
            parent_type = node_types.get(parent, "")
            for j in range(i + 1, len(path)):
                child = path[j]
                if not per_path:
                    if (parent, child) in seen:
                        continue
                    seen.add((parent, child))
                type_pair = (parent_type, node_types.get(child, ""))
                kind = types.get(type_pair)
                if kind is None:
                    kind = types[type_pair] = _type_of(kg, parent, child, known, default)
                yield Relation(f"{prefix}{parent}>{child}", parent, child, kind, path[i : j + 1])
