"""KONTEST conversations: Q1, Q2 atomic and A, B sequential per relation, in generation order."""

from __future__ import annotations

from kontest_tui.domain.records import TestKind
from kontest_tui.generate.conversations import build_conversations, build_suite, question_text
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.templates import load_template_set
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import load_graph

PROMPT = "Be concise as possible. Answer with a yes or no response."


def test_kinawley_gives_12_conversations_and_18_calls(kinawley_kg: KnowledgeGraph) -> None:
    places = load_template_set("places")
    relations = extract_relations(kinawley_kg)
    conversations = build_conversations(kinawley_kg, relations, places)
    assert len(conversations) == 12
    assert sum(len(c.turns) for c in conversations) == 18
    first = conversations[:4]
    rel = "Ireland>Ireland/Ulster"
    assert [c.id for c in first] == [f"{rel}/t1", f"{rel}/t2", f"{rel}/t1+t2", f"{rel}/t2+t1"]
    assert [c.label for c in first] == ["Q1", "Q2", "A", "B"]
    assert [c.kind for c in first] == ["atomic", "atomic", "sequential", "sequential"]
    q1 = "Does Ireland contain Ulster?"
    q2 = "Is Ulster in Ireland?"
    assert [[q.text for q in c.turns] for c in first] == [[q1], [q2], [q1, q2], [q2, q1]]
    assert [[q.template_id for q in c.turns] for c in first] == [
        ["t1"],
        ["t2"],
        ["t1", "t2"],
        ["t2", "t1"],
    ]
    assert all(c.relation_id == rel for c in first)
    assert all(c.test_kind is TestKind.KONTEST and c.system_prompt == PROMPT for c in conversations)
    assert [c.relation_id for c in conversations[4::4]] == [
        "Ireland>Ireland/Ulster/Kinawley",
        "Ireland/Ulster>Ireland/Ulster/Kinawley",
    ]
    assert conversations[4].turns[0].text == "Does Ireland contain Kinawley?"
    assert len({c.id for c in conversations}) == 12


def test_the_paper_set_asks_the_papers_texts(kinawley_kg: KnowledgeGraph) -> None:
    paper = load_template_set("paper", "places")
    conversations = build_conversations(kinawley_kg, extract_relations(kinawley_kg), paper)
    assert [c.turns[0].text for c in conversations[:2]] == [
        "Does Ireland have a Ulster?",
        "Is there a Ulster in Ireland?",
    ]


def test_one_template_gives_atomic_only(kinawley_kg: KnowledgeGraph) -> None:
    places = load_template_set("places")
    conversations = build_conversations(kinawley_kg, extract_relations(kinawley_kg), places, ["t3"])
    assert [c.label for c in conversations] == ["Q1"] * 3
    assert conversations[0].turns[0].text == "Is Ulster part of Ireland?"


def test_three_templates_give_three_atomic_and_first_pair(kinawley_kg: KnowledgeGraph) -> None:
    places = load_template_set("places")
    relations = extract_relations(kinawley_kg)[:1]
    conversations = build_conversations(kinawley_kg, relations, places, ["t2", "t3", "t1"])
    assert [(c.label, c.id.split("/")[-1]) for c in conversations] == [
        ("Q1", "t2"),
        ("Q2", "t3"),
        ("Q3", "t1"),
        ("A", "t2+t3"),
        ("B", "t3+t2"),
    ]


def test_music_questions_use_the_relation_type(build_kg) -> None:
    kg = build_kg([["Muse", "The 2nd Law", "Panic Station"]], "music", ["artist", "album", "song"])
    music = load_template_set("music")
    relations = extract_relations(kg)
    texts = [
        c.turns[0].text for c in build_conversations(kg, relations, music) if c.kind == "atomic"
    ]
    assert texts == [
        'Does Muse have an album called "The 2nd Law"?',
        'Is "The 2nd Law" an album by Muse?',
        'Does Muse have a song called "Panic Station"?',
        'Is "Panic Station" a song by Muse?',
        'Does the album "The 2nd Law" have a song called "Panic Station"?',
        'Is "Panic Station" a song on the album "The 2nd Law"?',
    ]
    assert (
        question_text(kg, relations[2], music, "t3")
        == 'Is "Panic Station" a track on the album "The 2nd Law"?'
    )
    # the papers' set: t3 is the paper's unseen template (Appendix Fig. 5)
    paper = load_template_set("paper", "music")
    assert [question_text(kg, relations[2], paper, t) for t in ("t1", "t2", "t3")] == [
        'Does the album, "The 2nd Law" have a song called "Panic Station"?',
        'Is "Panic Station" in the album, "The 2nd Law"?',
        'Is "Panic Station" performed in the album, "The 2nd Law"?',
    ]
    assert question_text(kg, relations[0], paper, "t3") == (
        'Is "The 2nd Law" an album performed by Muse?'
    )


def test_hostile_labels_are_inserted_literally(build_kg) -> None:
    kg = build_kg([['Say "{child}"', "a\nb {parent} \\n"]])
    conversations = build_suite(kg).conversations
    assert conversations[0].turns[0].text == 'Does Say "{child}" contain a b {parent} \\n?'
    paper = build_suite(kg, template_set="paper").conversations
    assert paper[0].turns[0].text == 'Does Say "{child}" have a a b {parent} \\n?'


def test_suite_over_samples() -> None:
    suite = build_suite(load_graph("places"))
    assert len(suite.relations) == 265
    assert len(suite.conversations) == 4 * 265
    assert suite.template_ids == ("t1", "t2")
    per_path = build_suite(load_graph("music"), per_path=True, template_ids=["t1", "t2", "t3"])
    assert len(per_path.conversations) == 146 * 5
