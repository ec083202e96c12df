"""The session API's door: a spec names the KG source and scope, `prepare` says what its run
asks and what blocks it, `create_session` stores it, `stored_spec` gives it back.

Real parts: the bundled places sample, a SQLite file, the simulated model; the expected
figures are worked out from the engine steps the spec stands for (load, scope, Algorithm 1,
conversations, kinds), never copied from the output.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kontest_tui.domain.records import TestKind
from kontest_tui.errors import GraphError, TemplateError
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.templates import template_set_for_domain
from kontest_tui.kg.io import load_graph
from kontest_tui.kg.scope import ScopeError, scope_graph
from kontest_tui.kinds.registry import KindOptions, build_kind_for_relations
from kontest_tui.run.api import (
    SessionSpec,
    create_session,
    prepare,
    preview_relation,
    resolve_spec,
    start_session,
    stored_spec,
)
from kontest_tui.store.database import Store

LEAF = "ireland.ulster.county-cavan.kinawley"


@pytest.fixture
def store(tmp_path: Path):  # noqa: ANN201
    opened = Store(tmp_path / "k.db")
    yield opened
    opened.close()


def places_relations(entities: tuple[str, ...] = (), depth: int | None = None) -> list:
    kg = load_graph("places")
    if entities:
        kg, depth = scope_graph(kg, entities, depth), None
    return extract_relations(kg, depth=depth)


def test_prepare_says_what_the_run_asks() -> None:
    relations = places_relations()
    preparation = prepare(SessionSpec("places"))
    assert preparation.problems == [] and preparation.blocked == ""
    assert preparation.relations == len(relations)
    assert preparation.summary is not None and preparation.summary.relations == len(relations)
    # KONTEST: Q1, Q2, A, B per relation; 1 + 1 + 2 + 2 model calls
    (count,) = preparation.counts
    assert (count.kind, count.conversations, count.calls) == (
        "kontest",
        4 * len(relations),
        6 * len(relations),
    )
    assert [r.id for r in preparation.listed] == [
        r.id for r in relations[: len(preparation.listed)]
    ]
    assert preparation.kg is not None and preparation.spec.resolved


def test_prepare_walks_the_relations_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing, the KONTEST counts, the other kinds' build and the question check read
    one walk over the relations (it was four), and count what four walks counted."""
    import kontest_tui.run.prepare as run_prepare
    from kontest_tui.generate.relations import iter_relations as walk

    relations = places_relations(("ireland",))
    walks: list[int] = []

    def counted(*args: Any, **kwargs: Any):  # noqa: ANN202
        walks.append(1)
        return walk(*args, **kwargs)

    monkeypatch.setattr(run_prepare, "iter_relations", counted)
    spec = SessionSpec("places", entities=("ireland",), kinds=(TestKind.KONTEST, TestKind.LOGIC))
    preparation = prepare(spec)
    assert len(walks) == 1
    assert preparation.problems == [] and preparation.relations == len(relations)
    assert preparation.summary is not None and preparation.summary.relations == len(relations)
    assert preparation.counts[0].conversations == 4 * len(relations)
    assert preparation.spec.prebuilt is not None
    assert preparation.spec.prebuilt.relation_ids == tuple(r.id for r in relations)
    assert preparation.questions is not None
    assert preparation.questions.relations == len(relations)


def test_the_preview_of_a_relation_holds_every_kind_and_each_questions_variant_rows() -> None:
    spec = SessionSpec(
        "places",
        kinds=(TestKind.KONTEST, TestKind.VARIANT, TestKind.FACTCHECK),
        kind_options=KindOptions(strength=2, variant_limit=3),
    )
    preparation = prepare(spec, variant_rows=True)
    assert preparation.problems == []
    preview = preparation.preview
    assert preview is not None and preview.relation == preparation.listed[0]
    kinds = [c.test_kind for c in preview.conversations]
    assert kinds.count(TestKind.KONTEST) == 4
    # at most 3 variants per question, 2 questions (t1, t2)
    assert 2 <= kinds.count(TestKind.VARIANT) <= 6
    assert kinds.count(TestKind.FACTCHECK) >= 1
    assert {c.relation_id for c in preview.conversations} == {preview.relation.id}
    assert preview.variants is not None
    assert [v.template_id for v in preview.variants] == ["t1", "t2"]
    for variants in preview.variants:
        assert variants.preview is not None
        assert variants.preview.sentences[0] == variants.question  # row 0 is the original
    # another relation, browsed: its own conversations
    other = preparation.listed[5]
    browsed = preview_relation(preparation.spec, other)
    assert {c.relation_id for c in browsed.conversations} == {other.id}
    # two Garnich nodes (a commune in a canton, a town in the commune): told apart
    assert browsed.name == "Garnich (in Canton of Capellen) ⊃ Garnich (locality in Garnich)"
    assert preparation.listed_names[5] == browsed.name


