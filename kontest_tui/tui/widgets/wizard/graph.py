"""Step 1 of the wizard: the KG (a sample, a file, or a build from Wikidata), its depth and
scope, with the graph and its paths as a preview.

The step runs its own workers: the sample KGs listed, the entities found for the text typed
(`run.api` through kg.search: the KG loaded first), and a KG built from the Wikidata
entities chosen. It posts what changes the session (`SampleChosen`, `EntityPicked`,
`GraphBuilt`, ...) and shows the preparation the screen hands it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    Label,
    OptionList,
    ProgressBar,
    Select,
    Static,
    TabPane,
    Tree,
)
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from kontest_tui.errors import KontestError
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.run.api import build_wikidata_source, loaded_first, sample_sources, source_of_match
from kontest_tui.tui.widgets.ticks import TickBox
from kontest_tui.tui.workers import WorkerFailures

if TYPE_CHECKING:
    from kontest_tui.kg.search import EntityMatch
    from kontest_tui.run.api import Preparation

DEPTHS: list[tuple[str, int]] = [("all", 0), ("1", 1), ("2", 2), ("3", 3), ("4", 4), ("5", 5)]
PATHS_SHOWN = 500


class GraphStep(WorkerFailures, TabPane):
    """The graph step: choose and preview the KG."""

    class SampleChosen(Message):
        """Another KG was chosen in the selector."""

        def __init__(self, source: str) -> None:
            super().__init__()
            self.source = source

    class DepthChanged(Message):
        """The depth changed."""

    class PerPathChanged(Message):
        """Per-path counting was ticked or unticked."""

        def __init__(self, per_path: bool) -> None:
            super().__init__()
            self.per_path = per_path

    class LoadPressed(Message):
        """Load was pressed (the sample chosen, or the file path typed)."""

    class ScopeCleared(Message):
        """Clear scope was pressed: the whole KG again."""

    class EntityPicked(Message):
        """An entity of a sample or built KG was chosen: the session is scoped to it."""

        def __init__(self, match: EntityMatch, source: str) -> None:
            super().__init__()
            self.match = match
            self.source = source  # the KG it is in (kg.search's source, as a KG source)

    class GraphBuilt(Message):
        """A KG was built from the Wikidata entities chosen: its source (a built KG file)."""

        def __init__(self, source: str) -> None:
            super().__init__()
            self.source = source

    # What the step's own workers post to it.

    class SamplesListed(Message, bubble=False):
        """The bundled sample KGs were listed."""

        def __init__(self, samples: list[str]) -> None:
            super().__init__()
            self.samples = samples

    class EntitiesFound(Message, bubble=False):
        """Entities matching the search text (`note` says why there are none, if it can)."""

        def __init__(self, found: list[EntityMatch], note: str) -> None:
            super().__init__()
            self.found = found
            self.note = note

    class BuildProgressed(Message, bubble=False):
        """A step of a Wikidata build (kg.wikidata's progress record)."""

        def __init__(self, step: object) -> None:
            super().__init__()
            self.step = step

    class BuildFailed(Message, bubble=False):
        """A Wikidata build failed: the engine's words and title."""

        def __init__(self, error: str, title: str) -> None:
            super().__init__()
            self.error = error
            self.title = title

    kg: KnowledgeGraph | None = None  # the graph the tree shows

    def __init__(self, title: str, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(title, id=id)
        self.samples: list[str] = []
        self.source = ""  # the KG source the session uses (the screen's state says)
        self.shown = ""  # how the selector names it
        self.found_entities: list[EntityMatch] = []
        self.seeds: list[tuple[str, str]] = []  # Wikidata (QID, label) to build a KG from

    def compose(self) -> ComposeResult:
        with Horizontal(classes="row"):
            yield Label("KG")
            yield Select[str]([], id="sample-select", prompt="sample", allow_blank=True)
            yield Label("Depth")
            yield Select[int](DEPTHS, id="depth-select", value=0, allow_blank=False)
            yield Button("Load", id="load-kg", variant="primary")
            yield TickBox(
                "per path",
                id="per-path",
                tooltip="Count every ancestor pair on every path (the paper's tables)",
            )
        with Horizontal(classes="row"):
            yield Input(
                placeholder="Find an entity (fuzzy) or type a KG file path",
                id="entity-input",
            )
            yield TickBox("Wikidata", id="online", tooltip="Search Wikidata online")
            yield Button(
                "Build",
                id="build-kg",
                tooltip="Build the KG of the chosen entities from Wikidata",
            )
        yield OptionList(id="entity-suggestions")
        with Horizontal(classes="row", id="scope-row"):
            yield Static("", id="scope-text", classes="hint", markup=False)
            yield Button(
                "Clear scope",
                id="clear-scope",
                compact=True,
                tooltip="Use the whole KG again",
            )
        yield ProgressBar(id="build-progress", show_eta=False)
        yield Static("No graph loaded yet.", id="kg-counts", classes="counts", markup=False)
        with Horizontal(id="preview"):
            yield Tree[str]("graph", id="kg-tree", classes="pane")
            yield OptionList(id="path-list", classes="pane")

    def on_mount(self) -> None:
        self.query_one("#build-progress", ProgressBar).display = False
        self.query_one("#entity-suggestions", OptionList).display = False
        self.samples_worker()

    def worker_failed(self, group: str, error: BaseException) -> None:
        """A failed search says so where the suggestions go (the failure was notified)."""
        if group == "wizard-search":
            self.show_suggestions([], f"Search failed: {error}")
        elif group == "wizard-build":
            self.hide_build_progress()

    def on_key(self, event: events.Key) -> None:
        """Down in the search field enters the suggestions."""
        suggestions = self.query_one("#entity-suggestions", OptionList)
        if (
            event.key == "down"
            and self.screen.focused is self.query_one("#entity-input", Input)
            and suggestions.display
            and suggestions.option_count
        ):
            event.stop()
            suggestions.focus()
            suggestions.highlighted = 0

    # -- what the screen reads -------------------------------------------------------------

    def selected_depth(self) -> int | None:
        value = self.query_one("#depth-select", Select).value
        return value if isinstance(value, int) and value > 0 else None

    def chosen_source(self, current: str) -> str:
        """A KG file path typed in the search field, else the sample chosen, else `current`."""
        value = self.query_one("#sample-select", Select).value
        typed = self.query_one("#entity-input", Input).value.strip()
        if typed.endswith((".json", ".csv")):
            return typed
        return value if isinstance(value, str) else current

    def focus_search(self) -> None:
        self.query_one("#entity-input", Input).focus()

    def clear_search(self) -> None:
        self.query_one("#entity-input", Input).value = ""

    # -- events turned into messages -------------------------------------------------------

    @on(Select.Changed, "#sample-select")
    def sample_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.post_message(self.SampleChosen(event.value))

    @on(Select.Changed, "#depth-select")
    def depth_changed(self) -> None:
        self.post_message(self.DepthChanged())

    @on(Checkbox.Changed, "#per-path")
    def per_path_changed(self, event: Checkbox.Changed) -> None:
        self.post_message(self.PerPathChanged(event.value))

    @on(Button.Pressed, "#load-kg")
    def load_pressed(self) -> None:
        self.post_message(self.LoadPressed())

    @on(Button.Pressed, "#clear-scope")
    def clear_scope_pressed(self) -> None:
        self.post_message(self.ScopeCleared())

    @on(Input.Changed, "#entity-input")
    def entity_typed(self, event: Input.Changed) -> None:
        text = event.value.strip()
        if len(text) >= 2 and not text.endswith((".json", ".csv")):
            self.search_worker(text, self.query_one("#online", Checkbox).value, self.source)
        else:
            self.query_one("#entity-suggestions", OptionList).display = False

    @on(OptionList.OptionSelected, "#entity-suggestions")
    def entity_chosen(self, event: OptionList.OptionSelected) -> None:
        """An entity of a sample or built KG scopes the session (`EntityPicked`: the screen
        loads that KG); a Wikidata entity becomes a seed to build a KG from."""
        self.query_one("#entity-suggestions", OptionList).display = False
        self.focus_search()  # the next name is typed at once (the hidden list kept the focus)
        index = int((event.option.id or "entity--1").rsplit("-", 1)[-1])
        if not 0 <= index < len(self.found_entities):
            return
        match = self.found_entities[index]
        source = source_of_match(match, self.source)
        if source is not None:
            self.clear_search()
            self.post_message(self.EntityPicked(match, source))
            return
        if match.id not in [qid for qid, _ in self.seeds]:
            self.seeds.append((match.id, match.label))
        self.show_counts(
            "Wikidata seeds: " + ", ".join(label for _, label in self.seeds) + " · press Build"
        )

    # -- the step's workers ----------------------------------------------------------------

    @work(thread=True, exclusive=True, group="wizard-samples", exit_on_error=False)
    def samples_worker(self) -> None:
        try:
            samples = sample_sources()
        except KontestError:
            samples = []
        self.post_message(self.SamplesListed(samples))

    @on(SamplesListed)
    def samples_listed(self, event: SamplesListed) -> None:
        self.samples = event.samples
        if self.source:
            self.show_kg_choice(self.source, self.shown)

    @work(thread=True, exclusive=True, group="wizard-search", exit_on_error=False)
    def search_worker(self, text: str, online: bool, source: str) -> None:
        from kontest_tui.kg.search import search_entities  # (httpx: only when searching)

        try:
            # The loaded KG's matches first, then the best of the others (issue 32: Down
            # Enter on "ireland" picked the subdivisions sample's and switched KG).
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
        self.show_suggestions(event.found, event.note)

    @on(Button.Pressed, "#build-kg")
    def build_pressed(self) -> None:
        """Build the KG of the Wikidata seeds chosen, in the domain of the graph shown, to
        the depth chosen (2 when it is all)."""
        if not self.seeds:
            self.notify(
                "Tick Wikidata, search and choose entities first", severity="warning", markup=False
            )
            return
        domain = self.kg.domain if self.kg is not None else "places"
        self.start_build_progress()
        self.build_worker(domain, [qid for qid, _ in self.seeds], self.selected_depth() or 2)

    @work(thread=True, exclusive=True, group="wizard-build", exit_on_error=False)
    def build_worker(self, domain: str, seeds: list[str], depth: int) -> None:
        def report(step: object) -> None:
            self.post_message(self.BuildProgressed(step))

        try:
            source = build_wikidata_source(domain, seeds, depth, progress=report)
        except KontestError as error:
            self.post_message(self.BuildFailed(str(error), error.title))
            return
        self.post_message(self.GraphBuilt(source))

    @on(BuildProgressed)
    def build_progressed(self, event: BuildProgressed) -> None:
        self.show_build_progress(event.step)

    @on(BuildFailed)
    def build_failed(self, event: BuildFailed) -> None:
        self.hide_build_progress()
        self.notify(event.error, title=event.title, severity="error", markup=False)
        self.show_counts(f"{event.title}: {event.error}")

    @on(GraphBuilt)
    def graph_built(self) -> None:
        """The build is over (the screen loads the KG built: the message goes on up)."""
        self.hide_build_progress()
        self.seeds = []

    # -- what the screen shows -------------------------------------------------------------

    def show_kg_choice(self, source: str, shown: str) -> None:
        """The KG selector names the graph loaded: a sample, or the file or build it came
        from (`shown`: the graph's name)."""
        self.source, self.shown = source, shown
        samples = self.samples
        select = self.query_one("#sample-select", Select)
        choices: list[tuple[Content, str]] = [(Content(name), name) for name in samples]
        if source not in samples:  # a KG's name and path are text, never markup
            label = f"{shown} ({source})" if shown != source else shown
            choices.append((Content(label), source))
        select.set_options(choices)
        select.value = source

    def show_scope(self, labels: Sequence[str], depth: int | None) -> None:
        """`Scope: Ireland, Kinawley (depth 2 below each)`, or the whole KG when no labels."""
        text = self.query_one("#scope-text", Static)
        self.query_one("#clear-scope", Button).display = bool(labels)
        if not labels:
            text.update("Scope: the whole KG (choose entities above to scope the session).")
            return
        text.update(
            f"Scope: {', '.join(labels)} "
            f"({f'depth {depth} below each' if depth else 'whole subtrees'})"
        )

    def show_counts(self, line: str) -> None:
        self.query_one("#kg-counts", Static).update(line)

    def show_preparation(self, preparation: Preparation, open_levels: int) -> None:
        """What the preparation says of the graph: its sizes and problems in a line, the
        graph as a tree (`open_levels` open) and its first paths."""
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
        self.show_counts(" · ".join([*([line] if line else []), *graph_problems]))
        if kg is not None:
            self.show_graph(kg, preparation.paths, open_levels)

    def show_graph(
        self, kg: KnowledgeGraph, paths: Sequence[tuple[str, ...]], open_levels: int
    ) -> None:
        """The graph as a tree (`open_levels` levels open; a node's children are added when
        it is opened, so a graph of any size costs the nodes shown) and its first paths."""
        self.kg = kg
        tree: Tree[str] = self.query_one("#kg-tree", Tree)
        tree.clear()
        tree.root.set_label(Text(kg.name))  # a name from a file: text, never markup
        self.add_children(tree.root, kg.roots(), open_levels)
        tree.root.expand()
        path_list = self.query_one("#path-list", OptionList)
        path_list.clear_options()
        path_list.add_options(
            [
                Option(Text(" > ".join(kg.label(node_id) for node_id in path)))
                for path in paths[:PATHS_SHOWN]
            ]
        )

    def add_children(
        self, parent: TreeNode[str], node_ids: Sequence[str], open_levels: int
    ) -> None:
        """Tree nodes for `node_ids` under `parent`; the first `open_levels` levels open."""
        kg = self.kg
        if kg is None:
            return
        for node_id in node_ids:
            children = kg.children(node_id)
            label = Text(kg.label(node_id))
            if children:
                label.append(f" ({len(children)})", style="dim")
            node = parent.add(label, data=node_id, allow_expand=bool(children))
            if children and open_levels > 0:
                self.add_children(node, children, open_levels - 1)
                node.expand()

    @on(Tree.NodeExpanded, "#kg-tree")
    def node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        """Add an opened node's children the first time it is opened."""
        node = event.node
        if self.kg is not None and node.data is not None and not node.children:
            self.add_children(node, self.kg.children(node.data), 0)

    def show_suggestions(self, found: Sequence[Any], note: str) -> None:
        """Entities found (label, id, description, where found), or a note."""
        suggestions = self.query_one("#entity-suggestions", OptionList)
        suggestions.clear_options()
        if note:
            suggestions.add_option(Option(Text(note, style="italic"), disabled=True))
        for index, entity in enumerate(found):
            line = Text(str(getattr(entity, "label", entity)), style="bold")
            line.append(f"  {getattr(entity, 'id', '')}  {getattr(entity, 'description', '')}")
            line.append(f"  [{getattr(entity, 'source', '')}]", style="dim")
            suggestions.add_option(Option(line, id=f"entity-{index}"))
        suggestions.display = bool(found) or bool(note)

    def start_build_progress(self) -> None:
        progress = self.query_one("#build-progress", ProgressBar)
        progress.display = True
        progress.update(total=None, progress=0)

    def show_build_progress(self, step: Any) -> None:
        """One step of a Wikidata build (kg.wikidata's progress record)."""
        progress = self.query_one("#build-progress", ProgressBar)
        progress.update(total=max(1, int(step.total)), progress=int(step.done))
        self.show_counts(
            f"Building from Wikidata: {step.phase}, level {step.level}, {step.done}/{step.total}, "
            f"{step.nodes} nodes so far"
        )

    def hide_build_progress(self) -> None:
        self.query_one("#build-progress", ProgressBar).display = False
