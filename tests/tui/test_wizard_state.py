"""The wizard's state object (tui.wizard_state): its transitions without Textual.

The engine's answers are real (`run.api.prepare` on the places sample, `check_model` on the
simulated model); the screen's workers are played by calling the state's callbacks with
them, in the order a slow worker might deliver them.
"""

from __future__ import annotations

from kontest_tui.run.api import Problem, SessionSpec, check_model, prepare
from kontest_tui.tui.wizard_state import Entity, KindChoices, WizardState

LEAF = Entity("ireland.ulster.county-cavan.kinawley", "Kinawley", "places")
IRELAND = Entity("ireland", "Ireland", "places")


def prepared(state: WizardState) -> SessionSpec | None:
    """The prepare worker's answer for the state's current version."""
    return state.prepared(state.version, prepare(state.spec()))


def checked(state: WizardState) -> SessionSpec | None:
    problem, line = check_model(SessionSpec(None, model=state.model))
    return state.checked_model(state.model_version, problem, line)


def test_a_fresh_state_waits_for_the_engine_then_runs() -> None:
    state = WizardState("places", "sim")
    assert state.run_state() == (False, "Waiting: preparing the session…")
    assert prepared(state) is None
    assert state.run_state() == (False, "Waiting: checking the model…")
    assert checked(state) is None
    assert state.run_state() == (True, "")
    decision, _ = state.request_run()
    assert decision == "start"
    spec = state.ready_spec()
    assert spec.resolved and spec.model == "sim" and spec.kg_name == "places"
    assert state.chosen_templates() == ("t1", "t2")


def test_run_pressed_while_preparing_starts_when_ready_and_not_before() -> None:
    state = WizardState("places", "sim")
    decision, why = state.request_run()
    assert decision == "armed" and "preparing" in why
    assert checked(state) is None  # still preparing: nothing starts
    spec = prepared(state)
    assert spec is not None and spec.graph.name == "places"
    assert not state.armed


def test_a_failed_load_disarms_and_another_kg_never_starts_unasked() -> None:
    state = WizardState("no-such-kg", "sim")
    checked(state)
    assert state.request_run()[0] == "armed"
    assert prepared(state) is None  # the load failed: no run
    assert not state.armed
    ready, why = state.run_state()
    assert not ready and "no-such-kg" in why
    assert state.request_run()[0] == "blocked"
    # Picking a KG that loads must not start the run asked for before.
    state.choose_kg("places")
    assert prepared(state) is None and not state.armed
    assert state.run_state() == (True, "")


def test_any_change_while_armed_disarms() -> None:
    state = WizardState("places", "sim")
    checked(state)
    assert state.request_run()[0] == "armed"
    stale = state.version
    state.set_depth(2)
    assert not state.armed
    # the answer for the older choices is dropped
    assert state.prepared(stale, prepare(SessionSpec("places"))) is None
    assert state.preparation is None and state.preparing


def test_a_leaf_entity_blocks_run_with_the_reason() -> None:
    state = WizardState("places", "sim")
    checked(state)
    assert state.add_entity(LEAF)
    assert state.spec().entities == (LEAF.id,)
    prepared(state)
    ready, why = state.run_state()
    assert not ready and "Kinawley has nothing below it" in why
    decision, reason = state.request_run()
    assert decision == "blocked" and reason == why
    # the same entity twice changes nothing; clearing the scope gives the whole KG back
    assert not state.add_entity(LEAF)
    assert state.clear_scope() and state.spec().entities == ()
    prepared(state)
    assert state.run_state() == (True, "")


def test_an_entity_of_another_kg_switches_to_it() -> None:
    state = WizardState("music", "sim")
    state.set_templates(("t1", "t3"))
    state.add_entity(IRELAND)
    assert state.source == "places" and [e.id for e in state.entities] == ["ireland"]
    assert state.template_ids is None  # the other KG's templates: its first two
    state.choose_kg("music")
    assert state.entities == [] and state.source == "music"


def test_depth_templates_and_kinds_reach_the_spec() -> None:
    state = WizardState("places", "sim")
    assert state.set_depth(2) and not state.set_depth(2)
    assert state.set_per_path(True)
    prepared(state)
    assert not state.set_templates(("t1", "t2"))  # the default already
    assert state.set_templates(("t1", "t3"))
    kinds = KindChoices(kinds=("kontest", "variant"), strength=3, values=(("variant_limit", 4),))
    assert state.set_kinds(kinds)
    spec = state.spec()
    assert (spec.depth, spec.per_path, spec.template_ids) == (2, True, ("t1", "t3"))
    assert [str(kind) for kind in spec.kinds] == ["kontest", "variant"]
    assert spec.kind_options is not None
    assert (spec.kind_options.strength, spec.kind_options.variant_limit) == (3, 4)
    assert spec.kind_options.question_types is None  # all ticked: the engine's default


def test_kind_options_with_nothing_ticked_block_the_run() -> None:
    state = WizardState("places", "sim")
    checked(state)
    state.set_kinds(KindChoices(kinds=("kontest", "factcheck"), values=(("question_types", ()),)))
    prepared(state)
    ready, why = state.run_state()
    assert not ready and why == "FactChecker: tick at least one question type."


def test_one_template_blocks_the_run() -> None:
    state = WizardState("places", "sim")
    checked(state)
    state.set_templates(("t1",))
    prepared(state)
    assert state.run_state() == (
        False,
        "Choose at least two templates: KONTEST compares two phrasings.",
    )


def test_model_problems_and_a_model_changed_while_checking() -> None:
    state = WizardState("places", "ssim")
    prepared(state)
    checked(state)
    ready, why = state.run_state()
    assert not ready and "unknown model kind 'ssim'" in why
    assert state.set_model("sim:careful")
    old = state.model_version
    assert state.set_model("sim:forgetful")
    stale_problem = Problem("model", "stale")
    assert state.checked_model(old, stale_problem) is None and state.model_issue is None
    checked(state)
    assert state.run_state() == (True, "") and state.model_line.startswith("simulated model")
    assert state.ready_spec().model == "sim:forgetful"


def test_a_model_that_does_not_answer_blocks_and_disarms() -> None:
    state = WizardState("places", "ollama:none@http://127.0.0.1:9")
    prepared(state)
    assert state.request_run()[0] == "armed"
    assert checked(state) is None and not state.armed
    ready, why = state.run_state()
    assert not ready and why.startswith("The model does not answer")


def test_a_crashed_prepare_worker_is_a_problem() -> None:
    state = WizardState("places", "sim")
    checked(state)
    state.request_run()
    state.prepare_failed(state.version, "RuntimeError: boom")
    assert not state.armed and state.run_state() == (False, "Preparing failed: RuntimeError: boom")
    assert state.set_questions("q.jsonl") and state.prepare_error == ""


def test_the_template_set_reaches_the_spec_and_the_question_check() -> None:
    state = WizardState("places", "sim")
    prepared(state)
    assert state.preparation is not None and state.preparation.questions is not None
    natural = state.preparation.questions
    assert (natural.template_set, natural.relations, natural.flagged_relations) == (
        "places natural",
        265,
        0,
    )
    assert state.set_template_set("paper") and not state.set_template_set("paper")
    assert state.spec().template_set == "paper"
    prepared(state)
    assert state.preparation is not None and state.preparation.questions is not None
    paper = state.preparation.questions
    assert paper.template_set == "places paper" and paper.flagged_relations == 265
    assert state.chosen_templates() == ("t1", "t2")
