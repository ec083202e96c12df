"""FactChecker question generation on a hand-made KG: balance, distractors, MC, WH, 2-hop."""

from __future__ import annotations

import random
from collections import Counter

from kontest_tui.domain.extras import FactcheckExtras
from kontest_tui.domain.records import Answer, Relation, TestKind
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.probes.factcheck import Lineage, build_factcheck_conversations
from kontest_tui.probes.templates import load_probe_templates
from tests.support.records import extras_of


def test_yes_and_no_questions_are_balanced_and_distractors_false(places_kg, places_relations):
    templates = load_probe_templates("places")
    lineage = Lineage.of(places_kg)
    for seed in range(20):
        convs = build_factcheck_conversations(places_kg, places_relations, templates, seed=seed)
        yes_no = [c for c in convs if extras_of(c, FactcheckExtras).question_type == "yes_no"]
        expected = Counter(c.expected[0] for c in yes_no)
        # 12 KG edges, each with a yes question and a distractor no question
        assert expected == {Answer.YES: 12, Answer.NO: 12}
        for conv in yes_no:
            assert conv.test_kind == TestKind.FACTCHECK
            if conv.expected[0] == Answer.NO:
                relation = next(r for r in places_relations if r.id == conv.relation_id)
                distractor = extras_of(conv, FactcheckExtras).distractor
                assert distractor is not None
                assert not lineage.is_true(relation.parent, distractor)
                # never a label that is true inside the parent (Garnich village vs commune)
                assert not lineage.label_is_true_child(places_kg, relation.parent, distractor)


def test_yes_no_texts_use_the_template(places_kg, places_relations):
    convs = build_factcheck_conversations(
        places_kg, places_relations, load_probe_templates("places")
    )
    by_id = {c.id: c for c in convs}
    assert by_id["ul>cv/fc:yes_no"].turns[0].text == "Is County Cavan located in Ulster?"
    assert by_id["ul>cv/fc:yes_no"].expected == (Answer.YES,)
    distractor = by_id["ul>cv/fc:yes_no:distractor"].turns[0].text
    assert distractor.startswith("Is ") and distractor.endswith(" located in Ulster?")
    assert "County Cavan" not in distractor


def test_garnich_commune_never_gets_garnich_village_as_distractor(places_kg, places_relations):
    templates = load_probe_templates("places")
    for seed in range(50):
        convs = build_factcheck_conversations(places_kg, places_relations, templates, seed=seed)
        for conv in convs:
            if conv.relation_id in ("cp>gc", "lu>gc") and conv.id.endswith("yes_no:distractor"):
                assert places_kg.label(extras_of(conv, FactcheckExtras).distractor) != "Garnich"


def test_multiple_choice_has_one_right_option_of_the_parents_type(places_kg, places_relations):
    lineage = Lineage.of(places_kg)
    convs = build_factcheck_conversations(
        places_kg,
        places_relations,
        load_probe_templates("places"),
        seed=3,
        question_types=("multiple_choice",),
    )
    # Only regions have >= 3 other same-type parents (Ulster, Connacht, Nordland, Capellen)...
    # districts: Cavan, Mayo, Sørfold, Garnich -> 3 others each; regions: 4 -> 3 others; countries:
    # Ireland, Norway, Luxembourg -> only 2 others, so country->region edges get no MC question.
    assert sorted(c.relation_id for c in convs) == sorted(
        ["ul>cv", "cv>kw", "cn>mo", "mo>cb", "nl>sf", "sf>rg", "cp>gc", "gc>gv"]
    )
    for conv in convs:
        options = extras_of(conv, FactcheckExtras).options
        assert [o.letter for o in options] == ["A", "B", "C", "D"]
        assert len({o.label for o in options}) == 4
        relation_parent = conv.relation_id.split(">")[0]
        right = [o for o in options if o.letter == extras_of(conv, FactcheckExtras).answer]
        assert right[0].id == relation_parent
        child = conv.relation_id.split(">")[1]
        for option in options:
            if option.id != relation_parent:
                assert not lineage.is_true(option.id, child)
                assert places_kg.nodes[option.id].type == places_kg.nodes[relation_parent].type
        assert conv.turns[0].text.count("\n") == 4


def test_multiple_choice_shuffle_is_seeded(places_kg, places_relations):
    templates = load_probe_templates("places")
    first = build_factcheck_conversations(places_kg, places_relations, templates, seed=7)
    again = build_factcheck_conversations(places_kg, places_relations, templates, seed=7)
    assert [c.turns for c in first] == [c.turns for c in again]
    letters = {
        seed: [
            extras_of(c, FactcheckExtras).answer
            for c in build_factcheck_conversations(
                places_kg,
                places_relations,
                templates,
                seed=seed,
                question_types=("multiple_choice",),
            )
        ]
        for seed in range(6)
    }
    assert len({tuple(v) for v in letters.values()}) > 1


