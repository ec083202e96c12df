"""Benchmark the Wikidata KG builder and KG loading at scale.

1. Build a synthetic ~100k-node depth-3 places graph from a local SPARQL endpoint (pyoxigraph
   on 127.0.0.1): build time, request count, the instant cached rebuild, and a build with
   Blazegraph-style timeouts injected above 60 items per query (chunks split in halves).
2. Load a 200k-node KG file and extract its paths (kg.io.load_graph + kg.paths.find_paths)
   in a fresh process: time and peak RSS (target < 10 s and < 2 GiB).

Run: .venv/bin/python benchmarks/kg_build.py [--branching 46]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def synthetic_ntriples(branching: int) -> tuple[bytes, int]:
    """Q1 with `branching` children per node down to depth 3; returns N-Triples and node count."""
    lines = [f'<{WD}Q1> <{LABEL}> "Root"@en .']
    frontier = [1]
    next_id = 2
    count = 1
    for _depth in range(3):
        new: list[int] = []
        for parent in frontier:
            for _ in range(branching):
                qid = next_id
                next_id += 1
                lines.append(f"<{WD}Q{qid}> <{WDT}P31> <{WD}Q56061> .")
                lines.append(f"<{WD}Q{qid}> <{WDT}P131> <{WD}Q{parent}> .")
                lines.append(f'<{WD}Q{qid}> <{LABEL}> "Place {qid}"@en .')
                new.append(qid)
        count += len(new)
        frontier = new
    return ("\n".join(lines) + "\n").encode(), count


def bench_build(branching: int) -> None:
    from kontest_tui.kg.sparql_client import SparqlClient
    from kontest_tui.kg.wikidata import build_graph, build_with_summary
    from tests.support.sparql_local import LocalSparqlEndpoint, make_store

    data, count = synthetic_ntriples(branching)
    started = time.perf_counter()
    store = make_store(data, fmt="ntriples")
    load_s = time.perf_counter() - started
    print(
        f"synthetic graph: {count} nodes, depth 3, branching {branching}; store load {load_s:.2f} s"
    )
    with LocalSparqlEndpoint(store) as server:
        client = SparqlClient(server.url, timeout=300)
        started = time.perf_counter()
        kg = build_graph("places", ["Q1"], 3, max_nodes=count + 1, client=client)
        build_s = time.perf_counter() - started
        assert len(kg.nodes) == count, (len(kg.nodes), count)
        print(
            f"build: {build_s:.2f} s, {client.requests} requests "
            f"({count / build_s:,.0f} nodes/s, {count / client.requests:,.0f} nodes/request; "
            f"one query per entity would be {count:,} requests)"
        )
        cached = SparqlClient(server.url)
        started = time.perf_counter()
        build_graph("places", ["Q1"], 3, max_nodes=count + 1, client=cached)
        print(f"cached rebuild: {time.perf_counter() - started:.2f} s, {cached.requests} requests")
        # Blazegraph's query text (optimizer hint) with a timeout for every VALUES list over 60
        # items: each 200-parent and 500-label chunk is split in halves until it answers.
        server.time_out_above(60)
        split = SparqlClient(server.url, timeout=300, use_cache=False)
        started = time.perf_counter()
        result = build_with_summary(
            "places", ["Q1"], 3, max_nodes=count + 1, client=split, optimizer_hint=True
        )
        split_s = time.perf_counter() - started
        assert len(result.graph.nodes) == count and not result.timed_out, (
            len(result.graph.nodes),
            result.timed_out,
        )
        print(
            f"build with timeouts above 60 items (hinted queries): {split_s:.2f} s, {split.requests} requests "
            f"({server.timeouts} timed out, {result.splits} splits; graph complete)"
        )


def write_big_kg(path: Path, nodes_wanted: int) -> int:
    """A 200k-node depth-3 KG file (root -> 50 -> 2,000 -> rest), written with kg.io.save_graph."""
    from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
    from kontest_tui.kg.io import save_graph

    nodes = {"Q1": Node("Q1", "Root", (), "country")}
    edges: list[Edge] = []
    level1 = [f"Q{10 + i}" for i in range(50)]
    level2 = [f"Q{1000 + i}" for i in range(2000)]
    for i, qid in enumerate(level1):
        nodes[qid] = Node(qid, f"Region {i}", (f"R{i}",), "region")
        edges.append(Edge("Q1", qid, "contains"))
    for i, qid in enumerate(level2):
        nodes[qid] = Node(qid, f"District {i}", (), "district")
        edges.append(Edge(level1[i % 50], qid, "contains"))
    leaves = nodes_wanted - len(nodes)
    for i in range(leaves):
        qid = f"Q{100000 + i}"
        nodes[qid] = Node(qid, f"Place {i}", (), "municipality")
        edges.append(Edge(level2[i % 2000], qid, "contains"))
    save_graph(
        KnowledgeGraph("synthetic 200k", "places", nodes, edges, "benchmark", "2026-01-01"), path
    )
    return len(nodes)


def measure_load(path: str) -> None:
    """Child process: load + find_paths, print JSON with seconds and peak RSS."""
    from kontest_tui.kg.io import load_graph
    from kontest_tui.kg.paths import find_paths

    started = time.perf_counter()
    kg = load_graph(path)
    loaded = time.perf_counter() - started
    paths = find_paths(kg, depth=3)
    total = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "nodes": len(kg.nodes),
                "paths": len(paths),
                "load_s": loaded,
                "total_s": total,
                "peak_kib": peak_kib,
            }
        )
    )


def bench_load(nodes_wanted: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.json"
        count = write_big_kg(path, nodes_wanted)
        size_mb = path.stat().st_size / 1e6
        result = subprocess.run(
            [sys.executable, __file__, "--measure-load", str(path)],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "KONTEST_HOME": folder},
        )
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    peak_gib = figures["peak_kib"] / 1024**2
    verdict = "OK" if figures["total_s"] < 10 and peak_gib < 2 else "OVER TARGET"
    print(
        f"load + find_paths of a {count:,}-node KG ({size_mb:.1f} MB): load {figures['load_s']:.2f} s, "
        f"total {figures['total_s']:.2f} s, {figures['paths']:,} paths, peak RSS {peak_gib:.2f} GiB "
        f"(target < 10 s, < 2 GiB: {verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--branching", type=int, default=46, help="children per node (46 -> 99,499 nodes)"
    )
    parser.add_argument("--nodes", type=int, default=200_000, help="nodes in the KG file to load")
    parser.add_argument("--measure-load", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_load:
        measure_load(args.measure_load)
        return
    with tempfile.TemporaryDirectory() as home:
        os.environ["KONTEST_HOME"] = home  # the query cache goes to a throwaway folder
        bench_build(args.branching)
    bench_load(args.nodes)


if __name__ == "__main__":
    main()
