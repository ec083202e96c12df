"""Paths through a knowledge graph: root-to-leaf walks bounded by a depth, and the depth itself.

A path runs from a root (a seed entity) down to a leaf, or stops after `depth` edges; it
never revisits a node. Algorithm 1 (generate.relations) turns each path into relations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kontest_tui.errors import InvalidInputError

from .graph import KnowledgeGraph


def check_depth(depth: int | None) -> None:
    """InvalidInputError unless `depth` is None (no bound) or at least 1."""
    if depth is not None and depth < 1:
        raise InvalidInputError(f"depth must be at least 1, got {depth}")


def find_paths(kg: KnowledgeGraph, depth: int | None = None) -> list[tuple[str, ...]]:
    """Every root-to-leaf path with at most `depth` edges, depth-first in file order.

    A path ends at a leaf, at a node whose children are all already on the path (a cycle),
    or after `depth` edges. A root without children gives no path (it has no relation).
    """
    return list(iter_paths(kg, depth))


def iter_paths(kg: KnowledgeGraph, depth: int | None = None) -> Iterator[tuple[str, ...]]:
    """The paths of `find_paths`, one at a time (a caller that needs the first few stops early)."""
    check_depth(depth)
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
