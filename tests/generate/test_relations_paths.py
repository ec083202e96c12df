"""Algorithm 1: depth-bounded root-to-leaf paths and every ancestor -> descendant pair on them."""

from __future__ import annotations

import pytest

from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import build_suite
from kontest_tui.generate.relations import extract_relations, iter_relations, relation_type
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.io import load_graph
from kontest_tui.kg.paths import find_paths
from kontest_tui.run.api import SessionSpec, create_session
from kontest_tui.store import Store


def test_kinawley_path_gives_three_relations(kinawley_kg: KnowledgeGraph) -> None:
    assert find_paths(kinawley_kg) == [("Ireland", "Ireland/Ulster", "Ireland/Ulster/Kinawley")]
    relations = extract_relations(kinawley_kg)
    assert [r.id for r in relations] == [
        "Ireland>Ireland/Ulster",
        "Ireland>Ireland/Ulster/Kinawley",
        "Ireland/Ulster>Ireland/Ulster/Kinawley",
    ]
    assert [r.type for r in relations] == ["contains"] * 3
    far = relations[1]
    assert (far.parent, far.child) == ("Ireland", "Ireland/Ulster/Kinawley")
    assert far.between == ("Ireland/Ulster",)
    assert relations[0].between == ()


def test_four_node_path_gives_six_relations(build_kg) -> None:
    kg = build_kg([["A", "B", "C", "D"]])
    relations = extract_relations(kg)
    pairs = [(kg.label(r.parent), kg.label(r.child)) for r in relations]
    assert pairs == [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")]
    assert relations[2].path == ("A", "A/B", "A/B/C", "A/B/C/D")


def test_branching_dedup_and_per_path(build_kg) -> None:
    kg = build_kg([["A", "B", "C"], ["A", "B", "D"], ["A", "E"]])
    assert find_paths(kg) == [("A", "A/B", "A/B/C"), ("A", "A/B", "A/B/D"), ("A", "A/E")]
    dedup = [r.id for r in extract_relations(kg)]
    assert dedup == ["A>A/B", "A>A/B/C", "A/B>A/B/C", "A>A/B/D", "A/B>A/B/D", "A>A/E"]
    per_path = [r.id for r in extract_relations(kg, per_path=True)]
    assert per_path == [
        "p0:A>A/B",
        "p0:A>A/B/C",
        "p0:A/B>A/B/C",
        "p1:A>A/B",
        "p1:A>A/B/D",
        "p1:A/B>A/B/D",
        "p2:A>A/E",
    ]


def test_depth_bounds_paths(build_kg) -> None:
    kg = build_kg([["A", "B", "C", "D"], ["A", "E"]])
    assert find_paths(kg, depth=1) == [("A", "A/B"), ("A", "A/E")]
    assert find_paths(kg, depth=2) == [("A", "A/B", "A/B/C"), ("A", "A/E")]
    assert len(extract_relations(kg, depth=2)) == 3 + 1
    assert find_paths(kg, depth=3) == find_paths(kg)
    with pytest.raises(InvalidInputError):
        find_paths(kg, depth=0)


def test_diamond_keeps_first_path_for_shared_pair() -> None:
    nodes = {name: Node(name, name) for name in "ABCD"}
    edges = [Edge("A", "B"), Edge("A", "C"), Edge("B", "D"), Edge("C", "D")]
    kg = KnowledgeGraph("diamond", "places", nodes, edges)
    assert find_paths(kg) == [("A", "B", "D"), ("A", "C", "D")]
    relations = extract_relations(kg)
    assert [r.id for r in relations] == ["A>B", "A>D", "B>D", "A>C", "C>D"]
    assert relations[1].path == ("A", "B", "D")
    assert len(extract_relations(kg, per_path=True)) == 6


def test_paths_never_revisit_a_node_and_lone_roots_give_none() -> None:
    nodes = {name: Node(name, name) for name in "ABCZ"}
    edges = [Edge("A", "B"), Edge("B", "C"), Edge("C", "B")]
    kg = KnowledgeGraph("cycle", "places", nodes, edges)
    assert kg.roots() == ["A", "Z"]
    assert find_paths(kg) == [("A", "B", "C")]


def test_long_chain_has_no_recursion_limit() -> None:
    count = 5000
    nodes = {str(i): Node(str(i), f"n{i}") for i in range(count)}
    edges = [Edge(str(i), str(i + 1)) for i in range(count - 1)]
    kg = KnowledgeGraph("chain", "places", nodes, edges)
    (path,) = find_paths(kg)
    assert len(path) == count and path[-1] == str(count - 1)
    assert len(extract_relations(kg, depth=3)) == 6


def test_music_relation_types(build_kg) -> None:
    kg = build_kg([["Muse", "The 2nd Law", "Panic Station"]], "music", ["artist", "album", "song"])
    relations = extract_relations(kg)
    assert [(kg.label(r.parent), kg.label(r.child), r.type) for r in relations] == [
        ("Muse", "The 2nd Law", "artist->album"),
        ("Muse", "Panic Station", "artist->song"),
        ("The 2nd Law", "Panic Station", "album->song"),
    ]
    assert relation_type(kg, "Muse", "Muse/The 2nd Law/Panic Station") == "artist->song"


def test_untyped_or_unknown_types_fall_back_to_domain_default(build_kg) -> None:
    untyped = build_kg([["Muse", "The 2nd Law"]], "music")
    assert relation_type(untyped, "Muse", "Muse/The 2nd Law") == "artist->song"
    places = build_kg([["Ireland", "Ulster"]], "places", ["country", "province"])
    assert relation_type(places, "Ireland", "Ireland/Ulster") == "contains"
    odd = build_kg([["X", "Y"]], "no-such-domain", ["shelf", "book"])
    assert relation_type(odd, "X", "X/Y") == "shelf->book"
    plain = build_kg([["X", "Y"]], "no-such-domain")
    assert relation_type(plain, "X", "X/Y") == "contains"


@pytest.mark.parametrize(
    ("sample", "paths", "relations", "per_path"),
    [("places", 50, 265, 294), ("music", 50, 146, 146)],
)
def test_sample_kgs_relation_counts(sample: str, paths: int, relations: int, per_path: int) -> None:
    kg = load_graph(sample)
    assert len(find_paths(kg)) == paths
    assert len(extract_relations(kg)) == relations
    assert len(extract_relations(kg, per_path=True)) == per_path


def test_music_sample_types() -> None:
    kg = load_graph("music")
    counts: dict[str, int] = {}
    for relation in extract_relations(kg):
        counts[relation.type] = counts.get(relation.type, 0) + 1
    # 50 paths: 48 artist -> album -> song and 2 artist -> album only.
    assert counts == {"artist->album": 50, "artist->song": 48, "album->song": 48}


def test_limit_makes_only_the_first_relations_of_a_huge_chain(tmp_path) -> None:  # noqa: ANN001
    """A 100,000-node chain has ~5e9 relations: `--limit 5` can only finish by stopping early."""
    size = 100_000
    nodes = {f"n{i}": Node(f"n{i}", f"Place {i}", (), "") for i in range(size)}
    edges = [Edge(f"n{i}", f"n{i + 1}") for i in range(size - 1)]
    chain = KnowledgeGraph("chain", "places", nodes, edges)
    suite = build_suite(chain, limit=5)
    assert [r.id for r in suite.relations] == [f"n0>n{j}" for j in range(1, 6)]
    assert [r.id for r in suite.relations] == [
        r.id for r, _ in zip(iter_relations(chain), range(5), strict=False)
    ]
    assert len(suite.conversations) == 5 * 4
    with Store(tmp_path / "s.db") as store:
        session = create_session(store, SessionSpec(chain, limit=5))
        assert len(store.relations.load(session)) == 5