def test_kind_counts_are_the_kinds_built_for_every_relation() -> None:
    relations = places_relations(("ireland",))
    kg = scope_graph(load_graph("places"), ["ireland"], None)
    template_set = template_set_for_domain("places")
    options = KindOptions(question_types=("wh",))
    expected = build_kind_for_relations(
        kg, relations, template_set, ["t1", "t2"], TestKind.FACTCHECK, options
    )
    spec = SessionSpec(
        "places", entities=("ireland",), kinds=(TestKind.FACTCHECK,), kind_options=options
    )
    (count,) = prepare(spec).counts
    assert (count.kind, count.conversations) == ("factcheck", len(expected))
    assert count.calls == sum(len(c.turns) for c in expected)


def test_a_leaf_entity_blocks_the_run_with_a_hint() -> None:
    preparation = prepare(SessionSpec("places", entities=(LEAF,), depth=2))
    (problem,) = preparation.problems
    assert problem.step == "graph"
    assert "Kinawley has nothing below it" in problem.message
    assert preparation.preview is None and preparation.counts == []


@pytest.mark.parametrize(
    ("spec", "step", "error"),
    [
        (SessionSpec("no-such-sample"), "graph", GraphError),
        (SessionSpec("places", entities=("Irelnd",)), "graph", ScopeError),
        (SessionSpec("places", template_set="/nowhere/set.toml"), "templates", TemplateError),
        (SessionSpec("places", template_ids=("t1", "t9")), "templates", TemplateError),
    ],
)
def test_what_does_not_load_is_a_problem_with_the_engines_error(
    spec: SessionSpec, step: str, error: type
) -> None:
    (problem,) = prepare(spec).problems
    assert problem.step == step and isinstance(problem.error, error)
    with pytest.raises(error):
        problem.raise_error()


def test_one_template_and_no_kind_are_problems() -> None:
    (problem,) = prepare(SessionSpec("places", template_ids=("t1",))).problems
    assert (problem.step, problem.message) == (
        "templates",
        "Choose at least two templates: KONTEST compares two phrasings.",
    )
    (problem,) = prepare(SessionSpec("places", kinds=())).problems
    assert problem.step == "kinds"


def test_model_problems_without_and_with_a_check() -> None:
    (problem,) = prepare(SessionSpec("places", model="sim:no-such-profile")).problems
    assert problem.step == "model" and "no-such-profile" in problem.message
    (problem,) = prepare(SessionSpec("places", model="ssim")).problems
    assert problem.step == "model"
    # nothing listens on port 9: only a check finds it
    unreachable = SessionSpec("places", model="ollama:none@http://127.0.0.1:9")
    assert prepare(unreachable).problems == []
    (problem,) = prepare(unreachable, ask_model=True).problems
    assert problem.step == "model" and problem.message.startswith("The model does not answer")
    assert prepare(SessionSpec("places"), ask_model=True).model_line


def test_resolving_scopes_once(tmp_path: Path) -> None:
    resolved = resolve_spec(SessionSpec("places", entities=("Ireland",), depth=2))
    kg = resolved.graph
    assert resolved.entities == () and resolved.depth is None and resolved.kg_name == "places"
    assert set(kg.nodes) == set(scope_graph(load_graph("places"), ["ireland"], 2).nodes)
    assert resolve_spec(resolved) is resolved


def test_create_session_stores_the_scope_the_cli_asks(store: Store) -> None:
    session_id = create_session(store, SessionSpec("places", entities=("ireland",), depth=2))
    expected = places_relations(("ireland",), 2)
    assert [r.id for r in store.relations.load(session_id)] == [r.id for r in expected]
    row = store.sessions.get(session_id)
    assert row["kg_name"] == "places" and row["depth"] is None


