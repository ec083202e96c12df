"""The new-session wizard: graph, templates, variants, test kinds, model, then Run.

Each step is a tab and a widget of its own (tui/widgets/wizard/) that posts what the user
did; the screen turns it into a transition of its state (tui.wizard_state.WizardState, plain
Python), asks the engine in workers (`run.api.prepare` for the graph, counts, previews and
what blocks a run; `run.api.check_model`; `run.api.preview_relation` for the relation
browsed) and renders the state. It never chains engine steps: Run hands the prepared spec
to the live run, which stores and asks it through `run.api.start_session`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Input, TabbedContent, TabPane

from kontest_tui.domain.answers import clean_text
from kontest_tui.errors import KontestError
from kontest_tui.run.api import (
    LOGIC_RULES,
    QUESTION_TYPES,
    KindChoice,
    Preparation,
    Problem,
    RelationPreview,
    SessionSpec,
    build_wikidata_source,
    check_model,
    discover_server_models,
    list_server_models,
    list_test_kinds,
    loaded_first,
    model_presets,
    prepare,
    preview_relation,
    sample_sources,
    server_title,
    source_of_match,
)
from kontest_tui.tui.widgets.key_footer import KeyFooter
from kontest_tui.tui.widgets.wizard.graph import GraphStep
from kontest_tui.tui.widgets.wizard.kinds import KindsStep
from kontest_tui.tui.widgets.wizard.model import ModelStep
from kontest_tui.tui.widgets.wizard.templates import TemplatesStep, describe_check
from kontest_tui.tui.widgets.wizard.variants import VariantsStep
from kontest_tui.tui.wizard_state import Entity, KindChoices, WizardState
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.domain.records import Relation
    from kontest_tui.generate.templates import Template
    from kontest_tui.kg.graph import KnowledgeGraph
    from kontest_tui.kg.search import EntityMatch
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

    # -- what the workers post -------------------------------------------------------------

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

    class ModelChecked(Message):
        """The model of `version` was checked: `problem` when it cannot run."""

        def __init__(self, version: int, problem: Problem | None, line: str) -> None:
            super().__init__()
            self.version = version
            self.problem = problem
            self.line = line

    class RelationPreviewed(Message):
        """The conversations of a browsed relation were built (for `version`)."""

        def __init__(self, version: int, preview: RelationPreview | None, note: str) -> None:
            super().__init__()
            self.version = version
            self.preview = preview
            self.note = note

    class ChoicesListed(Message):
        """The sample KGs, the model presets and the test kinds were listed."""

        def __init__(self, samples: list[str], presets: list[str], kinds: list[KindChoice]) -> None:
            super().__init__()
            self.samples = samples
            self.presets = presets
            self.kinds = kinds

    class EntitiesFound(Message):
        """Entities matching the search text (`note` says why there are none, if it can)."""

        def __init__(self, found: list[EntityMatch], note: str) -> None:
            super().__init__()
            self.found = found
            self.note = note

    class BuildProgressed(Message):
        """A step of a Wikidata build (kg.wikidata's progress record)."""

        def __init__(self, step: object) -> None:
            super().__init__()
            self.step = step

    class GraphBuilt(Message):
        """A Wikidata build ended: the source of the graph built, or why it failed."""

        def __init__(self, source: str | None, error: str = "", title: str = "") -> None:
            super().__init__()
            self.source = source
            self.error = error
            self.title = title

    class OllamaModelsListed(Message):
        """The models an Ollama server offers (`error` when they could not be listed)."""

        def __init__(
            self, specs: list[str], error: str = "", title: str = "", *, quiet: bool = False
        ) -> None:
            super().__init__()
            self.specs = specs
            self.error = error
            self.title = title
            self.quiet = quiet  # found when the wizard opened: listed without a word

    def __init__(
        self, kg: str | None = None, model: str | None = None, start_step: str = "step-graph"
    ) -> None:
        super().__init__()
        self.state = WizardState(kg or "places", model or "sim")
        self.start_step = start_step
        self.samples: list[str] = []
        self.presets: list[str] = []
        self.kind_choices: list[KindChoice] = []
        self.found_entities: list[EntityMatch] = []
        self.seeds: list[tuple[str, str]] = []  # Wikidata (QID, label) to build a KG from
        self.shown_version = -1  # the preparation the steps show
        self.announce_questions = False  # say what the next preparation read of the file
        self.previewing = ""  # the relation whose preview was asked for last

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=self.start_step, id="wizard-tabs"):
            yield GraphStep("1 Graph", id="step-graph")
            yield TemplatesStep("2 Templates", id="step-templates")
            yield VariantsStep("3 Variants", id="step-variants")
            yield KindsStep("4 Kinds", QUESTION_TYPES, LOGIC_RULES, id="step-kinds")
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
        self.list_choices()
        self.start_prepare()
        self.start_model_check()
        self.render_state()

    def worker_failed(self, group: str, error: BaseException) -> None:
        """Any other failure (already notified): the step says so instead of waiting."""
        if group == "wizard-prepare":
            self.state.prepare_failed(self.state.version, str(error) or type(error).__name__)
            self.render_state()
        elif group == "wizard-search":
            self.graph_step.show_suggestions([], f"Search failed: {error}")
        elif group == "wizard-model":
            self.state.checked_model(self.state.model_version, Problem("model", str(error)))
            self.render_state()
        elif group == "wizard-preview":
            self.show_preview(None, f"Preview failed: {error}")

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

    # -- the engine, in workers ------------------------------------------------------------

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

    def start_model_check(self) -> None:
        self.model_step.show_status("Checking…")
        self.model_check_worker(self.state.model_version, self.state.model)

    @work(thread=True, exclusive=True, group="wizard-model", exit_on_error=False)
    def model_check_worker(self, version: int, model: str) -> None:
        problem, line = check_model(SessionSpec(None, model=model or "sim"))
        self.post_message(self.ModelChecked(version, problem, line))

    @on(ModelChecked)
    def model_checked(self, event: ModelChecked) -> None:
        start = self.state.checked_model(event.version, event.problem, event.line)
        if event.version == self.state.model_version:
            if event.problem is not None:
                self.model_step.show_status(f"✗ {event.problem.message}")
            else:
                self.model_step.show_status(f"✓ {clean_text(event.line)}")
        self.start_if_asked(start)
        self.render_state()

    def start_if_asked(self, spec: SessionSpec | None) -> None:
        """An armed run may start now: hand the prepared spec to the live run."""
        if spec is not None:
            cast("KontestApp", self.app).start_run(spec)

    def start_preview(self, relation: Relation) -> None:
        """Build a relation's conversations and covering arrays in a worker (the answer for
        another relation, asked before, is dropped)."""
        preparation = self.state.preparation
        if preparation is None:
            return
        self.previewing = relation.id
        tabs = self.query_one("#wizard-tabs", TabbedContent)
        self.preview_worker(
            self.state.version,
            preparation.spec,
            relation,
            self.state.kinds.strength,
            tabs.active == "step-variants",
        )

    @work(thread=True, exclusive=True, group="wizard-preview", exit_on_error=False)
    def preview_worker(
        self, version: int, spec: SessionSpec, relation: Relation, strength: int, rows: bool
    ) -> None:
        try:
            preview = preview_relation(spec, relation, strength=strength, variant_rows=rows)
        except KontestError as error:
            self.post_message(self.RelationPreviewed(version, None, str(error)))
            return
        self.post_message(self.RelationPreviewed(version, preview, ""))

    @on(RelationPreviewed)
    def relation_previewed(self, event: RelationPreviewed) -> None:
        if event.preview is not None and event.preview.relation.id != self.previewing:
            return  # another relation was browsed meanwhile
        if event.preview is None:
            if event.version == self.state.version:
                self.show_preview(None, event.note)
        elif self.state.previewed(event.version, event.preview):
            self.show_preview(event.preview)

    # -- rendering -------------------------------------------------------------------------

    def render_state(self) -> None:
        """Show the state: each step what concerns it, the Run button on or off."""
        state = self.state
        preparation = state.preparation
        self.show_scope()
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
        self.model_step.show_summary(self.describe_plan())

    def show_preparation(self, preparation: Preparation) -> None:
        """A new preparation: the graph, templates, browser, counts and what blocks."""
        kg = preparation.kg
        graph_problems = [p.message for p in preparation.problems if p.step == "graph"]
        summary = preparation.summary
        if summary is not None and kg is not None:
            line = (
                f"{kg.name} ({kg.domain}): {summary.nodes:,} nodes, {summary.edges:,} edges, "
                f"{summary.paths:,} paths, {preparation.relations:,} relations"
            )
        elif kg is not None:
            line = f"{kg.name} ({kg.domain}): {len(kg.nodes):,} nodes, {len(kg.edges):,} edges"
        else:
            line = ""
        self.graph_step.show_counts(" · ".join([*([line] if line else []), *graph_problems]))
        self.show_kg_choice()
        if kg is not None:
            self.graph_step.show_graph(kg, preparation.paths, 2 if self.state.entities else 1)
        template_set = preparation.spec.template_set
        if not isinstance(template_set, str) and template_set is not None:
            self.templates_step.show_templates(template_set, self.state.chosen_templates())
        self.templates_step.show_relations(preparation.listed_names, preparation.relations)
        self.templates_step.show_check(describe_check(preparation.questions))
        blocked = preparation.blocked
        self.show_preview(preparation.preview, blocked or "Nothing to preview.")
        self.show_kind_counts(preparation)
        self.show_questions(preparation)
        self.make_variant_rows()

    def make_variant_rows(self) -> None:
        """The covering arrays of the relation browsed, once the Variants step is shown (they
        read WordNet: seconds and memory a session that asks no variants never spends)."""
        preview = self.state.preview
        tabs = self.query_one("#wizard-tabs", TabbedContent)
        if preview is not None and preview.variants is None and tabs.active == "step-variants":
            self.start_preview(preview.relation)

    @on(TabbedContent.TabActivated, "#wizard-tabs")
    def step_shown(self) -> None:
        self.make_variant_rows()

    def show_questions(self, preparation: Preparation, shown: int = 5) -> None:
        """`FILE: N questions, M lines skipped` and the first skipped lines, or why the
        file cannot be read (also a notification)."""
        path = self.state.questions
        if path is None:
            return
        announce, self.announce_questions = self.announce_questions, False
        problems = [p for p in preparation.problems if p.step == "kinds" and p.error is not None]
        if problems:
            message = problems[0].message
            self.kinds_step.show_questions_status(f"Not loaded: {message}")
            if announce:
                self.notify(message, title="Annotated questions", severity="error", markup=False)
            return
        questions = len({c.relation_id for c in preparation.spec.extra_conversations})
        skipped = list(preparation.spec.problems)
        lines = [
            f"{path}: {questions} questions, {len(skipped)} "
            f"line{'' if len(skipped) == 1 else 's'} skipped"
        ]
        lines += [f"  {problem}" for problem in skipped[:shown]]
        if len(skipped) > shown:
            lines.append(f"  … {len(skipped) - shown} more")
        summary = "\n".join(lines)
        self.kinds_step.show_questions_status(summary)
        if announce:
            self.notify(
                summary,
                title="Annotated questions",
                severity="warning" if skipped else "information",
                markup=False,
            )

    def show_preview(self, preview: RelationPreview | None, note: str = "") -> None:
        self.templates_step.show_preview(preview, note)
        self.variants_step.show_variants(preview, note)

    def show_kind_counts(self, preparation: Preparation) -> None:
        text = Text()
        for count in preparation.counts:
            text.append(f"{count.kind:<10}", style="bold")
            text.append(f" {count.conversations:>6} conversations {count.calls:>6} model calls")
            if count.kind in ("variant", "annotation"):
                kinds = self.state.kinds
                limit = (
                    f", at most {kinds.variant_limit} per question" if kinds.variant_limit else ""
                )
                text.append(f"  (strength t={kinds.strength}, step 3{limit})", style="dim")
            text.append("\n")
        if len(preparation.counts) > 1:
            text.append(f"{'total':<10}", style="bold")
            text.append(
                f" {sum(c.conversations for c in preparation.counts):>6} conversations "
                f"{preparation.calls:>6} model calls"
            )
        problems = [p.message for p in preparation.problems if p.step == "kinds"]
        problems += [p.message for p in self.state.kinds.problems()]
        for message in problems:
            text.append(f"\n{message}", style="italic yellow")
        self.kinds_step.show_counts(text)

    def show_scope(self) -> None:
        """`Scope: Ireland, Kinawley (depth 2 below each)` or the whole KG."""
        labels = [entity.label for entity in self.state.entities]
        self.graph_step.show_scope(labels, self.state.depth)

    def show_kg_choice(self) -> None:
        """The KG selector names the graph loaded: a sample, or the file or build it came from."""
        kg = self.kg
        shown = kg.name if kg is not None else self.state.source
        self.graph_step.show_kg_choice(self.samples, self.state.source, shown)

    def describe_plan(self) -> str:
        """`KG places, depth all: 265 relations; templates t1, t2; 1,590 model calls.`"""
        state = self.state
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

    def changed(self, spec_changed: bool) -> None:
        """After a transition: prepare again when the spec changed, then render."""
        if spec_changed:
            self.start_prepare()
        self.render_state()

    # -- step 1: graph --------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="wizard-choices", exit_on_error=False)
    def list_choices(self) -> None:
        try:
            samples = sample_sources()
        except KontestError:
            samples = []
        presets = model_presets()
        self.post_message(self.ChoicesListed(samples, presets, list_test_kinds()))
        found = discover_server_models()  # the local Ollama's models, when one answers
        if found:
            self.post_message(self.OllamaModelsListed(found, quiet=True))

    @on(ChoicesListed)
    def choices_listed(self, event: ChoicesListed) -> None:
        self.samples = event.samples
        self.show_kg_choice()
        self.presets = event.presets
        self.model_step.show_presets(self.presets)
        self.kind_choices = event.kinds
        self.kinds_step.show_kind_choices(self.kind_choices, self.state.kinds.kinds)
        self.kinds_step.show_kind_options(self.state.kinds.kinds, self.state.questions is not None)

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

    @on(GraphStep.SearchTyped)
    def search_typed(self, event: GraphStep.SearchTyped) -> None:
        self.search_worker(event.text, event.online, self.state.source)

    @work(thread=True, exclusive=True, group="wizard-search", exit_on_error=False)
    def search_worker(self, text: str, online: bool, source: str | None = None) -> None:
        from kontest_tui.kg.search import search_entities  # (httpx: only when searching)

        try:
            # The loaded KG's matches first, then the best of the others: otherwise Down
            # Enter on "ireland" picks another sample's Ireland and switches the KG.
            found = loaded_first(search_entities(text, online=online, limit=20), source)[:8]
        except KontestError as error:
            self.post_message(self.EntitiesFound([], str(error)))
            return
        note = ""
        if online and found and not any(match.source == "wikidata" for match in found):
            # search_entities falls back to the samples and cached graphs when Wikidata
            # cannot be reached: say so rather than show them as Wikidata's answer.
            note = (
                "Wikidata could not be reached (offline?): these matches are from the "
                "samples and cached graphs."
            )
        self.post_message(self.EntitiesFound(list(found), note))

    @on(EntitiesFound)
    def entities_found(self, event: EntitiesFound) -> None:
        self.found_entities = list(event.found)
        self.graph_step.show_suggestions(event.found, event.note)

    @on(GraphStep.EntityPicked)
    def entity_chosen(self, event: GraphStep.EntityPicked) -> None:
        """An entity of a sample or built KG scopes the session (loading that KG); a
        Wikidata entity becomes a seed to build a KG from."""
        if not 0 <= event.index < len(self.found_entities):
            return
        match = self.found_entities[event.index]
        source = source_of_match(match, self.state.source)
        if source is not None:
            loaded = self.state.source
            self.graph_step.clear_search()
            self.changed(self.state.add_entity(Entity(match.id, match.label, source)))
            if loaded and source != loaded:
                self.notify(
                    f"{match.label} is in the {source_name(source)} KG: the session now uses "
                    f"that KG instead of {source_name(loaded)}.",
                    title="KG changed",
                    severity="warning",
                    markup=False,
                )
            return
        if match.id not in [qid for qid, _ in self.seeds]:
            self.seeds.append((match.id, match.label))
        self.graph_step.show_counts(
            "Wikidata seeds: " + ", ".join(label for _, label in self.seeds) + " · press Build"
        )

    @on(GraphStep.BuildPressed)
    def build_pressed(self) -> None:
        if not self.seeds:
            self.notify(
                "Tick Wikidata, search and choose entities first", severity="warning", markup=False
            )
            return
        kg = self.kg
        domain = kg.domain if kg is not None else "places"
        self.graph_step.start_build_progress()
        self.build_worker(domain, [qid for qid, _ in self.seeds], self.state.depth or 2)

    @work(thread=True, exclusive=True, group="wizard-build", exit_on_error=False)
    def build_worker(self, domain: str, seeds: list[str], depth: int) -> None:
        def report(step: object) -> None:
            self.post_message(self.BuildProgressed(step))

        try:
            source = build_wikidata_source(domain, seeds, depth, progress=report)
        except KontestError as error:
            self.post_message(self.GraphBuilt(None, str(error), error.title))
            return
        self.post_message(self.GraphBuilt(source))

    @on(BuildProgressed)
    def build_progressed(self, event: BuildProgressed) -> None:
        self.graph_step.show_build_progress(event.step)

    @on(GraphBuilt)
    def graph_built(self, event: GraphBuilt) -> None:
        self.graph_step.hide_build_progress()
        if event.source is None:
            self.notify(event.error, title=event.title, severity="error", markup=False)
            self.graph_step.show_counts(f"{event.title}: {event.error}")
            return
        self.seeds = []
        self.changed(self.state.choose_kg(event.source))

    # -- steps 2 and 3: templates, the relation browsed, variants ---------------------------

    @on(TemplatesStep.TemplatesChosen)
    def templates_changed(self, event: TemplatesStep.TemplatesChosen) -> None:
        self.changed(self.state.set_templates(event.template_ids))

    @on(TemplatesStep.TemplateSetChosen)
    def template_set_changed(self, event: TemplatesStep.TemplateSetChosen) -> None:
        self.changed(self.state.set_template_set(event.name))

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

    # -- step 4: test kinds ---------------------------------------------------------------

    @on(KindsStep.KindsChanged)
    def kinds_changed(self) -> None:
        step = self.kinds_step
        choices = KindChoices(
            kinds=tuple(step.ticked_kinds(self.kind_choices))
            if self.kind_choices
            else ("kontest",),
            strength=self.variants_step.selected_strength(),
            postfix=step.postfix(),
            variant_limit=step.variant_limit(),
            question_types=step.ticked_names("qtype", QUESTION_TYPES),
            rules=step.ticked_names("rule", LOGIC_RULES),
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

    @on(ModelStep.OllamaRequested)
    def find_ollama(self) -> None:
        """List the models of the server typed in the model field (its @URL), else the
        default local Ollama; each keeps that URL."""
        self.ollama_worker(self.model_step.model_spec())

    @work(thread=True, exclusive=True, group="wizard-ollama", exit_on_error=False)
    def ollama_worker(self, typed: str) -> None:
        title = server_title(typed)
        try:
            specs = list_server_models(typed)
        except KontestError as error:
            self.post_message(self.OllamaModelsListed([], str(error), error.title))
            return
        except Exception as error:
            self.post_message(self.OllamaModelsListed([], f"cannot list {title} models: {error}"))
            return
        self.post_message(self.OllamaModelsListed(specs, title=title))

    @on(OllamaModelsListed)
    def ollama_models_listed(self, event: OllamaModelsListed) -> None:
        if event.error:
            self.notify(event.error, title=event.title, severity="warning", markup=False)
            return
        self.presets += [spec for spec in event.specs if spec not in self.presets]
        self.model_step.show_presets(self.presets)
        if not event.quiet:
            self.notify(f"{len(event.specs)} {event.title} model(s) found", markup=False)

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


def source_name(source: str) -> str:
    """A KG source in a few words: a sample's name, a file's name without its folder."""
    return Path(source).stem if ("/" in source or source.endswith((".json", ".csv"))) else source
