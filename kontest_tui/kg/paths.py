"""Paths through a knowledge graph: root-to-leaf walks bounded by a depth, and the depth itself.

A path runs from a root (a seed entity) down to a leaf, or stops after `depth` edges; it
never revisits a node. Algorithm 1 (generate.relations) turns each path into relations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kontest_tui.errors import InvalidInputError, TooManyPathsError

from .graph import KnowledgeGraph


def check_depth(depth: int | None) -> None:
    """InvalidInputError unless `depth` is None (no bound) or at least 1."""
    if depth is not None and depth < 1:
        raise InvalidInputError(f"depth must be at least 1, got {depth}")


# Paths a whole-KG walk may take: a DAG whose descendants are shared (a diamond ladder)
# multiplies them (45 nodes, 2^22 paths), and relations come from every path.
MAX_PATHS = 1_000_000


def count_paths(kg: KnowledgeGraph, depth: int | None = None, cap: int = MAX_PATHS) -> int:
    """How many paths `find_paths` gives (up to `cap` + 1: "more than cap"), counted without
    walking them: per node, bottom-up in topological order, the paths from it down to a leaf
    (or `depth` edges), O(depth x (nodes + edges)) at most. A KG file is acyclic
    (kg.validate); one with a cycle, made in code, gives 0 (not counted)."""
    check_depth(depth)
    if depth is not None and depth >= measure_depth(kg):
        depth = None
    order = _topological(kg)
    if len(order) < len(kg.nodes):  # a cycle (a KG made in code; files are checked): unknown
        return 0
    if depth is None:
        below: dict[str, int] = {}
        for node in reversed(order):
            children = kg.children(node)
            below[node] = min(cap + 1, sum(below[c] for c in children)) if children else 1
        total = sum(below[root] for root in kg.roots() if kg.children(root))
        return min(cap + 1, total)
    # within[node][r]: paths from node with at most r more edges
    within: dict[str, list[int]] = {}
    for node in reversed(order):
        children = kg.children(node)
        counts = [1] * (depth + 1)
        if children:
            for left in range(1, depth + 1):
                counts[left] = min(cap + 1, sum(within[c][left - 1] for c in children))
        within[node] = counts
    total = sum(within[root][depth] for root in kg.roots() if kg.children(root))
    return min(cap + 1, total)


def _topological(kg: KnowledgeGraph) -> list[str]:
    """The nodes, every parent before its children (Kahn's algorithm)."""
    parents_left = dict.fromkeys(kg.nodes, 0)
    for edge in kg.edges:
        parents_left[edge.child] += 1
    ready = [node for node, count in parents_left.items() if count == 0]
    order: list[str] = []
    while ready:
        node = ready.pop()
        order.append(node)
        for child in kg.children(node):
            parents_left[child] -= 1
            if parents_left[child] == 0:
                ready.append(child)
    return order


def check_path_count(kg: KnowledgeGraph, depth: int | None = None) -> None:
    """GraphError naming the path count when a whole-KG walk would take over MAX_PATHS paths
    (instead of a command that never ends)."""
    count = count_paths(kg, depth)
    if count > MAX_PATHS:
        bound = "with no depth bound" if depth is None else f"within depth {depth}"
        raise TooManyPathsError(
            f"KG {kg.name!r} has more than {MAX_PATHS:,} root-to-leaf paths {bound} (its "
            "nodes share descendants, which multiplies the paths; relations come from every "
            "path)"
        )


def find_paths(kg: KnowledgeGraph, depth: int | None = None) -> list[tuple[str, ...]]:
    """Every root-to-leaf path with at most `depth` edges, depth-first in file order.

    A path ends at a leaf, at a node whose children are all already on the path (a cycle),
    or after `depth` edges. A root without children gives no path (it has no relation).
    More than MAX_PATHS paths is a GraphError saying how many (check_path_count).
    """
    return list(iter_paths(kg, depth))


def iter_paths(
    kg: KnowledgeGraph, depth: int | None = None, *, guard: bool = True
) -> Iterator[tuple[str, ...]]:
    """The paths of `find_paths`, one at a time (a caller that needs the first few stops early
    and passes `guard=False`: it never walks them all)."""
    check_depth(depth)
    if guard:
        check_path_count(kg, depth)
    limit = depth if depth is not None else len(kg.nodes)
    for root in kg.roots():
        yield from _walk_paths(root, kg.children, limit)


def _walk_paths(
    root: str, children: Callable[[str], list[str]], limit: int
) -> Iterator[tuple[str, ...]]:
    """The paths starting at `root` (iterative DFS, children in order)."""
    path = [root]
    on_path = {root}

    def is_end(node: str) -> bool:
        return len(path) - 1 >= limit or all(child in on_path for child in children(node))

    if is_end(root):
        return
    # One iterator over the remaining children of each node on the current path.
    stack = [iter(children(root))]
    while stack:
        child = next(stack[-1], None)
        while child is not None and child in on_path:
            child = next(stack[-1], None)
        if child is None:
            stack.pop()
            on_path.discard(path.pop())
            continue
        path.append(child)
        on_path.add(child)
        if is_end(child):
            yield tuple(path)
            on_path.discard(path.pop())
        else:
            stack.append(iter(children(child)))


def measure_depth(kg: KnowledgeGraph) -> int:
    """Edges on the longest root-to-leaf path of an acyclic KG (0 for a graph without edges)."""
    parents_left = {node_id: 0 for node_id in kg.nodes}
    for edge in kg.edges:
        parents_left[edge.child] += 1
    level = dict.fromkeys(kg.nodes, 0)
    ready = [node_id for node_id, count in parents_left.items() if count == 0]
    while ready:
        node_id = ready.pop()
        for child in kg.children(node_id):
            level[child] = max(level[child], level[node_id] + 1)
            parents_left[child] -= 1
            if parents_left[child] == 0:
                ready.append(child)
    return max(level.values(), default=0)
