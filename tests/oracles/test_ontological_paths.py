"""Ontological oracle on longer paths, per-path scopes and partial answers (hand-computed)."""

from __future__ import annotations

from collections.abc import Mapping

from kontest_tui.domain.records import Answer, Relation
from kontest_tui.oracles.ontological import error_path, find_ontological_verdicts, relation_scope
from tests.oracles.oracle_toys import N, X, Y, build_conversations, build_relations, script_answers


def atomic_script(
    t1: Mapping[str, Answer], t2: Mapping[str, Answer]
) -> dict[str, dict[str, list[Answer | None]]]:
    return {rid: {"Q1": [t1[rid]], "Q2": [t2[rid]]} for rid in t1}


def test_four_node_path_gives_three_tests_per_template() -> None:
    """Path a-b-c-d: 6 relations; a>c, a>d, b>d have nodes in between -> 3 tests per template.

    t1: yes to a>b, b>c, c>d, a>c; no to b>d and a>d.
      a>c yes -> ok; b>d no with yes-path b->c->d -> error; a>d no with yes-paths
      a->c->d (2 edges) and a->b->c->d (3 edges) -> error, shortest path reported.
    t2: all yes -> 3 tests, no error.
    """
    relations = build_relations(["a", "b", "c", "d"])
    assert len(relations) == 6
    t1 = {"a>b": Y, "a>c": Y, "a>d": N, "b>c": Y, "b>d": N, "c>d": Y}
    t2 = dict.fromkeys(t1, Y)
    conversations = build_conversations(relations)
    answers = script_answers(conversations, atomic_script(t1, t2))
    verdicts = find_ontological_verdicts(relations, conversations, answers)
    assert [(v.template_id, v.relation_id, v.error) for v in verdicts] == [
        ("t1", "a>c", False),
        ("t1", "a>d", True),
        ("t1", "b>d", True),
        ("t2", "a>c", False),
        ("t2", "a>d", False),
        ("t2", "b>d", False),
    ]
    a_d = verdicts[1]
    assert "a -> c -> d" in a_d.detail
    assert error_path(a_d) == ["a", "c", "d"]
    assert error_path(verdicts[2]) == ["b", "c", "d"]
    assert error_path(verdicts[0]) == []
    assert a_d.answers == (N, Y, Y)
    assert len(a_d.refs) == 3


def test_no_path_no_error_and_invalid_own_answer_not_a_test() -> None:
    """t1: a>c no, but b>c is no too: no yes-path a->b->c -> a test without error.
    t2: a>c invalid -> not a test at all."""
    relations = build_relations(["a", "b", "c"])
    t1 = {"a>b": Y, "a>c": N, "b>c": N}
    t2 = {"a>b": Y, "a>c": X, "b>c": Y}
    conversations = build_conversations(relations)
    answers = script_answers(conversations, atomic_script(t1, t2))
    verdicts = find_ontological_verdicts(relations, conversations, answers)
    assert [(v.template_id, v.relation_id, v.error) for v in verdicts] == [("t1", "a>c", False)]


def test_per_path_mode_checks_each_path_on_its_own() -> None:
    """Paths I-U-K (p0) and I-U-D (p1) in per-path mode: I>U appears on both with different
    t1 answers (p0 no, p1 yes). p0: I>K no, its path's yes-edges are only U>K -> no error.
    p1: I>D no with I>U yes and U>D yes -> error. Merging both paths into one graph would wrongly
    make p0's I>K an error too."""
    relations = build_relations(["I", "U", "K"], prefix="p0:") + build_relations(
        ["I", "U", "D"], prefix="p1:"
    )
    assert relation_scope(relations[0]) == "p0" and relation_scope(relations[3]) == "p1"
    t1 = {"p0:I>U": N, "p0:I>K": N, "p0:U>K": Y, "p1:I>U": Y, "p1:I>D": N, "p1:U>D": Y}
    t2 = dict.fromkeys(t1, X)
    conversations = build_conversations(relations)
    answers = script_answers(conversations, atomic_script(t1, t2))
    verdicts = find_ontological_verdicts(relations, conversations, answers)
    assert [(v.relation_id, v.error) for v in verdicts] == [("p0:I>K", False), ("p1:I>D", True)]


