"""The new-session wizard: graph, templates, variants, test kinds, model, then Run.

Each step is a tab and a widget of its own (tui/widgets/wizard/) that posts what the user
did as messages; this screen holds the choices, runs every engine call (loading,
relations, conversations, model checks) in a worker whose result comes back as a message,
and hands the steps what to show. The test kinds step lists the engine's registry
(kinds.registry.KINDS): KONTEST on, the others opt-in, each with the number of
conversations it adds; what is built is kept (tui.kind_cache) for the run.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, TabbedContent, TabPane

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import TestKind
from kontest_tui.errors import KontestError
from kontest_tui.generate.conversations import build_conversations
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.summary import describe_graph
from kontest_tui.generate.templates import TemplateSet, load_template_set
from kontest_tui.generate.variants import VariantPreview, preview_variants
from kontest_tui.kg.cache import built_kgs_dir
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import list_samples, load_graph
from kontest_tui.kg.paths import find_paths
from kontest_tui.kg.scope import scope_graph
from kontest_tui.kg.search import search_entities
from kontest_tui.kg.wikidata import build_graph
from kontest_tui.kinds.registry import KindOptions, build_kind_for_relations
from kontest_tui.models.sim import list_profiles, load_profile
from kontest_tui.models.specs import list_models, open_model, parse_model_spec
from kontest_tui.probes.templates import LOGIC_RULES, QUESTION_TYPES
from kontest_tui.tui.kind_cache import Key, KindCache, KindChoices
from kontest_tui.tui.kind_choices import (
    AnnotatedQuestions,
    KindChoice,
    list_test_kinds,
    load_annotated_questions,
)
from kontest_tui.tui.plan import SessionPlan
from kontest_tui.tui.widgets.wizard.graph import GraphStep
from kontest_tui.tui.widgets.wizard.kinds import KindsStep
from kontest_tui.tui.widgets.wizard.model import ModelStep
from kontest_tui.tui.widgets.wizard.templates import TemplatesStep
from kontest_tui.tui.widgets.wizard.variants import VariantsStep
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.domain.records import Conversation, Relation
    from kontest_tui.generate.templates import Template
    from kontest_tui.tui.app import KontestApp


def check_model_spec(spec: str) -> None:
    """ModelSpecError for a spec that does not parse or names an unknown sim profile (no I/O
    beyond the profile list), so a typo stops the run before the live screen."""
    parsed = parse_model_spec(spec)
    if parsed.kind == "sim":
        load_profile(parsed.name)  # a name or a .toml path; an unknown one says so


PREVIEW_ROWS = 40


class WizardScreen(WorkerFailures, Screen[None]):
    """Choose a KG, depth, templates and model; preview what will be asked; run."""

    BINDINGS = [
        Binding(
            "ctrl+r",
            "run_session",
            "Run",
            id="run_session",
            tooltip="Build the conversations and start the run",
        ),
        Binding(
            "ctrl+l",
            "load_graph",
            "Load KG",
            id="load_graph",
            tooltip="Load the chosen KG and preview it",
        ),
        Binding(
            "ctrl+k",
            "check_model",
            "Check model",
            id="check_model",
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

    class GraphLoaded(Message):
        """A KG and its relations were loaded for the preview."""

        def __init__(
            self,
            kg: KnowledgeGraph,
            relations: list[Relation],
            paths: list[tuple[str, ...]],
            info: Any,
            source: str | None = None,
        ) -> None:
            super().__init__()
            self.kg = kg
            self.relations = relations
            self.paths = paths
            self.info = info
            self.source = source  # what to load it again from, when it is new (a build)

    class GraphFailed(Message):
        """The KG could not be loaded or built."""

        def __init__(self, error: KontestError) -> None:
            super().__init__()
            self.error = error

    class TemplatesLoaded(Message):
        """The KG domain's template set was loaded."""

        def __init__(self, template_set: TemplateSet, template_ids: list[str]) -> None:
            super().__init__()
            self.template_set = template_set
            self.template_ids = template_ids

    class TemplatesFailed(Message):
        """The KG domain has no readable template set."""

        def __init__(self, error: KontestError) -> None:
            super().__init__()
            self.error = error

    class ChoicesListed(Message):
        """The sample KGs and the simulated-model presets were listed."""

        def __init__(self, samples: list[str], presets: list[str]) -> None:
            super().__init__()
            self.samples = samples
            self.presets = presets

    class EntitiesFound(Message):
        """Entities matching the search text (`note` says why there are none, if it can)."""

        def __init__(self, found: list[Any], note: str) -> None:
            super().__init__()
            self.found = found
            self.note = note

    class BuildProgressed(Message):
        """A step of a Wikidata build (kg.wikidata's progress record)."""

        def __init__(self, step: Any) -> None:
            super().__init__()
            self.step = step

    class BuildEnded(Message):
        """A Wikidata build ended (built, failed or stopped)."""

    class PreviewBuilt(Message):
        """The filled questions of the first relations (`note` when there are none)."""

        def __init__(self, rows: list[tuple[str, str, str]], note: str) -> None:
            super().__init__()
            self.rows = rows
            self.note = note

    class VariantsPreviewed(Message):
        """The covering array of the previewed question (None with a note when it failed)."""

        def __init__(self, preview: VariantPreview | None, note: str) -> None:
            super().__init__()
            self.preview = preview
            self.note = note

    class KindBuilt(Message):
        """One test kind's conversations were built for the current choices."""

        def __init__(self, key: Key, conversations: list[Conversation] | None, error: str) -> None:
            super().__init__()
            self.key = key
            self.conversations = conversations
            self.error = error

    class QuestionsLoaded(Message):
        """An annotated-questions file was read (loaded is None when it could not be)."""

        def __init__(
            self,
            key: Key,
            loaded: AnnotatedQuestions | None,
            error: str,
            announce: bool,
        ) -> None:
            super().__init__()
            self.key = key
            self.loaded = loaded
            self.error = error
            self.announce = announce  # a Load pressed (say what was read), not a rebuild

    class OllamaModelsListed(Message):
        """The models an Ollama server offers (`error` when they could not be listed)."""

        def __init__(self, specs: list[str], error: str = "", title: str = "") -> None:
            super().__init__()
            self.specs = specs
            self.error = error
            self.title = title

    class PlanBuilt(Message):
        """Conversations were built: the session is ready to run."""

        def __init__(self, plan: SessionPlan) -> None:
            super().__init__()
            self.plan = plan

    def __init__(
        self, kg: str | None = None, model: str | None = None, start_step: str = "step-graph"
    ) -> None:
        super().__init__()
        self.kg_source = kg or "places"
        self.initial_model = model or "sim"
        self.start_step = start_step
        self.kg: KnowledgeGraph | None = None
        self.relations: list[Relation] = []
        self.template_set: TemplateSet | None = None
        self.template_ids: list[str] = []
        self.auto_run = False
        self.found_entities: list[Any] = []
        self.seeds: list[str] = []  # Wikidata QIDs chosen to build a KG from
        self.seed_labels: list[str] = []
        self.scope: list[str] = []  # ids of the entities the session is scoped to
        self.samples: list[str] = []  # the bundled sample KGs (the KG selector's choices)
        self.presets: list[str] = []  # the model presets offered (sim profiles, Ollama's)
        self.per_path = False
        self.kind_choices: list[KindChoice] = []
        self.kinds: list[str] = ["kontest"]  # the test kinds ticked, registry order
        # each kind's conversations by what they depend on: built for the counts, reused by Run
        self.kind_cache = KindCache()
        self.question_types = tuple(QUESTION_TYPES)
        self.logic_rules = tuple(LOGIC_RULES)
        self.questions_path: str | None = None  # the annotated-questions file loaded

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=self.start_step, id="wizard-tabs"):
            yield GraphStep("1 Graph", id="step-graph")
            yield TemplatesStep("2 Templates", id="step-templates")
            yield VariantsStep("3 Variants", id="step-variants")
            yield KindsStep("4 Kinds", self.question_types, self.logic_rules, id="step-kinds")
            yield ModelStep("5 Model & run", self.initial_model, id="step-model")
        yield Footer()

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

    def on_mount(self) -> None:
        if self.start_step == "step-graph":
            self.graph_step.focus_search()  # the search field first
        self.show_kind_choices()
        self.load_choices()
        self.load_graph_worker(self.kg_source, None)

    def worker_failed(self, group: str, error: BaseException) -> None:
        """Any other failure (already notified): the step says so instead of waiting."""
        if group == "wizard-graph":
            self.graph_step.hide_build_progress()
            self.show_graph_problem(f"Loading failed: {error}")
        elif group == "wizard-preview":
            self.show_preview([], f"Preview failed: {error}")
        elif group == "wizard-search":
            self.graph_step.show_suggestions([], f"Search failed: {error}")
        elif group == "wizard-model":
            self.model_step.show_status(f"✗ {error}")
        elif group == "wizard-choices":
            self.show_choices([], ["sim"])

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

    # -- step 1: graph --------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="wizard-choices", exit_on_error=False)
    def load_choices(self) -> None:
        try:
            samples = list_samples()
        except KontestError:
            samples = []
        presets = [
            f"sim:{name}" if name != "default" else "sim"
            for name in (list_profiles() or ["default"])
        ]
        self.post_message(self.ChoicesListed(samples, presets))

    @on(ChoicesListed)
    def choices_listed(self, event: ChoicesListed) -> None:
        self.show_choices(event.samples, event.presets)

    def show_choices(self, samples: list[str], presets: list[str]) -> None:
        self.samples = list(samples)
        self.show_kg_choice()
        self.presets = list(presets)
        self.model_step.show_presets(self.presets)

    def show_kg_choice(self) -> None:
        """The KG selector names the graph loaded: a sample, or the file or build it came from."""
        shown = self.kg.name if self.kg is not None else self.kg_source
        self.graph_step.show_kg_choice(self.samples, self.kg_source, shown)

    def show_scope(self) -> None:
        """`Scope: Ireland, Kinawley (depth 2 below each)` or the whole KG."""
        kg = self.kg
        labels = [kg.label(node_id) for node_id in self.scope] if kg is not None else []
        self.graph_step.show_scope(labels, self.selected_depth())

    def selected_depth(self) -> int | None:
        return self.graph_step.selected_depth()

    def action_load_graph(self) -> None:
        source = self.graph_step.chosen_source(self.kg_source)
        if source != self.kg_source:
            self.scope = []
        self.kg_source = source
        self.load_graph_worker(source, self.selected_depth())

    @on(GraphStep.LoadPressed)
    def load_pressed(self) -> None:
        self.action_load_graph()

    @on(GraphStep.SampleChosen)
    def sample_chosen(self, event: GraphStep.SampleChosen) -> None:
        if event.source != self.kg_source:
            self.kg_source = event.source
            self.scope = []
            self.load_graph_worker(event.source, self.selected_depth())

    @on(GraphStep.DepthChanged)
    def depth_changed(self) -> None:
        if self.kg is not None:
            self.load_graph_worker(self.kg_source, self.selected_depth())

    @on(GraphStep.PerPathChanged)
    def per_path_changed(self, event: GraphStep.PerPathChanged) -> None:
        self.per_path = event.per_path
        self.load_graph_worker(self.kg_source, self.selected_depth())

    @on(GraphStep.ScopeCleared)
    def clear_scope(self) -> None:
        self.scope = []
        self.load_graph_worker(self.kg_source, self.selected_depth())

    def load_graph_worker(self, source: str, depth: int | None) -> None:
        """Load `source`, scoped to the chosen entities, and its relations (per path when
        ticked) in a worker."""
        self.graph_worker(source, depth, self.per_path, list(self.scope))

    @work(thread=True, exclusive=True, group="wizard-graph", exit_on_error=False)
    def graph_worker(
        self, source: str, depth: int | None, per_path: bool, scope: list[str]
    ) -> None:
        try:
            kg = load_graph(source)
            if scope:  # the depth is counted from each chosen entity (kg.scope)
                kg, depth = scope_graph(kg, scope, depth), None
            relations = extract_relations(kg, depth=depth, per_path=per_path)
            paths = find_paths(kg, depth=depth)
        except KontestError as error:
            self.post_message(self.GraphFailed(error))
            return
        try:
            info = describe_graph(kg, depth=depth)
        except KontestError:
            info = None
        self.post_message(self.GraphLoaded(kg, relations, paths, info))
        try:
            template_set = load_template_set(kg.domain or source)
            self.post_message(self.TemplatesLoaded(template_set, list(template_set.ids)))
        except KontestError as error:
            self.post_message(self.TemplatesFailed(error))

    @on(GraphFailed)
    def graph_failed(self, event: GraphFailed) -> None:
        error = event.error
        self.show_graph_problem(f"{error.title}: {error}")
        self.notify(str(error), title=error.title, severity="error", markup=False)

    def show_graph_problem(self, line: str) -> None:
        self.auto_run = False  # a run asked while loading does not start on a later load
        self.graph_step.show_counts(line)

    @on(TemplatesFailed)
    def templates_failed(self, event: TemplatesFailed) -> None:
        error = event.error
        self.notify(str(error), title=error.title, severity="warning", markup=False)

    @on(GraphLoaded)
    def graph_loaded(self, event: GraphLoaded) -> None:
        if event.source is not None:
            self.kg_source = event.source
        self.kg = kg = event.kg
        self.relations = event.relations
        self.kind_cache.new_graph()
        self.graph_step.show_counts(
            f"{kg.name} ({kg.domain}): {len(kg.nodes)} nodes, {len(kg.edges)} edges, "
            f"{len(event.paths)} paths, {len(event.relations)} relations"
        )
        self.show_kg_choice()
        self.show_scope()
        # A scope's subtrees open to show it.
        self.graph_step.show_graph(kg, event.paths, 2 if self.scope else 1)
        self.refresh_preview()
        self.refresh_plan_summary()

    @on(GraphStep.SearchTyped)
    def search_typed(self, event: GraphStep.SearchTyped) -> None:
        self.search_worker(event.text, event.online)

    @work(thread=True, exclusive=True, group="wizard-search", exit_on_error=False)
    def search_worker(self, text: str, online: bool) -> None:
        try:
            found = search_entities(text, online=online, limit=8)
        except KontestError as error:
            self.post_message(self.EntitiesFound([], str(error)))
            return
        self.post_message(self.EntitiesFound(list(found), ""))

    @on(EntitiesFound)
    def entities_found(self, event: EntitiesFound) -> None:
        self.found_entities = list(event.found)
        self.graph_step.show_suggestions(event.found, event.note)

    @on(GraphStep.EntityPicked)
    def entity_chosen(self, event: GraphStep.EntityPicked) -> None:
        """A sample entity loads its sample; a Wikidata entity becomes a seed to build from."""
        if not 0 <= event.index < len(self.found_entities):
            return
        entity = self.found_entities[event.index]
        source = str(getattr(entity, "source", ""))
        if source.startswith(("sample:", "built:")) or source == "kg":
            sample = self.source_of(source)
            if sample != self.kg_source:
                self.kg_source = sample
                self.scope = []
            if str(entity.id) not in self.scope:
                self.scope.append(str(entity.id))
            self.load_graph_worker(self.kg_source, self.selected_depth())
            self.graph_step.clear_search()
            return
        if entity.id not in self.seeds:
            self.seeds.append(str(entity.id))
            self.seed_labels.append(str(entity.label))
        self.graph_step.show_counts(
            "Wikidata seeds: " + ", ".join(self.seed_labels) + " · press Build"
        )

    def source_of(self, found_in: str) -> str:
        """What to load for an entity found in `sample:NAME`, `built:STEM` or the KG loaded."""
        if found_in.startswith("sample:"):
            return found_in.removeprefix("sample:")
        if found_in.startswith("built:"):
            return str(built_kgs_dir() / f"{found_in.removeprefix('built:')}.json")
        return self.kg_source

    @on(GraphStep.BuildPressed)
    def build_pressed(self) -> None:
        if not self.seeds:
            self.notify(
                "Tick Wikidata, search and choose entities first", severity="warning", markup=False
            )
            return
        domain = self.kg.domain if self.kg is not None else "places"
        self.graph_step.start_build_progress()
        self.build_worker(domain, list(self.seeds), self.selected_depth() or 2)

    @work(thread=True, exclusive=True, group="wizard-graph", exit_on_error=False)
    def build_worker(self, domain: str, seeds: list[str], depth: int) -> None:
        def report(step: Any) -> None:
            self.post_message(self.BuildProgressed(step))

        try:
            kg = build_graph(domain, seeds, depth, progress=report)
            relations = extract_relations(kg, depth=None)
            paths = find_paths(kg, depth=None)
        except KontestError as error:
            self.post_message(self.GraphFailed(error))
            return
        finally:
            self.post_message(self.BuildEnded())
        self.post_message(self.GraphLoaded(kg, relations, paths, None, source=kg.name))

    @on(BuildProgressed)
    def build_progressed(self, event: BuildProgressed) -> None:
        self.graph_step.show_build_progress(event.step)

    @on(BuildEnded)
    def build_ended(self) -> None:
        self.graph_step.hide_build_progress()

    # -- step 2: templates ----------------------------------------------------------------

    @on(TemplatesLoaded)
    def templates_loaded(self, event: TemplatesLoaded) -> None:
        self.template_set = event.template_set
        self.template_ids = self.templates_step.show_templates(
            event.template_set, event.template_ids
        )
        self.kind_cache.new_graph()
        self.refresh_preview()
        self.refresh_kinds()
        self.refresh_plan_summary()
        if self.auto_run:
            self.auto_run = False
            self.action_run_session()

    @on(TemplatesStep.TemplatesChosen)
    def templates_changed(self, event: TemplatesStep.TemplatesChosen) -> None:
        self.template_ids = list(event.template_ids)
        self.refresh_preview()
        self.refresh_kinds()
        self.refresh_plan_summary()

    def refresh_preview(self) -> None:
        """Filled queries for the first relations under the chosen templates."""
        if self.kg is None or self.template_set is None:
            return
        self.preview_worker(
            self.kg, self.relations[:PREVIEW_ROWS], self.template_set, list(self.template_ids)
        )

    @work(thread=True, exclusive=True, group="wizard-preview", exit_on_error=False)
    def preview_worker(
        self,
        kg: KnowledgeGraph,
        relations: list[Relation],
        template_set: TemplateSet,
        template_ids: list[str],
    ) -> None:
        if len(template_ids) < 2:
            self.post_message(self.PreviewBuilt([], "Choose at least two templates."))
            return
        try:
            conversations = build_conversations(kg, relations, template_set, template_ids)
        except KontestError as error:
            self.post_message(self.PreviewBuilt([], str(error)))
            return
        rows: list[tuple[str, str, str]] = []
        for conversation in conversations:
            if conversation.kind != "atomic":
                continue
            query = conversation.turns[0]
            relation = next((r for r in relations if r.id == conversation.relation_id), None)
            name = (
                f"{kg.label(relation.parent)} > {kg.label(relation.child)}"
                if relation
                else query.relation_id
            )
            rows.append((name, query.template_id, query.text))
        self.post_message(self.PreviewBuilt(rows, ""))

    @on(PreviewBuilt)
    def preview_built(self, event: PreviewBuilt) -> None:
        self.show_preview(event.rows, event.note)

    def show_preview(self, rows: list[tuple[str, str, str]], note: str) -> None:
        self.templates_step.show_preview(rows, note)
        self.refresh_variants()

    # -- step 3: variants -----------------------------------------------------------------

    @on(VariantsStep.SynonymsRequested)
    def open_synonyms(self) -> None:
        self.app.action_edit_synonyms()  # type: ignore[attr-defined]

    @on(VariantsStep.StrengthChanged)
    def strength_changed(self) -> None:
        self.refresh_variants()
        self.refresh_kinds()

    def selected_strength(self) -> int:
        return self.variants_step.selected_strength()

    def refresh_variants(self) -> None:
        """The covering array of the first relation's question under the first template."""
        source = self.variant_source()
        if source is not None:
            self.variants_worker(*source)

    def variant_source(self) -> tuple[KnowledgeGraph, Relation, Template, int] | None:
        """(KG, relation, template, strength) of the question the Variants step previews."""
        if self.kg is None or self.template_set is None or not self.relations:
            return None
        if not self.template_ids:
            return None
        template = self.template_set.get(self.template_ids[0])
        return self.kg, self.relations[0], template, self.selected_strength()

    def on_screen_resume(self) -> None:
        """Back from the synonym editor: pins and bans change the variants, so the preview,
        the array size and the variant kind's conversations are made again."""
        self.kind_cache.forget_kind("variant")
        self.refresh_variants()
        self.refresh_kinds()
        self.refresh_plan_summary()

    @work(thread=True, exclusive=True, group="wizard-variants", exit_on_error=False)
    def variants_worker(
        self, kg: KnowledgeGraph, relation: Relation, template: Template, strength: int
    ) -> None:
        try:
            preview = preview_variants(kg, relation, template, kg.domain, strength)
        except KontestError as error:
            self.post_message(self.VariantsPreviewed(None, f"Covering-array variants: {error}"))
            return
        except Exception as error:  # an engine bug: said in the step, not only notified
            self.post_message(self.VariantsPreviewed(None, f"Variants preview failed: {error}"))
            return
        self.post_message(self.VariantsPreviewed(preview, ""))

    @on(VariantsPreviewed)
    def variants_previewed(self, event: VariantsPreviewed) -> None:
        self.variants_step.show_variants(event.preview, event.note)

    # -- step 4: test kinds ---------------------------------------------------------------

    def show_kind_choices(self) -> None:
        """List the engine's test kinds (title and description); KONTEST ticked."""
        try:
            self.kind_choices = list_test_kinds()
        except KontestError as error:
            self.kinds_step.show_counts(f"Test kinds: {error}")
            self.kind_choices = []
        self.kinds_step.show_kind_choices(self.kind_choices, self.kinds)
        self.show_kind_options()

    def show_kind_options(self) -> None:
        self.kinds_step.show_kind_options(self.kinds, self.questions_path is not None)

    @on(KindsStep.KindsChanged)
    def kinds_changed(self) -> None:
        self.kinds = self.kinds_step.ticked_kinds(self.kind_choices)
        self.show_kind_options()
        self.refresh_kinds()
        self.refresh_plan_summary()

    def asked_kinds(self) -> list[str]:
        """The ticked kinds, then annotated questions when a questions file is loaded."""
        return [*self.kinds, *(["annotation"] if self.questions_path is not None else [])]

    def ticked_names(self, prefix: str, names: tuple[str, ...]) -> tuple[str, ...]:
        """The sub-selection ticked in an option row (`qtype-…`, `rule-…`), in engine order."""
        return self.kinds_step.ticked_names(prefix, names)

    def variant_limit(self) -> int | None:
        """Max variants per question; None (the whole covering array) when blank or 0."""
        return self.kinds_step.variant_limit()

    def kind_blocked(self, kind: str) -> str:
        """Why a ticked kind cannot be built ('' when it can): an empty sub-selection."""
        if kind == "factcheck" and not self.ticked_names("qtype", self.question_types):
            return "tick at least one question type"
        if kind == "logic" and not self.ticked_names("rule", self.logic_rules):
            return "tick at least one rule"
        return ""

    def kind_choices_now(self) -> KindChoices:
        """The choices the kinds' conversations depend on, read from the fields."""
        return KindChoices(
            template_ids=tuple(self.template_ids),
            strength=self.selected_strength(),
            postfix=self.kinds_step.postfix(),
            variant_limit=self.variant_limit(),
            question_types=self.ticked_names("qtype", self.question_types),
            rules=self.ticked_names("rule", self.logic_rules),
        )

    def questions_key(self, path: str) -> Key:
        """What a questions file's conversations depend on: the file and variant options."""
        return self.kind_cache.questions_key(path, self.kind_choices_now())

    def kind_key(self, kind: str) -> Key:
        """What a kind's conversations depend on: the KG version, templates, its options."""
        return self.kind_cache.key(kind, self.kind_choices_now(), self.questions_path)

    def kind_options(self) -> KindOptions:
        """The engine's KindOptions for the choices shown (all ticked: None, i.e. all)."""
        types = self.ticked_names("qtype", self.question_types)
        rules = self.ticked_names("rule", self.logic_rules)
        return KindOptions(
            strength=self.selected_strength(),
            postfix=self.kinds_step.postfix(),
            variant_limit=self.variant_limit(),
            question_types=None if len(types) == len(self.question_types) else types,
            rules=None if len(rules) == len(self.logic_rules) else rules,
        )

    def refresh_kinds(self) -> None:
        """Build (in a worker) the ticked kinds not built yet, then show the counts."""
        self.show_kind_counts()
        if self.questions_path is not None:
            key = self.kind_key("annotation")
            if self.kind_cache.is_pending(key):
                self.kind_cache.start([key])
                self.questions_worker(self.questions_path, key, self.kind_options(), False)
        if self.kg is None or self.template_set is None or not self.template_ids:
            return
        missing = [
            self.kind_key(kind)
            for kind in self.kinds
            if not self.kind_blocked(kind) and self.kind_cache.is_pending(self.kind_key(kind))
        ]
        if missing:
            self.kind_cache.start(missing)
            self.kinds_worker(
                self.kg,
                list(self.relations),
                self.template_set,
                list(self.template_ids),
                missing,
                self.kind_options(),
            )

    # Not exclusive: each worker builds other keys (the key names the KG version), and a
    # result for an older KG is simply never looked up.
    @work(thread=True, group="wizard-kinds", exit_on_error=False)
    def kinds_worker(
        self,
        kg: KnowledgeGraph,
        relations: list[Relation],
        template_set: TemplateSet,
        template_ids: list[str],
        keys: list[Key],
        options: KindOptions,
    ) -> None:
        for key in keys:
            try:
                built = build_kind_for_relations(
                    kg, relations, template_set, template_ids, TestKind(str(key[0])), options
                )
            except KontestError as error:
                self.post_message(self.KindBuilt(key, None, str(error)))
                continue
            except Exception as error:  # an engine bug must not leave "counting…" forever
                self.post_message(self.KindBuilt(key, None, f"failed: {error!r}"))
                continue
            self.post_message(self.KindBuilt(key, built, ""))

    @on(KindBuilt)
    def kind_built(self, event: KindBuilt) -> None:
        self.kind_cache.finish(event.key, event.conversations, event.error)
        self.show_kind_counts()
        self.refresh_plan_summary()

    # -- annotated questions (a JSONL file, not built from the KG) --------------------------

    @on(KindsStep.QuestionsRequested)
    def load_questions(self, event: KindsStep.QuestionsRequested) -> None:
        """Read the questions file in a worker (blank: take the questions out of the plan)."""
        path = event.path
        if not path:
            if self.questions_path is not None:
                self.notify("Annotated questions taken out of the plan.", markup=False)
            self.questions_path = None
            self.kinds_step.show_questions_status("")
            self.kinds_changed()
            return
        key = self.questions_key(path)
        # Read it again: the file may have changed since it was last loaded.
        self.kind_cache.restart(key)
        self.kinds_step.show_questions_status(f"Reading {path}…")
        self.questions_worker(path, key, self.kind_options(), True)

    @work(thread=True, group="wizard-questions", exit_on_error=False)
    def questions_worker(self, path: str, key: Key, options: KindOptions, announce: bool) -> None:
        try:
            loaded = load_annotated_questions(path, options)
        except KontestError as error:
            self.post_message(self.QuestionsLoaded(key, None, str(error), announce))
            return
        except Exception as error:  # an engine bug must not crash the wizard
            self.post_message(self.QuestionsLoaded(key, None, f"{path}: {error!r}", announce))
            return
        self.post_message(self.QuestionsLoaded(key, loaded, "", announce))

    @on(QuestionsLoaded)
    def questions_loaded(self, event: QuestionsLoaded) -> None:
        # A Load that failed leaves the plan: its error is notified, not kept for the counts.
        self.kind_cache.finish_questions(
            event.key, event.loaded, event.error, keep_error=not event.announce
        )
        path = str(event.key[1])
        if event.loaded is None:
            if event.announce:  # a Load that failed: the file is not in the plan
                self.notify(
                    event.error, title="Annotated questions", severity="error", markup=False
                )
                self.kinds_step.show_questions_status(f"Not loaded: {event.error}")
                if self.questions_path == path:
                    self.questions_path = None
        elif event.announce:
            self.questions_path = path
            summary = self.describe_questions(event.loaded)
            self.kinds_step.show_questions_status(summary)
            self.notify(
                summary,
                title="Annotated questions",
                severity="warning" if event.loaded.problems else "information",
                markup=False,
            )
        self.show_kind_options()
        self.refresh_kinds()  # options may have changed while the file was read
        self.refresh_plan_summary()

    @staticmethod
    def describe_questions(loaded: AnnotatedQuestions, shown: int = 5) -> str:
        """`FILE: N questions, M lines skipped` and the first skipped lines (FILE:LINE: why)."""
        problems = loaded.problems
        lines = [
            f"{loaded.path}: {loaded.questions} questions, {len(problems)} "
            f"line{'' if len(problems) == 1 else 's'} skipped"
        ]
        lines += [f"  {problem}" for problem in problems[:shown]]
        if len(problems) > shown:
            lines.append(f"  … {len(problems) - shown} more")
        return "\n".join(lines)

    def kind_conversations(self, kind: str) -> list[Conversation] | None:
        """A kind's conversations for the current choices, if built."""
        return self.kind_cache.conversations(self.kind_key(kind))

    def kind_totals(self) -> list[tuple[str, int | None, int | None, str]]:
        """(kind, conversations, model calls, note) per asked kind; None while counting."""
        totals: list[tuple[str, int | None, int | None, str]] = []
        for kind in self.asked_kinds():
            key = self.kind_key(kind)
            built = self.kind_conversations(kind)
            if built is None:
                note = self.kind_blocked(kind) or self.kind_cache.note(key)
                totals.append((kind, None, None, note))
            else:
                calls = sum(len(conversation.turns) for conversation in built)
                totals.append((kind, len(built), calls, ""))
        return totals

    def show_kind_counts(self) -> None:
        if not self.asked_kinds():
            self.kinds_step.show_counts(
                "Tick at least one test kind (or load annotated questions)."
            )
            return
        text = Text()
        totals = self.kind_totals()
        for kind, conversations, calls, note in totals:
            text.append(f"{kind:<10}", style="bold")
            if conversations is None:
                text.append(f" {note}", style="italic")
            else:
                text.append(f" {conversations:>6} conversations {calls:>6} model calls")
            if kind in ("variant", "annotation"):
                limit = self.variant_limit()
                text.append(
                    f"  (strength t={self.selected_strength()}, step 3"
                    + (f", at most {limit} per question" if limit else "")
                    + ")",
                    style="dim",
                )
            text.append("\n")
        if totals and all(conversations is not None for _, conversations, _, _ in totals):
            text.append(f"{'total':<10}", style="bold")
            text.append(
                f" {sum(c or 0 for _, c, _, _ in totals):>6} conversations "
                f"{sum(n or 0 for _, _, n, _ in totals):>6} model calls"
            )
        self.kinds_step.show_counts(text)

    # -- step 5: model and run ------------------------------------------------------------

    @on(ModelStep.CheckRequested)
    def action_check_model(self) -> None:
        self.model_step.show_status("Checking…")
        self.check_worker(self.model_step.model_spec())

    @work(exclusive=True, group="wizard-model", exit_on_error=False)
    async def check_worker(self, spec: str) -> None:
        try:
            model = await asyncio.to_thread(open_model, spec, kg=self.kg)
            try:
                line = await model.check()
            finally:
                await model.aclose()
        except KontestError as error:
            self.model_step.show_status(f"✗ {error}")
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        self.model_step.show_status(f"✓ {clean_text(str(line))}")

    @on(ModelStep.OllamaRequested)
    def find_ollama(self) -> None:
        """List the models of the Ollama server typed in the model field (its @URL), else
        the default local one."""
        typed = self.model_step.model_spec()
        self.ollama_worker(typed if typed.lower().startswith("ollama:") else "ollama:")

    @work(thread=True, exclusive=True, group="wizard-ollama", exit_on_error=False)
    def ollama_worker(self, spec: str) -> None:
        try:
            names = list_models(spec)
        except KontestError as error:
            self.post_message(self.OllamaModelsListed([], str(error), error.title))
            return
        except Exception as error:
            self.post_message(self.OllamaModelsListed([], f"cannot list Ollama models: {error}"))
            return
        specs = [
            name if ":" in name and name.startswith("ollama") else f"ollama:{name}"
            for name in names
        ]
        self.post_message(self.OllamaModelsListed(specs))

    @on(OllamaModelsListed)
    def ollama_models_listed(self, event: OllamaModelsListed) -> None:
        if event.error:
            self.notify(event.error, title=event.title, severity="warning", markup=False)
        else:
            self.add_presets(event.specs)

    def add_presets(self, specs: list[str]) -> None:
        """Add model specs to the presets (those listed before stay, in their order)."""
        self.presets += [spec for spec in specs if spec not in self.presets]
        self.model_step.show_presets(self.presets)
        self.notify(f"{len(specs)} Ollama model(s) found", markup=False)

    def refresh_plan_summary(self) -> None:
        if self.kg is None:
            return
        pairs = len(self.template_ids) // 2 if len(self.template_ids) >= 2 else 0
        summary = (
            f"KG {self.kg.name}, depth {self.selected_depth() or 'all'}: {len(self.relations)} relations; "
            f"templates {', '.join(self.template_ids) or '-'}; {pairs} template pair(s)."
        )
        if self.asked_kinds() != ["kontest"]:
            calls = [
                f"{kind} {'…' if count is None else count}"
                for kind, _, count, _ in self.kind_totals()
            ]
            summary += f"\nTest kinds (model calls): {', '.join(calls) or 'none'}."
        self.model_step.show_summary(summary)

    @on(ModelStep.RunRequested)
    def action_run_session(self) -> None:
        if self.kg is None or self.template_set is None:
            self.auto_run = True
            self.notify(
                "Still loading the graph and templates; the run starts when ready.", markup=False
            )
            return
        if not self.asked_kinds():
            self.notify(
                "Tick at least one test kind or load annotated questions (step 4).",
                severity="warning",
                markup=False,
            )
            return
        blocked = [
            f"{kind}: {self.kind_blocked(kind)}" for kind in self.kinds if self.kind_blocked(kind)
        ]
        if blocked:
            self.notify("; ".join(blocked) + " (step 4).", severity="warning", markup=False)
            return
        if len(self.template_ids) < (2 if "kontest" in self.kinds else 1):
            self.notify("Choose at least two templates.", severity="warning", markup=False)
            return
        spec = self.model_step.model_spec() or "sim"
        try:
            check_model_spec(spec)
        except KontestError as error:
            self.model_step.show_status(f"✗ {error}")
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        # Widget values are read here, in the UI thread; kinds already built are reused.
        built = {kind: self.kind_conversations(kind) for kind in self.asked_kinds()}
        loaded = (
            self.kind_cache.questions.get(self.kind_key("annotation"))
            if self.questions_path is not None
            else None
        )
        self.plan_worker(
            self.kg,
            list(self.relations),
            self.template_set,
            list(self.template_ids),
            spec,
            self.kg_source,
            self.selected_depth(),
            self.per_path,
            built,
            self.kind_options(),
            self.questions_path,
            list(loaded.problems) if loaded is not None else [],
        )

    @work(thread=True, exclusive=True, group="wizard-plan", exit_on_error=False)
    def plan_worker(
        self,
        kg: KnowledgeGraph,
        relations: list[Relation],
        template_set: TemplateSet,
        template_ids: list[str],
        spec: str,
        kg_source: str,
        depth: int | None,
        per_path: bool,
        built: dict[str, list[Conversation] | None],
        kind_options: KindOptions,
        questions_path: str | None,
        problems: list[str],
    ) -> None:
        # A failure (KontestError or not) is notified by `on_worker_state_changed`.
        conversations: list[Conversation] = []
        for kind, ready in built.items():
            if ready is None and kind == "annotation" and questions_path is not None:
                loaded = load_annotated_questions(questions_path, kind_options)
                ready, problems = loaded.conversations, loaded.problems
            elif ready is None:
                ready = build_kind_for_relations(
                    kg, relations, template_set, template_ids, TestKind(kind), kind_options
                )
            conversations.extend(ready)
        plan = SessionPlan(
            kg=kg,
            kg_source=kg_source,
            depth=depth,
            relations=relations,
            conversations=conversations,
            template_set=template_set,
            template_ids=template_ids,
            model_spec=spec,
            per_path=per_path,
            kinds=tuple(built),
            kind_options=kind_options,
            problems=problems,
        )
        self.post_message(self.PlanBuilt(plan))

    @on(PlanBuilt)
    def plan_built(self, event: PlanBuilt) -> None:
        cast("KontestApp", self.app).start_run(event.plan)
