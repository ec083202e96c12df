"""Deep chains: `kontest kg info` counts relations without making them and `kontest generate
--limit N` makes only the relations its N conversations need. A 2,000-node chain has
1,999,000 relations; each made as a record with its path took gigabytes (2 GB at 1,000
nodes), so both commands run here in a process limited to 1 GB of address space."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kontest_tui.generate.relations import count_relations, extract_relations
from kontest_tui.generate.summary import describe_graph
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import load_graph

ADDRESS_SPACE = 1024**3


def chain_file(folder: Path, length: int) -> Path:
    nodes = [
        {"id": f"n{i}", "label": f"Place {i}", "aliases": [], "type": ""} for i in range(length)
    ]
    edges = [{"parent": f"n{i}", "child": f"n{i + 1}"} for i in range(length - 1)]
    path = folder / f"chain{length}.json"
    path.write_text(
        json.dumps({"name": "chain", "domain": "places", "nodes": nodes, "edges": edges})
    )
    return path


BOTH = """
import io, json, sys
from contextlib import redirect_stdout
from kontest_tui.cli import run_cli
for argv in (["kg", "info", sys.argv[1], "--json"], ["generate", "--kg", sys.argv[1], "--limit", "3"]):
    out = io.StringIO()
    with redirect_stdout(out):
        code = run_cli(argv)
    print(json.dumps([code, out.getvalue()]))
"""


def limited(path: str) -> list[tuple[int, str]]:
    """(exit code, stdout) of `kontest kg info PATH --json` and `kontest generate --kg PATH
    --limit 3`, run in one process of at most ADDRESS_SPACE bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    done = subprocess.run(
        [sys.executable, "-c", BOTH, path],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return [tuple(json.loads(line)) for line in done.stdout.splitlines()]


def test_kg_info_and_generate_limit_on_a_deep_chain(tmp_path) -> None:
    (info_code, info), (generate_code, generated) = limited(str(chain_file(tmp_path, 2_000)))
    assert info_code == 0 and generate_code == 0
    summary = json.loads(info)
    assert summary["relations"] == 2_000 * 1_999 // 2 and summary["paths"] == 1
    assert summary["relations_by_type"] == {"contains": 1_999_000}
    lines = [json.loads(line) for line in generated.splitlines()]
    assert [line["id"] for line in lines] == ["n0>n1/t1", "n0>n1/t2", "n0>n1/t1+t2"]
    assert lines[0]["turns"][0]["text"] == "Does Place 0 contain Place 1?"


def typed_dag() -> KnowledgeGraph:
    """Two roots sharing a descendant (a diamond below), typed nodes, a node without type."""
    types = {"a": "country", "b": "region", "c": "region", "d": "county", "e": "", "r": "country"}
    nodes = {node: Node(node, node.upper(), type=kind) for node, kind in types.items()}
    pairs = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e"), ("r", "c")]
    return KnowledgeGraph("dag", "places", nodes, [Edge(p, c) for p, c in pairs])


def typed_tree() -> KnowledgeGraph:
    types = {"a": "country", "b": "region", "c": "region", "d": "county", "e": "", "f": "county"}
    nodes = {node: Node(node, node.upper(), type=kind) for node, kind in types.items()}
    pairs = [("a", "b"), ("a", "c"), ("b", "d"), ("d", "e"), ("c", "f")]
    return KnowledgeGraph("tree", "places", nodes, [Edge(p, c) for p, c in pairs])


@pytest.mark.parametrize("depth", [None, 1, 2, 3])
@pytest.mark.parametrize("per_path", [False, True])
@pytest.mark.parametrize("graph", ["dag", "tree", "places", "music", "subdivisions"])
def test_counted_relations_are_the_made_ones(graph, depth, per_path) -> None:
    kg = {"dag": typed_dag, "tree": typed_tree}.get(graph, lambda: load_graph(graph))()
    made = Counter(relation.type for relation in extract_relations(kg, depth, per_path))
    assert count_relations(kg, depth, per_path) == made
    summary = describe_graph(kg, depth, per_path)
    assert summary.relations == made.total() and summary.relations_by_type == dict(made)


def test_hand_counted_dag() -> None:
    # paths a-b-d-e, a-c-d-e, r-c-d-e: 6 pairs each; a-c-d-e repeats a>d, a>e, d>e and
    # r-c-d-e repeats c>d, c>e, d>e
    kg = typed_dag()
    assert count_relations(kg).total() == 6 + 3 + 3
    assert count_relations(kg, per_path=True).total() == 18
    assert count_relations(kg, depth=1).total() == 3  # a>b, a>c, r>c