def test_a_questions_file_only_session(store: Store, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"question": "is the sky blue", "answer": True, "passage": ""}) + "\nnot json\n",
        encoding="utf-8",
    )
    preparation = prepare(SessionSpec(None, questions=str(questions)))
    assert preparation.problems == []
    assert [c.kind for c in preparation.counts] == ["annotation"]
    assert len(preparation.spec.problems) == 1  # the skipped line
    session_id = create_session(store, preparation.spec)
    assert store.relations.load(session_id) == []
    assert store.sessions.get(session_id)["kg_name"] == f"questions:{questions}"


def test_the_stored_spec_starts_a_session_on_the_same_relations(store: Store) -> None:
    spec = SessionSpec(
        "places",
        entities=("ireland",),
        depth=2,
        limit=7,
        kinds=(TestKind.KONTEST, TestKind.LOGIC),
        seed=3,
    )
    first = asyncio.run(start_session(store, spec)).session_id
    again = stored_spec(store, first)
    assert again.model == "sim" and again.kg_name == "places" and again.seed == 3
    assert list(again.kinds) == [TestKind.KONTEST, TestKind.LOGIC]
    second = asyncio.run(start_session(store, replace(again, model="sim:forgetful"))).session_id
    assert store.sessions.get(second)["model"] == "sim:forgetful"
    relations = [r.id for r in store.relations.load(first)]
    assert len(relations) == 7
    assert [r.id for r in store.relations.load(second)] == relations
    assert [c.id for c in store.relations.load_conversations(second)] == [
        c.id for c in store.relations.load_conversations(first)
    ]


def test_kontest_conversations_of_the_preview_are_those_stored(store: Store) -> None:
    preparation = prepare(SessionSpec("places", limit=3))
    session_id = create_session(store, preparation.spec)
    first = preparation.listed[0]
    stored = [
        c for c in store.relations.load_conversations(session_id) if c.relation_id == first.id
    ]
    assert len(stored) == 4 and preparation.preview is not None
    assert [c.turns for c in stored] == [c.turns for c in preparation.preview.conversations]


ALL_KINDS = (TestKind.KONTEST, TestKind.FACTCHECK, TestKind.LOGIC, TestKind.VARIANT)


def stored_conversations(store: Store, session_id: str) -> list[tuple]:
    return [
        (c.id, c.kind, c.test_kind, tuple(q.text for q in c.turns), c.expected)
        for c in store.relations.load_conversations(session_id)
    ]


def test_the_kinds_prepare_built_are_stored_as_they_are(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other kinds prepare builds to count them are not built again on Run: the prepared
    spec carries them; a session of it stores them without
    building them (the builder patched to fail), the same conversations as a session of the
    spec never prepared (built when stored, as `kontest run` does)."""
    import kontest_tui.run.session as run_session

    spec = SessionSpec("places", entities=("ireland",), kinds=ALL_KINDS)
    fresh = create_session(store, spec)
    prepared = prepare(spec).spec
    assert prepared.prebuilt is not None
    assert {c.test_kind for c in prepared.prebuilt.conversations} == set(ALL_KINDS[1:])

    def built_again(*args: object, **kwargs: object) -> list:
        raise AssertionError("the other kinds were built again")

    monkeypatch.setattr(run_session, "build_kind_conversations", built_again)
    reused = create_session(store, prepared)
    assert stored_conversations(store, reused) == stored_conversations(store, fresh)


def test_kinds_built_for_other_relations_are_built_again(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prebuilt set is used only for the relations, templates, kinds and options it was
    built for: another limit, another seed, and the kinds are built again."""
    import kontest_tui.kinds.registry as kinds_registry

    spec = SessionSpec("places", entities=("ireland",), kinds=ALL_KINDS[:2])
    prepared = prepare(spec).spec
    calls: list[int] = []
    build = kinds_registry.build_kind_conversations

    def counted(*args: Any, **kwargs: Any) -> list:
        calls.append(1)
        return build(*args, **kwargs)

    monkeypatch.setattr("kontest_tui.run.session.build_kind_conversations", counted)
    create_session(store, replace(prepared, limit=3))
    create_session(store, replace(prepared, kind_options=KindOptions(seed=5)))
    assert len(calls) == 2
    create_session(store, prepared)
    assert len(calls) == 2