def test_wh_only_where_the_answer_is_unique() -> None:
    nodes = {
        "a": Node("a", "Artist", (), "artist"),
        "x": Node("x", "Album X", (), "album"),
        "y": Node("y", "Album Y", (), "album"),
        "s": Node("s", "Shared Song", (), "song"),
        "t": Node("t", "Own Song", (), "song"),
    }
    edges = [Edge("a", "x"), Edge("a", "y"), Edge("x", "s"), Edge("y", "s"), Edge("y", "t")]
    kg = KnowledgeGraph("dag", "music", nodes, edges)
    relations = [
        Relation("x>s", "x", "s", "album->song", ("x", "s")),
        Relation("y>s", "y", "s", "album->song", ("y", "s")),
        Relation("y>t", "y", "t", "album->song", ("y", "t")),
        Relation("a>x", "a", "x", "artist->album", ("a", "x")),
    ]
    convs = build_factcheck_conversations(
        kg, relations, load_probe_templates("music"), question_types=("wh",)
    )
    # "Shared Song" is on two albums: no WH question for it; the others are unique.
    assert sorted(c.relation_id for c in convs) == ["a>x", "y>t"]
    wh = {c.relation_id: c for c in convs}
    assert wh["y>t"].turns[0].text == 'On which album is the song "Own Song"?'
    assert extras_of(wh["y>t"], FactcheckExtras).accepted == ("Album Y",)


def test_two_hop_questions_through_the_node_in_between(places_kg, places_relations):
    convs = build_factcheck_conversations(
        places_kg, places_relations, load_probe_templates("places"), question_types=("two_hop",)
    )
    by_id = {c.id: c for c in convs}
    assert by_id["ie>cv/fc:two_hop"].turns[0].text == (
        "Is the region that contains County Cavan located in Ireland?"
    )
    assert by_id["ie>cv/fc:two_hop"].expected == (Answer.YES,)
    wrong = by_id["ie>cv/fc:two_hop:distractor"]
    assert wrong.expected == (Answer.NO,)
    assert places_kg.nodes[extras_of(wrong, FactcheckExtras).distractor].type == "country"
    assert extras_of(wrong, FactcheckExtras).distractor != "ie"
    # 2-hop relations: 2 per 4-node path (a>c and b>d), 4 paths -> 8, each a yes and a no
    assert len(convs) == 16


def test_limit_does_not_change_the_questions_asked() -> None:
    """--limit takes the first relations; their questions (distractors, options, 2-hop
    chains) are the ones the full run asks about them: pools come from the whole KG."""
    from kontest_tui.generate.conversations import build_suite
    from kontest_tui.kg.io import load_graph
    from kontest_tui.probes.factcheck import build_factcheck_conversations as build
    from kontest_tui.probes.templates import load_probe_templates

    kg = load_graph("places")
    relations = build_suite(kg).relations
    templates = load_probe_templates("places")
    full = {c.id: c for c in build(kg, relations, templates)}
    limited = build(kg, relations[:30], templates)
    assert limited
    for conversation in limited:
        assert full[conversation.id] == conversation, conversation.id
    # Yes-no distractors vary: no single false question is asked over and over.
    texts = Counter(c.turns[0].text for c in limited if c.label == "yes_no:distractor")
    assert max(texts.values()) <= 2  # was 4 when distractors came from the 30 relations only
    kinds = {extras_of(c, FactcheckExtras).question_type for c in limited}
    assert "multiple_choice" in kinds


def test_two_hop_multiple_choice_and_exported_answers(places_kg, kinawley_relations) -> None:
    """FactChecker Table 6: a 2-hop multiple-choice question names the chain's middle by its
    type and offers the top entity among three of its type; the export gives the letter and
    the option ("B) Ulster"), and for WH the accepted labels."""
    from kontest_tui.probes.factcheck import build_factcheck_conversations as build
    from kontest_tui.probes.factcheck import correct_option, expected_answer
    from kontest_tui.probes.templates import load_probe_templates

    convs = {c.id: c for c in build(places_kg, kinawley_relations, load_probe_templates("places"))}
    choice = convs["ul>kw/fc:two_hop_choice"]
    head, *options = choice.turns[0].text.splitlines()
    assert head == "In which region is the district that contains Kinawley located?"
    assert len(options) == 4 and any(line.endswith(") Ulster") for line in options)
    letter = extras_of(choice, FactcheckExtras).answer
    assert f"{letter}) Ulster" in options
    assert expected_answer(choice) == letter and correct_option(choice) == f"{letter}) Ulster"
    wh = convs["ul>cv/fc:wh"]
    assert expected_answer(wh) == "Ulster" and correct_option(wh) == "Ulster"
    yes_no = convs["ul>cv/fc:yes_no"]
    assert expected_answer(yes_no) == "yes" and correct_option(yes_no) is None


