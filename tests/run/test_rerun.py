"""Asking a session again after a template or a synonym list changed (run.rerun, run.api
.rerun_session, `kontest rerun`): only the questions whose text changed are asked, the model
calls counted over real HTTP against the simulated model's server; every other answer is
reused from the first session and marked so; then the delta."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import Conversation, Query, TestKind
from kontest_tui.generate.synonyms import ban_value
from kontest_tui.generate.templates import (
    save_template_set,
    template_set_for_domain,
    with_template,
)
from kontest_tui.kg.io import load_graph
from kontest_tui.models.sim.server import SimServer
from kontest_tui.report.delta import measure_name
from kontest_tui.run.api import RerunPlan, SessionSpec, rerun_session, session_delta, start_session
from kontest_tui.run.rerun import plan_reuse
from kontest_tui.store import Store
from tests.support.tui import TEN_RELATIONS


def conversation(cid: str, *texts: str, kind: TestKind = TestKind.KONTEST) -> Conversation:
    return Conversation(
        id=cid,
        relation_id=cid.split("/")[0],
        kind="atomic" if len(texts) == 1 else "sequential",
        label=cid,
        turns=tuple(Query(cid.split("/")[0], f"t{i + 1}", text) for i, text in enumerate(texts)),
        test_kind=kind,
    )


def test_plan_reuses_unchanged_turns_and_counts_requests() -> None:
    """Worked by hand. The parent asked t1 = "A?", t2 = "B?" alone and in both orders, a
    question "D?" that failed, and a variant "C?". t1 now reads "A2?":
    - r/t1 [A2?] changed; r/t2 [B?] reused; r/t1+t2 [A2?, B?]: turn 1 changed, turn 2 after
      a changed turn; r/t2+t1 [B?, A2?]: turn 1 reused, turn 2 changed;
    - s/t2 [D?] failed in the parent: asked again (missing);
    - v/x~v2 (a variant whose row moved) asks what the parent's v/x~v1 asked: reused by text.
    Reused 3, asked 5 (changed 3, after a changed turn 1, missing 1) of 8 turns; requests:
    [A2?] is asked by r/t1 and by r/t1+t2's first turn (one request), so 4 distinct ones."""
    old = [
        conversation("r/t1", "A?"),
        conversation("r/t2", "B?"),
        conversation("r/t1+t2", "A?", "B?"),
        conversation("r/t2+t1", "B?", "A?"),
        conversation("s/t2", "D?"),
        conversation("v/x~v1", "C?", kind=TestKind.VARIANT),
    ]
    answered = {"r/t1": 1, "r/t2": 1, "r/t1+t2": 2, "r/t2+t1": 2, "s/t2": 0, "v/x~v1": 1}
    new = [
        conversation("r/t1", "A2?"),
        conversation("r/t2", "B?"),
        conversation("r/t1+t2", "A2?", "B?"),
        conversation("r/t2+t1", "B?", "A2?"),
        conversation("s/t2", "D?"),
        conversation("v/x~v2", "C?", kind=TestKind.VARIANT),
    ]
    plan = plan_reuse("P", old, answered, new, changed_templates=("t1",))
    assert plan.copies == (
        ("r/t2", "r/t2", 1),
        ("r/t2+t1", "r/t2+t1", 1),
        ("v/x~v1", "v/x~v2", 1),
    )
    assert (plan.reused, plan.changed, plan.after_changed, plan.missing) == (3, 3, 1, 1)
    assert plan.asked == 5 and plan.turns == 8
    assert plan.requests == 4  # [A2?] twice
    assert plan.asked_by_kind == {"kontest": 5}
    # Not sharing answers (fresh conversations): every turn is its own request, and a
    # conversation never takes another's answers.
    fresh = plan_reuse("P", old, answered, new, by_text=False, share_requests=False)
    assert fresh.requests == fresh.asked == 6
    assert ("v/x~v1", "v/x~v2", 1) not in fresh.copies


def edit_t1(text: str) -> None:
    """Save t1 with a new text in the user's copy of the places set (as the editor does)."""
    places = template_set_for_domain("places")
    save_template_set(with_template(places, replace(places.get("t1"), texts={"contains": text})))