def test_scope_ignores_ids_that_only_look_per_path() -> None:
    odd = Relation("p3:x>y", "p3:x", "y", "contains", ("p3:x", "y"))
    assert relation_scope(odd) == ""
    plain = Relation("Q1>Q2", "Q1", "Q2", "contains", ("Q1", "Q2"))
    assert relation_scope(plain) == ""


def test_deduplicated_graph_finds_path_outside_own_path() -> None:
    """A DAG: r->x->leaf and r->y->leaf. Relation r>leaf has path r,x,leaf; the SUT says no to
    r>leaf and to x>leaf but yes to r>y and y>leaf: the whole-graph check still finds r->y->leaf."""
    relations = [
        Relation("r>x", "r", "x", "contains", ("r", "x")),
        Relation("r>y", "r", "y", "contains", ("r", "y")),
        Relation("x>leaf", "x", "leaf", "contains", ("x", "leaf")),
        Relation("y>leaf", "y", "leaf", "contains", ("y", "leaf")),
        Relation("r>leaf", "r", "leaf", "contains", ("r", "x", "leaf")),
    ]
    t1 = {"r>x": Y, "r>y": Y, "x>leaf": N, "y>leaf": Y, "r>leaf": N}
    conversations = build_conversations(relations)
    answers = script_answers(conversations, atomic_script(t1, dict.fromkeys(t1, X)))
    (verdict,) = find_ontological_verdicts(relations, conversations, answers)
    assert verdict.error and "r -> y -> leaf" in verdict.detail


def test_string_answers_are_accepted() -> None:
    relations = build_relations(["a", "b", "c"])
    conversations = build_conversations(relations)
    answers = script_answers(
        conversations, atomic_script({"a>b": Y, "a>c": N, "b>c": Y}, {"a>b": Y, "a>c": Y, "b>c": Y})
    )
    as_strings = {key: str(value.value) for key, value in answers.items()}
    # the oracle compares answers by value: plain strings (as a stored row holds) work too
    verdicts = find_ontological_verdicts(relations, conversations, as_strings)  # type: ignore[arg-type]
    assert [(v.template_id, v.error) for v in verdicts] == [("t1", True), ("t2", False)]


def test_the_prototypes_rule_drops_tests_that_a_chain_of_invalid_answers_joins() -> None:
    """Path a-b-c-d, two readings of which tests are valid (oracles.ontological).

    t1: a>b and b>c invalid, c>d yes, a>c yes, b>d yes, a>d yes. The tests a>c, a>d, b>d
    are valid answers: 3 tests by the paper's text. The prototype's rule drops a test that
    is no error when invalid answers chain its nodes: a>c (a -> b -> c, both invalid) goes;
    a>d (a -> b -> c, then c>d is yes: no chain of invalid answers reaches d) and b>d (b>c
    invalid, c>d yes) stay: 2 tests.
    t2: a>b yes, b>d yes, a>c invalid, c>d invalid, a>d no, b>c yes. a>d is an error (yes-path
    a -> b -> d) and stays one although a -> c -> d is a chain of invalid answers (the
    prototype finds errors first); b>d (yes) stays (b>c yes, no invalid chain); a>c has no
    valid answer of its own: no test under either rule.
    """
    relations = build_relations(["a", "b", "c", "d"])
    t1 = {"a>b": X, "a>c": Y, "a>d": Y, "b>c": X, "b>d": Y, "c>d": Y}
    t2 = {"a>b": Y, "a>c": X, "a>d": N, "b>c": Y, "b>d": Y, "c>d": X}
    conversations = build_conversations(relations)
    answers = script_answers(conversations, atomic_script(t1, t2))
    paper = find_ontological_verdicts(relations, conversations, answers)
    prototype = find_ontological_verdicts(relations, conversations, answers, rule="prototype")
    assert [(v.template_id, v.relation_id, v.error) for v in paper] == [
        ("t1", "a>c", False),
        ("t1", "a>d", False),
        ("t1", "b>d", False),
        ("t2", "a>d", True),
        ("t2", "b>d", False),
    ]
    assert [(v.template_id, v.relation_id, v.error) for v in prototype] == [
        ("t1", "a>d", False),
        ("t1", "b>d", False),
        ("t2", "a>d", True),
        ("t2", "b>d", False),
    ]
