"""Sampled sessions: stratified seeded samples, Wilson intervals, and their coverage.

The coverage test plays many seeded samples of one population of answers (the simulated
model's, which depend only on the chat) and checks that the 95% interval of each sampled
rate holds the rate of the full run about 95% of the time.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kontest_tui.domain.records import Relation, Verdict
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import build_conversations
from kontest_tui.generate.relations import iter_relations
from kontest_tui.generate.sample import (
    SampleSpec,
    allocate,
    hash_unit,
    parse_sample,
    sample_relations,
    stratum_of,
)
from kontest_tui.generate.templates import load_template_set
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kinds.registry import builtin_measures, parse_reply
from kontest_tui.models.sim import decide_answer, load_profile
from kontest_tui.oracles.evaluate import evaluate
from kontest_tui.oracles.intervals import estimate_rates, sample_section, wilson_interval


def places_kg(countries: int, branching: int = 3) -> KnowledgeGraph:
    """country -> region -> district -> locality, distinct labels."""
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    levels = ("country", "region", "district", "locality")

    def add(node_id: str, level: int, parent: str | None) -> None:
        nodes[node_id] = Node(node_id, f"{levels[level].title()} {node_id}", (), levels[level])
        if parent is not None:
            edges.append(Edge(parent, node_id))
        if level < 3:
            for index in range(branching):
                add(f"{node_id}-{index}", level + 1, node_id)

    for country in range(countries):
        add(f"K{country}", 0, None)
    return KnowledgeGraph("toy-places", "places", nodes, edges)


def test_wilson_interval_hand_worked() -> None:
    # z = 1.959964, z^2 = 3.841459. 1 error in 10 tests: denominator 1 + 0.3841459;
    # centre (0.1 + 0.1920730) / 1.3841459 = 0.211014;
    # half 1.959964 * sqrt(0.09/10 + 3.841459/400) / 1.3841459 = 1.959964 * 0.1363953 / 1.3841459
    #      = 0.193139 -> (0.017875, 0.404153)
    low, high = wilson_interval(1, 10)
    assert low == pytest.approx(0.017875, abs=1e-5) and high == pytest.approx(0.404153, abs=1e-5)
    # 5 of 50: denominator 1.0768292, centre (0.1 + 0.0384146) / 1.0768292 = 0.128540;
    # half 1.959964 * sqrt(0.0018 + 0.000384146) / 1.0768292 = 0.085064 -> (0.043476, 0.213604)
    low, high = wilson_interval(5, 50)
    assert low == pytest.approx(0.043476, abs=1e-5) and high == pytest.approx(0.213604, abs=1e-5)
    assert wilson_interval(0, 20)[0] == 0.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_parse_sample() -> None:
    assert parse_sample("50", seed=3) == SampleSpec(count=50, seed=3)
    assert parse_sample("5%") == SampleSpec(percent=5.0)
    assert SampleSpec(percent=5.0).size(1000) == 50
    assert SampleSpec(count=5000).size(1000) == 1000
    for bad in ("0", "5x", "0%", "120%", "-3", "2.5"):
        with pytest.raises(InvalidInputError):
            parse_sample(bad)


def test_allocation_is_proportional_and_exact() -> None:
    from collections import Counter

    sizes = Counter({("a", 1): 50, ("a", 2): 30, ("b", 1): 20})
    assert allocate(sizes, 10) == {("a", 1): 5, ("a", 2): 3, ("b", 1): 2}
    assert sum(allocate(sizes, 7).values()) == 7


def test_sample_is_seeded_stratified_and_in_generation_order() -> None:
    kg = places_kg(4)
    everything = list(iter_relations(kg))
    drawn = sample_relations(lambda: iter_relations(kg), SampleSpec(percent=10, seed=1))
    again = sample_relations(lambda: iter_relations(kg), SampleSpec(percent=10, seed=1))
    other = sample_relations(lambda: iter_relations(kg), SampleSpec(percent=10, seed=2))
    assert [r.id for r in drawn.relations] == [r.id for r in again.relations]
    assert [r.id for r in drawn.relations] != [r.id for r in other.relations]
    assert drawn.population == len(everything)
    assert len(drawn.relations) == round(len(everything) / 10)
    order = {r.id: i for i, r in enumerate(everything)}
    assert [order[r.id] for r in drawn.relations] == sorted(order[r.id] for r in drawn.relations)
    for stratum, (sampled, size) in drawn.strata.items():
        assert sampled == sum(1 for r in drawn.relations if stratum_of(r) == stratum)
        assert abs(sampled - size / 10) < 1


def test_interval_coverage_over_many_seeded_samples() -> None:
    kg = places_kg(8)  # 8 x (3 + 2*9 + 3*27) = 816 relations
    templates = load_template_set("places")
    relations = list(iter_relations(kg))
    conversations = build_conversations(kg, relations, templates, ["t1", "t2"])
    profile = load_profile("default")
    answers = {}
    for conversation in conversations:
        asked: list[str] = []
        for turn, query in enumerate(conversation.turns):
            asked.append(query.text)
            raw = decide_answer(profile, 0, asked)
            answers[conversation.id, turn] = parse_reply(conversation, raw)
    full = evaluate(relations, conversations, answers)
    truth = {name: full.errors[name] / full.tests[name] for name in full.tests}
    metamorphic = [name for name in truth if name != "ontological"]
    truth["total"] = sum(full.errors[n] for n in metamorphic) / sum(
        full.tests[n] for n in metamorphic
    )
    by_relation: dict[str, list] = {}
    for conversation in conversations:
        by_relation.setdefault(conversation.relation_id, []).append(conversation)
    hits = dict.fromkeys([*metamorphic, "total"], 0)
    runs = 200
    for seed in range(runs):
        drawn = sample_relations(lambda: relations, SampleSpec(percent=10, seed=seed))
        chosen = [c for r in drawn.relations for c in by_relation[r.id]]
        part = evaluate(drawn.relations, chosen, answers)
        estimates = estimate_rates(part.verdicts)
        for name in hits:
            estimate = estimates[name]
            hits[name] += estimate.low <= truth[name] <= estimate.high
    coverage = {name: count / runs for name, count in hits.items()}
    # nominal 95%; 200 runs give a standard error of about 1.5 points
    assert all(value >= 0.9 for value in coverage.values()), coverage


def test_run_sample_reports_every_rate_with_its_interval(tmp_path, capsys) -> None:  # noqa: ANN001
    import json

    from kontest_tui.cli import run_cli

    db = tmp_path / "s.db"
    assert run_cli(["run", "--kg", "places", "--sample", "10%", "--db", str(db), "-q"]) == 0
    assert "Sample: 26 of 265 relations" in capsys.readouterr().out
    assert run_cli(["report", "--db", str(db), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["relations"] == 26
    sample = report["sample"]
    assert (sample["relations"], sample["population"], sample["percent"]) == (26, 265, 10.0)
    assert {"atomic", "sequential_intra", "sequential_inter", "total"} <= set(sample["rates"])
    for cell in [*sample["rates"].values(), *sample["gap"].values()]:
        assert 0 <= cell["low"] <= cell["rate"] <= cell["high"] <= 1
    assert sample["rates"]["ontological"]["estimated"] is False
    for bad in (
        ["--sample", "5", "--limit", "3"],
        ["--sample", "5x"],
        ["--sample", "0%"],
        ["--sample", "5", "--resume"],
    ):
        assert run_cli(["run", "--kg", "places", *bad, "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("kontest: error: --sample") and err.count("\n") == 1, err


def reference_sample(relations: list, spec: SampleSpec) -> list[str]:  # noqa: ANN001
    """The sample by its definition: in every stratum, its share's smallest seeded hashes."""
    from collections import Counter

    sizes = Counter(stratum_of(r) for r in relations)
    shares = allocate(sizes, spec.size(len(relations)))
    chosen: set[str] = set()
    for stratum, want in shares.items():
        members = [r for r in relations if stratum_of(r) == stratum]
        members.sort(key=lambda r: hash_unit(spec.seed, r.id))
        chosen |= {r.id for r in members[:want]}
    return [r.id for r in relations if r.id in chosen]


