"""Relations of a knowledge graph: Algorithm 1 of the KONTEST paper.

The paths come from kg.paths (root to leaf, at most `depth` edges). Every ordered ancestor -> descendant pair (ni, nj), i < j, on a path
is a relation "ni contains nj". Relations are deduplicated by node ids unless `per_path`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator

from kontest_tui.domain.records import Relation
from kontest_tui.errors import TemplateError
from kontest_tui.generate.templates import TemplateSet, template_set_for_domain
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.paths import check_path_count, iter_paths

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
    if parent is None or child is None:
        return default
    return _pair_type(parent.type, child.type, known, default)


def _pair_type(
    parent_type: str, child_type: str, known: Collection[str] | None, default: str
) -> str:
    """The relation type of a pair of nodes of these types (see `relation_type`)."""
    if parent_type and child_type:
        typed = f"{parent_type}->{child_type}"
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


def count_relations(
    kg: KnowledgeGraph,
    depth: int | None = None,
    per_path: bool = False,
    template_set: TemplateSet | None = None,
) -> Counter[str]:
    """Relations by type, as `Counter(r.type for r in extract_relations(...))` counts them,
    without making one (`kontest kg info`, the explorer's summary). In a forest (no node with
    two parents: every chain and tree) they are counted in one walk, O(nodes x node types):
    a node k edges below its root is the child of k relations, once per path through it
    when `per_path`. Elsewhere the pairs of each path are counted (no relation is made).
    More than kg.paths.MAX_PATHS paths is refused as `extract_relations` refuses it."""
    check_path_count(kg, depth)
    template_set = template_set or known_relation_types(kg)
    known = set(template_set.relation_types) if template_set is not None else None
    default = template_set.default_type if template_set is not None else FALLBACK_TYPE
    if all(len(kg.parents(node_id)) <= 1 for node_id in kg.nodes):
        pairs = _forest_type_pairs(kg, depth, per_path)
    else:
        pairs = _path_type_pairs(kg, depth, per_path)
    counts: Counter[str] = Counter()
    for (parent_type, child_type), count in pairs.items():
        counts[_pair_type(parent_type, child_type, known, default)] += count
    return counts


def _forest_type_pairs(
    kg: KnowledgeGraph, depth: int | None, per_path: bool
) -> Counter[tuple[str, str]]:
    """(parent type, child type) -> relations, for a KG where no node has two parents: a
    depth-first walk from each root keeping the types of the nodes above the current one
    (a node in a cycle without a root is on no path, as in iter_paths)."""
    limit = depth if depth is not None else len(kg.nodes)
    types = {node_id: node.type for node_id, node in kg.nodes.items()}
    pairs: Counter[tuple[str, str]] = Counter()
    above: Counter[str] = Counter()  # the types of the nodes above the top of the stack

    def add(child: str, times: int) -> None:
        for parent_type, count in above.items():
            if count:
                pairs[parent_type, types[child]] += count * times

    for root in kg.roots():
        # (node, the paths through it, its children not walked yet), the way down
        stack: list[tuple[str, list[int], Iterator[str]]] = [(root, [0], iter(kg.children(root)))]
        while stack:
            node, _, children = stack[-1]
            child = next(children, None)
            if child is not None:
                above[types[node]] += 1
                below = kg.children(child) if len(stack) < limit else []
                stack.append((child, [0], iter(below)))
                if not per_path:
                    add(child, 1)
                continue
            _, ends, _ = stack.pop()
            ends[0] = ends[0] or 1  # a leaf or the depth bound: one path ends here
            if stack:
                if per_path:  # one relation per node above, on every path through it
                    add(node, ends[0])
                stack[-1][1][0] += ends[0]
                above[types[stack[-1][0]]] -= 1
    return pairs


def _path_type_pairs(
    kg: KnowledgeGraph, depth: int | None, per_path: bool
) -> Counter[tuple[str, str]]:
    """(parent type, child type) -> relations, from the pairs of every path (deduplicated by
    node ids unless `per_path`), no relation made."""
    types = {node_id: node.type for node_id, node in kg.nodes.items()}
    pairs: Counter[tuple[str, str]] = Counter()
    seen: set[tuple[str, str]] = set()
    for path in iter_paths(kg, depth, guard=False):
        if per_path:
            before: Counter[str] = Counter()
            for node in path:
                child_type = types[node]
                for parent_type, count in before.items():
                    pairs[parent_type, child_type] += count
                before[child_type] += 1
            continue
        for i in range(len(path) - 1):
            parent = path[i]
            for child in path[i + 1 :]:
                if (parent, child) not in seen:
                    seen.add((parent, child))
                    pairs[types[parent], types[child]] += 1
    return pairs
