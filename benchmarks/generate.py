"""Benchmark of the generation side: paths, relations, conversations, parsing and replay.

Run: .venv/bin/python benchmarks/generate.py  (prints seconds and throughputs).

Deep chains (one path of N nodes, N(N-1)/2 relations): `kontest kg info`'s summary counts
the relations without making them, and `kontest generate --limit 3` makes only the first
relations; both are printed with relations counted per second, for chains of 1,000 to
20,000 nodes and for a 1,000-node chain whose last node has a second parent (no longer a
forest: its pairs are counted path by path, no relation made).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from kontest_tui.cli.generate import GenerateRequest, generate_conversations
from kontest_tui.domain.answers import parse_answer
from kontest_tui.generate.conversations import build_conversations
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.summary import describe_graph
from kontest_tui.generate.templates import load_template_set
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.paths import find_paths
from kontest_tui.models.base import ChatRequest, Message
from kontest_tui.models.replay import ReplayModel


def build_tree(fanouts: list[int]) -> KnowledgeGraph:
    """A balanced containment tree: fanouts[i] children per node at depth i."""
    nodes = {"root": Node("root", "Root Land", type="country")}
    edges: list[Edge] = []
    level = ["root"]
    for depth, fanout in enumerate(fanouts):
        following = []
        for parent in level:
            for index in range(fanout):
                child = f"{parent}.{index}"
                nodes[child] = Node(child, f"Place {depth}-{index} of {parent}")
                edges.append(Edge(parent, child))
                following.append(child)
        level = following
    return KnowledgeGraph("bench", "places", nodes, edges)


def build_chain(length: int, second_parent: bool = False) -> KnowledgeGraph:
    """A chain of `length` nodes; with `second_parent`, its last node has another root too."""
    nodes = {f"n{i}": Node(f"n{i}", f"Place {i}") for i in range(length)}
    edges = [Edge(f"n{i}", f"n{i + 1}") for i in range(length - 1)]
    if second_parent:
        nodes["other"] = Node("other", "Other Land")
        edges.append(Edge("other", f"n{length - 1}"))
    return KnowledgeGraph(f"chain{length}", "places", nodes, edges)


def deep_chains() -> None:
    for length, second in ((1_000, False), (2_000, False), (20_000, False), (1_000, True)):
        kg = build_chain(length, second)
        shape = f"{length:,}-node chain" + (", a second parent" if second else "")
        summary, seconds = timed(f"kg info summary ({shape})", describe_graph, kg)
        print(
            f"  {summary.paths:,} paths, {summary.relations:,} relations, "
            f"{summary.relations / seconds:,.0f} relations counted/s"
        )
        request = GenerateRequest(kg=kg)
        if not second:
            conversations, _ = timed(
                f"generate --limit 3 ({shape})", generate_conversations, request, 3
            )
            assert len(conversations) == 3


def timed(label: str, func, *args, **kwargs):
    start, cpu = time.perf_counter(), time.process_time()
    result = func(*args, **kwargs)
    seconds = time.perf_counter() - start
    print(f"{label:<50} {seconds:8.3f} s wall {time.process_time() - cpu:8.3f} s cpu")
    return result, seconds


def main() -> None:
    places = load_template_set("places")  # the natural set: realised (generate.realise)
    paper = load_template_set("paper", "places")  # the papers' texts, filled literally
    deep_chains()

    big = build_tree([60, 60, 60])  # 1 + 60 + 3,600 + 216,000 nodes
    print(f"KG: {len(big.nodes):,} nodes, {len(big.edges):,} edges")
    paths, seconds = timed("find_paths (200k-node KG)", find_paths, big)
    print(f"  {len(paths):,} paths, {len(paths) / seconds:,.0f} paths/s")
    relations, seconds = timed("extract_relations (200k-node KG)", extract_relations, big)
    print(f"  {len(relations):,} relations, {len(relations) / seconds:,.0f} relations/s")

    ten_k = relations[:10_000]
    build_conversations(big, ten_k, paper)  # warm: the first call pays for memory and caches
    _, literal = timed(
        "build_conversations, paper (10,000 relations)", build_conversations, big, ten_k, paper
    )
    _, first = timed(
        "build_conversations, natural, names read (10,000)", build_conversations, big, ten_k, places
    )
    conversations, realised = timed(
        "build_conversations, natural (10,000 relations)", build_conversations, big, ten_k, places
    )
    calls = sum(len(c.turns) for c in conversations)
    print(f"  {len(conversations):,} conversations, {calls:,} model calls")
    print(
        f"  realised / literal: {realised / literal:.1f}x; reading the KG's names once: "
        f"{first - realised:.2f} s"
    )

    replies = ["Yes.", "**No**", "No, it is not.", "I don't know.", "Yes, but ..."] * 12_000
    _, seconds = timed("parse_answer x 60,000", lambda: [parse_answer(r) for r in replies])
    print(f"  {len(replies) / seconds:,.0f} answers/s")
    huge = "No. " + "blah " * 200_000
    _, seconds = timed(
        "parse_answer on a 1 MB reply x 100", lambda: [parse_answer(huge) for _ in range(100)]
    )

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rec.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for conversation in conversations:
                texts = [query.text for query in conversation.turns]
                for turn in range(len(texts)):
                    record = {"messages": texts[: turn + 1], "kind": conversation.kind}
                    out.write(json.dumps({**record, "answer": "Yes"}) + "\n")
        model, _ = timed("ReplayModel load (60,000 lines)", ReplayModel, path)
        _, seconds = timed(
            "ReplayModel.prepare (40,000 conversations)", model.prepare, conversations
        )

        async def ask_all() -> None:
            for conversation in conversations:
                for turn, query in enumerate(conversation.turns):
                    request = ChatRequest(
                        messages=(Message("user", query.text),),
                        conversation_id=conversation.id,
                        turn=turn,
                        kind=conversation.kind,
                    )
                    await model.chat(request)

        timed("ReplayModel.chat x 60,000", asyncio.run, ask_all())


if __name__ == "__main__":
    main()
