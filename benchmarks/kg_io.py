"""Throughput of KG loading (with full validation), saving, CSV import and `describe_graph`.

    .venv/bin/python benchmarks/kg_io.py

Uses the bundled subdivisions sample and a synthetic 100,000-node tree (fan-out 10, depth 5)
written to a temporary folder; prints nodes per second for each step.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kontest_tui.generate.summary import describe_graph  # noqa: E402
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node  # noqa: E402
from kontest_tui.kg.io import import_csv, load_graph, save_graph  # noqa: E402


def make_tree(fan_out: int = 10, levels: int = 5) -> KnowledgeGraph:
    nodes = {"n0": Node("n0", "Root 0", (), "level0")}
    edges: list[Edge] = []
    frontier = ["n0"]
    for level in range(1, levels + 1):
        nxt = []
        for parent in frontier:
            for k in range(fan_out):
                node_id = f"{parent}.{k}"
                nodes[node_id] = Node(node_id, f"Place {node_id}", (), f"level{level}")
                edges.append(Edge(parent, node_id, "contains"))
                nxt.append(node_id)
        frontier = nxt
        if len(nodes) >= 100_000:
            break
    return KnowledgeGraph("tree", "places", nodes, edges, "synthetic", "")


def timed(label: str, count: int, action) -> object:
    start = time.perf_counter()
    result = action()
    seconds = time.perf_counter() - start
    print(f"{label:<44} {seconds * 1000:9.1f} ms  {count / seconds:>12,.0f} nodes/s")
    return result


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        subdivisions = timed(
            "load subdivisions sample (1,531 nodes)", 1531, lambda: load_graph("subdivisions")
        )
        timed("save subdivisions", 1531, lambda: save_graph(subdivisions, tmp / "s.json"))
        timed("describe_graph(subdivisions)", 1531, lambda: describe_graph(subdivisions))

        tree = make_tree()
        size = len(tree.nodes)
        path = timed(
            f"save synthetic tree ({size:,} nodes)", size, lambda: save_graph(tree, tmp / "t.json")
        )
        timed("load + validate synthetic tree", size, lambda: load_graph(path))
        csv_path = tmp / "t.csv"
        with csv_path.open("w", encoding="utf-8") as handle:
            for edge in tree.edges:
                parent, child = tree.nodes[edge.parent], tree.nodes[edge.child]
                handle.write(f"{parent.id},{parent.label},{child.id},{child.label}\n")
        timed("import_csv synthetic tree", size, lambda: import_csv(csv_path))
        timed("describe_graph(synthetic tree)", size, lambda: describe_graph(tree))


if __name__ == "__main__":
    main()
