"""FactChecker build time: the questions of every relation of the country-sized KG.

The 15,220 relations of `synthetic_kg.country_graph` (one country at depth 3 as Wikidata has
them), the places domain's FactChecker templates, every question type, seed 0: the seconds
`build_factcheck_conversations` takes (best of `--runs`), questions made per second, and a
digest of the questions (their ids, texts and distractors), which stays the same when only
the speed changes.

Run: .venv/bin/python benchmarks/factcheck_build.py [--runs 3] [--relations N]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic_kg import country_graph  # noqa: E402
from kontest_tui.generate.relations import extract_relations  # noqa: E402
from kontest_tui.probes.factcheck import build_factcheck_conversations  # noqa: E402
from kontest_tui.probes.templates import load_probe_templates  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--relations", type=int, default=None, help="the first N only")
    arguments = parser.parse_args()
    kg = country_graph()
    relations = extract_relations(kg)[: arguments.relations]
    templates = load_probe_templates(kg.domain)
    times = []
    conversations = []
    for _ in range(arguments.runs):
        started = time.perf_counter()
        conversations = build_factcheck_conversations(kg, relations, templates, seed=0)
        times.append(time.perf_counter() - started)
    digest = hashlib.sha256()
    for conversation in conversations:
        distractor = getattr(conversation.extras, "distractor", None)
        digest.update(
            f"{conversation.id}\x1f{conversation.turns[0].text}\x1f{distractor}\n".encode()
        )
    best = min(times)
    print(
        f"{len(relations):,} relations ({kg.name}): {len(conversations):,} questions in "
        f"{best:.2f} s (best of {arguments.runs}), {len(conversations) / best:,.0f} questions/s; "
        f"digest {digest.hexdigest()[:16]}"
    )


if __name__ == "__main__":
    main()