async def test_asking_again_after_editing_t1_calls_the_model_once_per_changed_question(
    tmp_path: Path,
) -> None:
    server = SimServer(kg=load_graph(TEN_RELATIONS))
    url = await server.start()
    try:
        with Store(tmp_path / "s.db") as store:
            first = await start_session(
                store,
                SessionSpec(TEN_RELATIONS, model=f"ollama:default@{url}", kg_name="ten"),
                stream=False,
            )
            parent = first.session_id
            edit_t1("Does {parent} hold {child}?")
            checks = server.requests  # the model is checked once before the run: counted apart
            from kontest_tui.models.specs import open_model

            probe = open_model(f"ollama:default@{url}")
            await probe.check()
            await probe.aclose()
            per_check = server.requests - checks
            plans: list[RerunPlan] = []
            before = server.requests
            outcome = await rerun_session(store, parent, on_planned=plans.append, stream=False)
            calls = server.requests - before - per_check
            (plan,) = plans
            # 10 relations, t1 changed: Q1 and A's first turn ask the same new question (one
            # call), A's second turn follows it, B's second turn is it: 3 calls a relation.
            assert plan.changed_templates == ("t1",)
            assert (plan.changed, plan.after_changed, plan.missing) == (30, 10, 0)
            assert plan.requests == calls == 30
            assert plan.reused == 60 - 40
            child = outcome.session_id
            row = store.sessions.get(child)
            assert row["parent"] == parent and row["status"] == "done"
            rows = list(store.responses.rows(child))
            reused = [r for r in rows if r["origin"] is not None]
            assert len(reused) == 20 and {r["origin"] for r in reused} == {parent}
            assert all(r["cached"] and r["attempts"] == 0 for r in reused)
            # Every question asked anew holds the new text or follows it; every reused one
            # holds neither.
            conversations = {c.id: c for c in store.relations.load_conversations(child)}
            for response in rows:
                texts = [q.text for q in conversations[response["conversation"]].turns]
                asked_new = any(" hold " in text for text in texts[: response["turn"] + 1])
                assert asked_new == (response["origin"] is None), response
            delta = session_delta(store, child)
            assert delta.before == parent and delta.reused == 20 and delta.asked == 40
            assert delta.calls == 30
            errors = delta.errors
            assert errors.after - errors.new == errors.before - errors.gone == errors.kept
    finally:
        await server.close()


def test_a_banned_synonym_asks_only_the_variants_it_changed(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    args = ["--db", db, "run", "--kg", TEN_RELATIONS, "--model", "sim", "--quiet"]
    assert run_cli([*args, "--kind", "kontest,variant", "--variant-limit", "4"]) == 0
    with Store(db) as store:
        (parent,) = store.sessions.ids()
        old = {c.id: c for c in store.relations.load_conversations(parent)}
    ban_value("places", "contain", "comprise")
    out = tmp_path / "rerun.json"
    assert run_cli(["--db", db, "rerun", parent, "--format", "json", "--out", str(out)]) == 0
    shown = json.loads(out.read_text(encoding="utf-8"))
    plan, delta = shown["plan"], shown["delta"]
    assert plan["asked_by_kind"].keys() == {"variant"} and plan["changed_templates"] == []
    assert plan["asked"] == delta["asked"] > 0 and delta["calls"] == plan["requests"]
    # the variant kind's own measure (kinds.variant's delta), before and after, in its words
    (variants,) = [row for row in delta["rates"] if row["measure"] == "variants"]
    assert variants["before"]["of"] == variants["after"]["of"] > 0
    assert measure_name("variants") == "variants disagreeing (of variant tests)"
    with Store(db) as store:
        child = delta["after"]
        new = store.relations.load_conversations(child)
        asked = {r["conversation"] for r in store.responses.rows(child) if r["origin"] is None}
    old_texts = {c.turns[0].text for c in old.values() if c.test_kind is TestKind.VARIANT}
    for found in new:
        if found.test_kind is TestKind.VARIANT:
            # asked exactly when its sentence is not one the first session asked
            assert (found.id in asked) == (found.turns[0].text not in old_texts), found.id
            assert " comprise " not in found.turns[0].text
        else:
            assert found.id not in asked


def test_nothing_changed_is_one_line_and_leaves_no_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    assert run_cli(["--db", db, "run", "--kg", TEN_RELATIONS, "--model", "sim", "-q"]) == 0
    capsys.readouterr()
    assert run_cli(["--db", db, "rerun"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kontest: error: nothing to ask again:")
    with Store(db) as store:
        assert len(store.sessions.ids()) == 1
