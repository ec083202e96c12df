"""The new-session wizard: graph, templates, variants, test kinds, model, then Run.

Each step is a tab and a widget of its own (tui/widgets/wizard/) that runs its own workers
(the samples, the entity search and a Wikidata build; a relation's preview; the test kinds;
the model presets, Ollama's models and the model's check) and posts what the user did or
its workers found. The screen keeps the step order, the shared state
(tui.wizard_state.WizardState, plain Python) and what crosses steps: it turns each message
into a transition of the state, prepares the state's spec in its one worker
(`run.api.prepare`: the graph, counts, previews and what blocks a run) and hands each step
what concerns it. It never chains engine steps: Run hands the prepared spec to the live
run, which stores and asks it through `run.api.start_session`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Input, TabbedContent, TabPane

from kontest_tui.errors import KontestError
from kontest_tui.run.api import (
    Preparation,
    RelationPreview,
    SessionSpec,
    prepare,
)
from kontest_tui.tui.widgets.key_footer import KeyFooter
from kontest_tui.tui.widgets.wizard.graph import GraphStep
from kontest_tui.tui.widgets.wizard.kinds import KindsStep
from kontest_tui.tui.widgets.wizard.model import ModelStep
from kontest_tui.tui.widgets.wizard.templates import TemplatesStep
from kontest_tui.tui.widgets.wizard.variants import VariantsStep
from kontest_tui.tui.wizard_state import Entity, KindChoices, WizardState
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.domain.records import Relation
    from kontest_tui.generate.templates import Template
    from kontest_tui.kg.graph import KnowledgeGraph
    from kontest_tui.tui.app import KontestApp


class WizardScreen(WorkerFailures, Screen[None]):
    """Choose a KG, scope, depth, templates, kinds and model; see what will be asked; run."""

    BINDINGS = [
        Binding(
            "ctrl+r",
            "run_session",
            "Run",
            id="run_session",
            tooltip="Start the run (or say why it cannot start)",
        ),
        Binding(
            "ctrl+l",
            "load_graph",
            "Load KG",
            id="load_graph",
            tooltip="Load the chosen KG (or the file typed) again and preview it",
        ),
        Binding(
            "ctrl+k",
            "check_model",
            "Check model",
            id="check_model",
            show=False,  # the Model step's Check connection button; in the help and palette
            tooltip="Check the model connection",
        ),
        Binding(
            "ctrl+pagedown",
            "step(1)",
            "Next step",
            id="wizard_next",
            priority=True,  # from every field (Inputs, lists and selects keep their keys)
            tooltip="Go to the next step of the wizard",
        ),
        Binding(
            "ctrl+pageup",
            "step(-1)",
            "Prev step",
            id="wizard_previous",
            priority=True,
            show=False,
            tooltip="Go to the previous step of the wizard",
        ),
        Binding(
            "escape",
            "app.pop_screen",
            "Back",
            id="wizard_back",
            tooltip="Back to the previous screen",
        ),
    ]
    STEPS = ("step-graph", "step-templates", "step-variants", "step-kinds", "step-model")

    # -- what the prepare worker posts ----------------------------------------------------

    class Prepared(Message):
        """The engine prepared the spec of `version` (run.api.prepare)."""

        def __init__(self, version: int, preparation: Preparation) -> None:
            super().__init__()
            self.version = version
            self.preparation = preparation

    class PrepareFailed(Message):
        """The prepare worker failed (not a problem of the spec: a bug)."""

        def __init__(self, version: int, message: str) -> None:
            super().__init__()
            self.version = version
            self.message = message

    def __init__(
        self, kg: str | None = None, model: str | None = None, start_step: str = "step-graph"
    ) -> None:
        super().__init__()
        self.state = WizardState(kg or "places", model or "sim")
        self.start_step = start_step
        self.shown_version = -1  # the preparation the steps show
        self.announce_questions = False  # say what the next preparation read of the file

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=self.start_step, id="wizard-tabs"):
            yield GraphStep("1 Graph", id="step-graph")
            yield TemplatesStep("2 Templates", id="step-templates")
            yield VariantsStep("3 Variants", id="step-variants")
            yield KindsStep("4 Kinds", self.state.kinds.kinds, id="step-kinds")
            yield ModelStep("5 Model & run", self.state.model, id="step-model")
        footer = KeyFooter()
        footer.show_command_palette = False  # ctrl+p still opens it (f1 says so): the room
        yield footer  # goes to the keys, so that f1 (help) still shows at 80 columns

    @property
    def graph_step(self) -> GraphStep:
        return self.query_one(GraphStep)

    @property
    def templates_step(self) -> TemplatesStep:
        return self.query_one(TemplatesStep)

    @property
    def variants_step(self) -> VariantsStep:
        return self.query_one(VariantsStep)

    @property
    def kinds_step(self) -> KindsStep:
        return self.query_one(KindsStep)

    @property
    def model_step(self) -> ModelStep:
        return self.query_one(ModelStep)

    @property
    def preparation(self) -> Preparation | None:
        return self.state.preparation

    @property
    def kg(self) -> KnowledgeGraph | None:
        """The scoped graph of the latest preparation."""
        return self.state.preparation.kg if self.state.preparation is not None else None

    def on_mount(self) -> None:
        if self.start_step == "step-graph":
            self.graph_step.focus_search()  # the search field first
        self.show_kg_choice()
        self.start_prepare()
        self.start_model_check()
        self.render_state()

    def worker_failed(self, group: str, error: BaseException) -> None:
        """The preparation failed (already notified): the steps say so instead of waiting."""
        if group == "wizard-prepare":
            self.state.prepare_failed(self.state.version, str(error) or type(error).__name__)
            self.render_state()

    # -- moving between steps -------------------------------------------------------------

    def action_step(self, offset: int) -> None:
        """Show the next (offset 1) or previous (-1) step, wrapping around."""
        tabs = self.query_one("#wizard-tabs", TabbedContent)
        index = self.STEPS.index(tabs.active) if tabs.active in self.STEPS else 0
        step = self.STEPS[(index + offset) % len(self.STEPS)]
        # Focus left in the hidden step would switch the tabs back: move it first.
        tabs.query_one("ContentTabs").focus()
        tabs.active = step
        self.call_after_refresh(self.focus_step, step)

    def focus_step(self, step: str) -> None:
        """Focus the first field of a step (the tabs stay focused when it has none)."""
        if self.query_one("#wizard-tabs", TabbedContent).active != step:
            return  # another step was chosen meanwhile: focus there would pull the tabs back
        pane = self.query_one(f"#{step}", TabPane)
        shown = [w for w in pane.query("*") if w.focusable and w.display and w.visible]
        # A text field first (the search box, the model spec), else the first widget.
        for widget in [w for w in shown if isinstance(w, Input)] or shown[:1]:
            widget.focus()
            return

    @on(TabbedContent.TabActivated, "#wizard-tabs")
    def step_shown(self) -> None:
        self.make_variant_rows()

    # -- the preparation: what crosses steps ------------------------------------------------

    def start_prepare(self) -> None:
        """Prepare the state's spec in a worker (the answer carries its version)."""
        self.prepare_worker(self.state.version, self.state.spec(), self.state.kinds.strength)

    @work(thread=True, exclusive=True, group="wizard-prepare", exit_on_error=False)
    def prepare_worker(self, version: int, spec: SessionSpec, strength: int) -> None:
        try:
            preparation = prepare(spec, strength=strength)
        except KontestError as error:  # a readable line, no class name
            self.post_message(self.PrepareFailed(version, str(error)))
            return
        except Exception as error:  # an engine bug must not leave "preparing…" forever
            self.post_message(self.PrepareFailed(version, f"{type(error).__name__}: {error}"))
            return
        self.post_message(self.Prepared(version, preparation))

    @on(Prepared)
    def prepared(self, event: Prepared) -> None:
        self.start_if_asked(self.state.prepared(event.version, event.preparation))
        self.render_state()

    @on(PrepareFailed)
    def prepare_failed(self, event: PrepareFailed) -> None:
        self.state.prepare_failed(event.version, event.message)
        self.render_state()

    def changed(self, spec_changed: bool) -> None:
        """After a transition: prepare again when the spec changed, then render."""
        if spec_changed:
            self.start_prepare()
        self.render_state()

    def render_state(self) -> None:
        """Show the state: each step what concerns it, the Run button on or off."""
        state = self.state
        preparation = state.preparation
        self.graph_step.show_scope([entity.label for entity in state.entities], state.depth)
        if preparation is not None and self.shown_version != state.version:
            self.shown_version = state.version
            self.show_preparation(preparation)
        elif preparation is None:
            line = state.waiting() or ""
            if state.prepare_error:
                line = f"Preparing failed: {state.prepare_error}"
            self.graph_step.show_counts(line or "preparing…")
            self.kinds_step.show_counts("counting…" if not state.prepare_error else line)
        ready, reason = state.run_state()
        self.model_step.show_run_state(ready, reason)
        self.model_step.show_summary(describe_plan(state))

    def show_preparation(self, preparation: Preparation) -> None:
        """A new preparation: the graph, templates, browser, counts and what blocks."""
        state = self.state
        self.graph_step.show_preparation(preparation, 2 if state.entities else 1)
        self.show_kg_choice()
        self.templates_step.show_preparation(preparation, state.chosen_templates())
        self.show_preview(preparation.preview, preparation.blocked or "Nothing to preview.")
        self.kinds_step.show_preparation(preparation, state.kinds)
        if state.questions is not None:
            announce, self.announce_questions = self.announce_questions, False
            self.kinds_step.show_questions(state.questions, preparation, announce=announce)
        self.make_variant_rows()

    def show_kg_choice(self) -> None:
        """The KG selector names the graph loaded: a sample, or the file or build it came from."""
        kg = self.kg
        self.graph_step.show_kg_choice(
            self.state.source, kg.name if kg is not None else self.state.source
        )

    def show_preview(self, preview: RelationPreview | None, note: str = "") -> None:
        self.templates_step.show_preview(preview, note)
        self.variants_step.show_variants(preview, note)

    # -- the relation browsed (steps 2 and 3) -----------------------------------------------

    def start_preview(self, relation: Relation) -> None:
        """Build a relation's conversations and covering arrays (the Templates step's worker;
        the covering arrays only while the Variants step is shown)."""
        preparation = self.state.preparation
        if preparation is None:
            return
        tabs = self.query_one("#wizard-tabs", TabbedContent)
        self.templates_step.preview(
            self.state.version,
            preparation.spec,
            relation,
            self.state.kinds.strength,
            tabs.active == "step-variants",
        )

    def make_variant_rows(self) -> None:
        """The covering arrays of the relation browsed, once the Variants step is shown (they
        read WordNet: seconds and memory a session that asks no variants never spends)."""
        preview = self.state.preview
        tabs = self.query_one("#wizard-tabs", TabbedContent)
        if preview is not None and preview.variants is None and tabs.active == "step-variants":
            self.start_preview(preview.relation)

    @on(TemplatesStep.RelationHighlighted)
    def relation_highlighted(self, event: TemplatesStep.RelationHighlighted) -> None:
        preparation = self.state.preparation
        if preparation is None or preparation.problems:
            return
        if not 0 <= event.index < len(preparation.listed):
            return
        relation = preparation.listed[event.index]
        shown = self.state.preview
        if shown is not None and shown.relation == relation:
            self.make_variant_rows()
            return
        self.start_preview(relation)

    @on(TemplatesStep.RelationPreviewed)
    def relation_previewed(self, event: TemplatesStep.RelationPreviewed) -> None:
        if event.preview is None:
            if event.version == self.state.version:
                self.show_preview(None, event.note)
        elif self.state.previewed(event.version, event.preview):
            self.show_preview(event.preview)

    # -- step 1: graph --------------------------------------------------------------------

    def action_load_graph(self) -> None:
        """Load the KG chosen or typed (again, if it is the same: its file may have changed)."""
        source = self.graph_step.chosen_source(self.state.source)
        if not self.state.choose_kg(source):
            self.state.reload()
        self.changed(True)

    @on(GraphStep.LoadPressed)
    def load_pressed(self) -> None:
        self.action_load_graph()

    @on(GraphStep.SampleChosen)
    def sample_chosen(self, event: GraphStep.SampleChosen) -> None:
        self.changed(self.state.choose_kg(event.source))

    @on(GraphStep.DepthChanged)
    def depth_changed(self) -> None:
        self.changed(self.state.set_depth(self.graph_step.selected_depth()))

    @on(GraphStep.PerPathChanged)
    def per_path_changed(self, event: GraphStep.PerPathChanged) -> None:
        self.changed(self.state.set_per_path(event.per_path))

    @on(GraphStep.ScopeCleared)
    def clear_scope(self) -> None:
        self.changed(self.state.clear_scope())

    @on(GraphStep.EntityPicked)
    def entity_picked(self, event: GraphStep.EntityPicked) -> None:
        """The session is scoped to the entity, in the KG it was found in (said when that
        is another KG than the one loaded)."""
        match, source, loaded = event.match, event.source, self.state.source
        self.changed(self.state.add_entity(Entity(match.id, match.label, source)))
        if loaded and source != loaded:
            self.notify(
                f"{match.label} is in the {source_name(source)} KG: the session now uses "
                f"that KG instead of {source_name(loaded)}.",
                title="KG changed",
                severity="warning",
                markup=False,
            )

    @on(GraphStep.GraphBuilt)
    def graph_built(self, event: GraphStep.GraphBuilt) -> None:
        self.changed(self.state.choose_kg(event.source))

    # -- steps 2 to 4: templates, variants, test kinds --------------------------------------

    @on(TemplatesStep.TemplatesChosen)
    def templates_changed(self, event: TemplatesStep.TemplatesChosen) -> None:
        self.changed(self.state.set_templates(event.template_ids))

    @on(TemplatesStep.TemplateSetChosen)
    def template_set_changed(self, event: TemplatesStep.TemplateSetChosen) -> None:
        self.changed(self.state.set_template_set(event.name))

    @on(VariantsStep.SynonymsRequested)
    def open_synonyms(self) -> None:
        self.app.action_edit_synonyms()  # type: ignore[attr-defined]

    @on(VariantsStep.StrengthChanged)
    def strength_changed(self, event: VariantsStep.StrengthChanged) -> None:
        self.kinds_changed()

    def on_screen_resume(self) -> None:
        """Back from the synonym editor: pins and bans change the variants."""
        if self.state.preparation is not None:
            self.state.reload()
            self.changed(True)

    @on(KindsStep.KindsChanged)
    def kinds_changed(self) -> None:
        step = self.kinds_step
        choices = KindChoices(
            kinds=tuple(step.ticked_kinds()),
            strength=self.variants_step.selected_strength(),
            values=step.option_values(),
        )
        self.kinds_step.show_kind_options(choices.kinds, self.state.questions is not None)
        self.changed(self.state.set_kinds(choices))

    @on(KindsStep.QuestionsRequested)
    def load_questions(self, event: KindsStep.QuestionsRequested) -> None:
        """A questions file in the plan (read by prepare; blank: taken out)."""
        changed = self.state.set_questions(event.path or None)
        if not changed and event.path:
            self.state.reload()  # read it again: the file may have changed
            changed = True
        self.announce_questions = bool(event.path)
        if not event.path and changed:
            self.notify("Annotated questions taken out of the plan.", markup=False)
        status = f"Reading {event.path}…" if event.path else ""
        self.kinds_step.show_questions_status(status)
        self.kinds_step.show_kind_options(self.state.kinds.kinds, self.state.questions is not None)
        self.changed(changed)

    # -- step 5: model and run ------------------------------------------------------------

    def start_model_check(self) -> None:
        """Check the state's model (the Model step's worker; the answer carries its version)."""
        self.model_step.check(self.state.model_version, self.state.model)

    @on(ModelStep.ModelChecked)
    def model_checked(self, event: ModelStep.ModelChecked) -> None:
        self.start_if_asked(self.state.checked_model(event.version, event.problem, event.line))
        self.render_state()

    @on(ModelStep.ModelTyped)
    def model_typed(self, event: ModelStep.ModelTyped) -> None:
        if self.state.set_model(event.spec):
            self.start_model_check()
            self.render_state()

    @on(ModelStep.CheckRequested)
    def action_check_model(self) -> None:
        self.state.set_model(self.model_step.model_spec())
        self.state.model_version += 1  # a check asked for: ask again
        self.state.model_checked = False
        self.start_model_check()
        self.render_state()

    @on(ModelStep.RunRequested)
    def action_run_session(self) -> None:
        decision, why = self.state.request_run()
        if decision == "start":
            cast("KontestApp", self.app).start_run(self.state.ready_spec())
        elif decision == "armed":
            self.notify(why, markup=False)
        else:
            self.notify(f"Run is off: {why}", severity="warning", markup=False)
        self.render_state()

    def start_if_asked(self, spec: SessionSpec | None) -> None:
        """An armed run may start now: hand the prepared spec to the live run."""
        if spec is not None:
            cast("KontestApp", self.app).start_run(spec)

    def variant_source(self) -> tuple[KnowledgeGraph, Relation, Template, int] | None:
        """(KG, relation, template, strength) of the first question the Variants step shows
        (the synonym editor previews it)."""
        preparation = self.state.preparation
        preview = self.state.preview
        if preparation is None or preparation.kg is None or preview is None:
            return None
        template_set = preparation.spec.template_set
        if template_set is None or isinstance(template_set, str):
            return None
        chosen = self.state.chosen_templates()
        if not chosen:
            return None
        return (
            preparation.kg,
            preview.relation,
            template_set.get(chosen[0]),
            self.state.kinds.strength,
        )


def describe_plan(state: WizardState) -> str:
    """`KG places, depth all: 265 relations; templates t1, t2; 1,590 model calls.`"""
    preparation = state.preparation
    if preparation is None:
        return ""
    templates = ", ".join(state.chosen_templates()) or "-"
    # A KG that did not load has no name in the spec: its source then (never "None").
    kg_name = preparation.spec.kg_name or source_name(state.source)
    loaded = "" if preparation.kg is not None else " (not loaded)"
    summary = (
        f"KG {kg_name}{loaded}, depth {state.depth or 'all'}: "
        f"{preparation.relations:,} relations; templates {templates}; "
        f"{preparation.calls:,} model calls"
    )
    if len(preparation.counts) > 1:
        summary += " (" + ", ".join(f"{c.kind} {c.calls:,}" for c in preparation.counts) + ")"
    return summary + "."


def source_name(source: str) -> str:
    """A KG source in a few words: a sample's name, a file's name without its folder."""
    return Path(source).stem if ("/" in source or source.endswith((".json", ".csv"))) else source