@pytest.mark.parametrize(
    "spec",
    [
        SampleSpec(percent=7, seed=4),
        SampleSpec(count=40, seed=5),
        SampleSpec(percent=100),
        SampleSpec(count=1),
    ],
)
def test_one_pass_sample_is_the_defined_one(spec: SampleSpec) -> None:
    kg = places_kg(3)
    relations = list(iter_relations(kg))
    passes: list[int] = []

    def make() -> Iterator[Relation]:
        passes.append(1)
        return iter(relations)

    drawn = sample_relations(make, spec)
    assert [r.id for r in drawn.relations] == reference_sample(relations, spec)
    assert (len(passes), drawn.passes) == (1, 1)  # nothing beyond one pass over the KG
    forced = sample_relations(make, spec, margin_sd=0)  # every stratum short: the second pass
    assert [r.id for r in forced.relations] == [r.id for r in drawn.relations]
    assert forced.passes == (2 if spec.percent is not None else 1)


def test_oracles_asked_in_full_get_no_sample_interval() -> None:
    # annotated questions come from a file, asked in full: the kind declares its oracle
    assert {o for found in builtin_measures() for o in found.not_sampled} == {"annotation"}
    verdicts = [
        Verdict("annotation", "q1", None, True, (("q1", 0),), ()),
        Verdict("variant", "q1", None, False, (("q1", 1),), ()),
    ]
    assert list(estimate_rates(verdicts)) == ["annotation", "variant"]  # no KONTEST total
    section = sample_section({"count": 1}, verdicts, {}, 1, ("annotation",))
    assert list(section["rates"]) == ["variant"]  # type: ignore[call-overload]