def _reference_child(kg, lineage, relation, pool, seed):  # noqa: ANN001, ANN202
    """The distractor rule as written in the module docstring, over filtered copies."""
    candidates = [
        c
        for c in pool
        if c != relation.child and not lineage.label_is_true_child(kg, relation.parent, c)
    ]
    wanted = kg.nodes[relation.child].type or "place"
    same_type = [c for c in candidates if (kg.nodes[c].type or "place") == wanted]
    candidates = same_type or candidates
    return random.Random(f"{seed}:{relation.id}:child").choice(candidates) if candidates else None


def _reference_parents(kg, lineage, relation, pool, count, seed, purpose):  # noqa: ANN001, ANN202
    wanted = kg.nodes[relation.parent].type
    seen = {kg.label(relation.parent).casefold()}
    candidates = []
    for candidate in pool:
        label = kg.label(candidate).casefold()
        if candidate == relation.parent or label in seen:
            continue
        if wanted and kg.nodes[candidate].type != wanted:
            continue
        if lineage.label_is_true_parent(kg, relation.child, candidate):
            continue
        seen.add(label)
        candidates.append(candidate)
    if len(candidates) < count:
        return []
    return random.Random(f"{seed}:{relation.id}:{purpose}").sample(candidates, count)


def test_distractors_are_the_seeded_picks_from_the_filtered_lists(places_kg, places_relations):
    """The pools are indexed once (not scanned per question) and pick what the rule picks
    from the filtered list: the same seeded choice. The hand-made KG has a label inside a
    parent under another id (Garnich commune and village) and several node types."""
    templates = load_probe_templates("places")
    lineage = Lineage.of(places_kg)
    children = sorted({e.child for e in places_kg.edges})  # one relation type: contains
    parents = sorted({e.parent for e in places_kg.edges})
    assert {r.type for r in places_relations} == {"contains"}
    for seed in range(20):
        convs = build_factcheck_conversations(
            places_kg,
            places_relations,
            templates,
            seed=seed,
            question_types=("yes_no", "multiple_choice"),
        )
        by_id = {c.id: c for c in convs}
        for relation in places_relations:
            if relation.between:
                continue
            child = _reference_child(places_kg, lineage, relation, children, seed)
            conv = by_id.get(f"{relation.id}/fc:yes_no:distractor")
            assert (extras_of(conv, FactcheckExtras).distractor if conv else None) == child
            wrong = _reference_parents(places_kg, lineage, relation, parents, 3, seed, "mc")
            conv = by_id.get(f"{relation.id}/fc:multiple_choice")
            options = extras_of(conv, FactcheckExtras).options if conv else ()
            assert {o.id for o in options} == ({relation.parent, *wrong} if wrong else set())


class CountingGraph(KnowledgeGraph):
    """A KG counting the labels read from it."""

    reads = 0

    def label(self, node_id: str) -> str:
        CountingGraph.reads += 1
        return super().label(node_id)


def labels_read(places: int) -> int:
    """Labels read to build the yes-no questions of two countries of `places` places in
    all (each place's distractor: a place of the other country)."""
    nodes = {c: Node(c, f"Country {c}", (), "country") for c in "cd"}
    nodes |= {f"p{i}": Node(f"p{i}", f"Place {i}", (), "place") for i in range(places)}
    pairs = [("cd"[i % 2], f"p{i}") for i in range(places)]
    kg = CountingGraph("flat", "places", nodes, [Edge(*pair) for pair in pairs])
    relations = [Relation(f"{c}>{p}", c, p, "contains", (c, p)) for c, p in pairs]
    templates = load_probe_templates("places")
    CountingGraph.reads = 0
    convs = build_factcheck_conversations(kg, relations, templates, question_types=("yes_no",))
    assert len(convs) == 2 * places
    country_of = {place: country for country, place in pairs}
    for conv in convs:
        distractor = extras_of(conv, FactcheckExtras).distractor
        if distractor is not None:  # a place of the other country
            assert country_of[distractor] != conv.relation_id.split(">")[0]
    return CountingGraph.reads


def test_building_reads_each_label_a_bounded_number_of_times() -> None:
    """Each question reads a few labels, however many relations share its pool: twice the
    places, about twice the reads (each question scanned the whole pool: four times)."""
    assert labels_read(200) <= 2.2 * labels_read(100)
