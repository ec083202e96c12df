"""A seeded synthetic places KG of about N relations (country -> region -> district -> locality).

Each country has `b` regions, each region `b` districts, each district `b` localities, so a
country gives b + 2b^2 + 3b^3 relations (every ancestor -> descendant pair); enough countries
are made to reach the target. Labels are seeded pseudo-words, unique per node, so the
simulated model recognises each relation and its answers depend on the seed only.

Run: .venv/bin/python benchmarks/synthetic_kg.py RELATIONS OUT.json [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node  # noqa: E402
from kontest_tui.kg.io import save_graph  # noqa: E402

BRANCHING = 4  # per country: 4 + 2*16 + 3*64 = 228 relations
LEVELS = ("country", "region", "district", "locality")
SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "zen",
    "dor",
    "bel",
    "gar",
    "hal",
    "quin",
    "fel",
    "mor",
    "tas",
    "wen",
    "yor",
    "lin",
)


def _relations_per_country(branching: int) -> int:
    return branching + 2 * branching**2 + 3 * branching**3


def synthetic_graph(relations: int, seed: int = 0, branching: int = BRANCHING) -> KnowledgeGraph:
    """A places KG with at least `relations` relations (whole countries), seeded labels."""
    countries = max(1, -(-relations // _relations_per_country(branching)))
    return shaped_graph(
        countries,
        (branching,) * (len(LEVELS) - 1),
        seed=seed,
        name=f"synthetic-{relations}",
    )


def country_graph(seed: int = 0) -> KnowledgeGraph:
    """One country at depth 3 as Wikidata has them: 20 regions, 400 districts, 4,800 places
    (20 districts per region, 12 places per district): 15,220 relations."""
    return shaped_graph(1, (20, 20, 12), seed=seed, name="country-15220")


def shaped_graph(
    countries: int, branching: tuple[int, ...], *, seed: int = 0, name: str = "synthetic"
) -> KnowledgeGraph:
    """`countries` trees with `branching[i]` children per node at level i (seeded labels)."""
    rng = random.Random(seed)
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    used: set[str] = set()

    def label(level: int) -> str:
        while True:
            word = "".join(rng.choice(SYLLABLES) for _ in range(2 + rng.randrange(3))).title()
            text = f"{word} {rng.randrange(1000)}" if level else word
            if text not in used:
                used.add(text)
                return text

    def add(node_id: str, level: int, parent: str | None) -> None:
        nodes[node_id] = Node(node_id, label(level), (), LEVELS[level])
        if parent is not None:
            edges.append(Edge(parent, node_id))
        if level < len(branching):
            for index in range(branching[level]):
                add(f"{node_id}.{index}", level + 1, node_id)

    for country in range(countries):
        add(f"c{country}", 0, None)
    return KnowledgeGraph(
        name, "places", nodes, edges, source=f"benchmarks/synthetic_kg.py seed {seed}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("relations", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    save_graph(synthetic_graph(arguments.relations, arguments.seed), arguments.out)
