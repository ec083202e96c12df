"""What a new session is: `SessionSpec`, and `resolve_spec`, which loads and scopes its KG.

A spec names the KG by its *source* (a sample name, a KG file, a Wikidata graph built into
the cache, or a graph already in memory) and its *scope* (entities and a depth below each),
then the templates, test kinds, model and options. `resolve_spec` turns it into the same
spec with the scoped graph in memory, the depth left for paths, the KG's name and template
set filled in and the questions file read: what `run.prepare.prepare` shows and
`run.api.create_session` stores. Resolving a resolved spec gives it back unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kontest_tui.domain.records import Conversation, TestKind
from kontest_tui.generate.sample import SampleSpec
from kontest_tui.generate.templates import TemplateSet, resolve_template_set
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import load_graph
from kontest_tui.kg.scope import apply_scope
from kontest_tui.kinds.registry import KindOptions, PrebuiltKinds, build_annotated_questions
from kontest_tui.models.base import ChatOptions
from kontest_tui.results.evaluate import empty_graph
from kontest_tui.run.executor import ExecutorConfig

# A KG source: a sample name, a KG file (.json, .csv; a built Wikidata graph is a file in the
# cache), or a graph in memory, taken as it is.
KgSource = str | KnowledgeGraph

# The template set of a session that asks annotated questions only (no KG).
QUESTIONS_ONLY = TemplateSet("annotation", (), "question")


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """Everything a new session needs. Defaults are `kontest run`'s."""

    source: KgSource | None = None  # None: annotated questions only (`questions`)
    model: str = "sim"  # a model spec (models.specs); stored as the opened model names itself
    # The scope: keep the subtrees of these entities (ids or exact labels), each `depth`
    # edges below it. No entities: the whole KG, paths `depth` edges long (None: all).
    entities: Sequence[str] = ()
    depth: int | None = None
    per_path: bool = False  # count every pair on every path, as the paper's tables do
    kg_name: str | None = None  # how the session names its KG; default: the source's text
    template_set: TemplateSet | str | None = None  # a set, a domain or .toml; None: the KG's
    template_ids: Sequence[str] | None = None  # default: the set's first two
    kinds: Sequence[str] = (TestKind.KONTEST,)  # test kinds built from the KG
    kind_options: KindOptions | None = None  # default: KindOptions(seed=seed)
    questions: str | None = None  # an annotated-questions JSONL file, asked as variants
    # default: the template set's prompt and temperature; `options.seed` is the model's seed
    # (sent to it, and seeding the simulated model; None: none sent, the simulated model's 0)
    options: ChatOptions | None = None
    seed: int = 0  # seeds the sample and the kinds' options (not the model: options.seed)
    limit: int | None = None  # only the first N relations
    sample: SampleSpec | None = None  # a stratified random sample of the relations instead
    config: ExecutorConfig | None = None  # run options: concurrency, retries, rate, cache
    # Every conversation asked from scratch (the KONTEST paper's setting): no answer shared
    # between conversations, and the report's stability test (oracles.stability).
    fresh_conversations: bool = False
    # Filled by resolve_spec from `questions`: its conversations and the lines it skipped.
    extra_conversations: Sequence[Conversation] = ()
    problems: Sequence[str] = ()
    # Filled by run.prepare: the other kinds' conversations it built to count them, stored
    # as they are by create_session when they were built for its relations (else rebuilt).
    prebuilt: PrebuiltKinds | None = None

    @property
    def resolved(self) -> bool:
        """Whether the graph is in memory, scoped, and the questions file read."""
        return (
            (self.source is None or isinstance(self.source, KnowledgeGraph))
            and not self.entities
            and self.questions is None
            and isinstance(self.template_set, TemplateSet)
        )

    @property
    def graph(self) -> KnowledgeGraph:
        """The resolved spec's graph (ValueError before resolve_spec)."""
        if not isinstance(self.source, KnowledgeGraph):
            raise ValueError("the spec's KG is not loaded yet: resolve_spec(spec) first")
        return self.source

    @property
    def kind_settings(self) -> KindOptions:
        """The kinds' options, seeded with the spec's seed unless they say otherwise."""
        return self.kind_options or KindOptions(seed=self.seed)


def source_name(source: KgSource | None) -> str:
    """How a session names a KG source: the text given, a graph's name."""
    if isinstance(source, KnowledgeGraph):
        return source.name
    return str(source or "")


def load_source(source: KgSource) -> KnowledgeGraph:
    """The KG of a source (GraphError when it cannot be read)."""
    return source if isinstance(source, KnowledgeGraph) else load_graph(source)


def resolve_spec(spec: SessionSpec) -> SessionSpec:
    """`spec` with its KG loaded and scoped (the depth then used up by the scope), its name,
    template set and (for a questions file) conversations filled in. Raises the engine's
    KontestError subclasses: GraphError, ScopeError, TemplateError, InvalidInputError."""
    if spec.resolved:
        return spec
    extra, problems = list(spec.extra_conversations), list(spec.problems)
    if spec.questions is not None:
        extra, problems = build_annotated_questions(spec.questions, spec.kind_settings)
    if spec.source is None:
        if spec.questions is None and not spec.extra_conversations:
            from kontest_tui.errors import InvalidInputError

            raise InvalidInputError("no KG and no questions file: nothing to ask")
        name = Path(str(spec.questions)).name if spec.questions else "questions"
        return replace(
            spec,
            source=empty_graph(name),
            kg_name=spec.kg_name or f"questions:{spec.questions}",
            template_set=QUESTIONS_ONLY,
            kinds=(),
            questions=None,
            extra_conversations=extra,
            problems=problems,
        )
    # the depth is counted from each chosen entity, then used up (kg.scope)
    kg, depth = apply_scope(load_source(spec.source), spec.entities, spec.depth)
    template_set = resolve_template_set(spec.template_set, kg.domain)
    return replace(
        spec,
        source=kg,
        entities=(),
        depth=depth,
        kg_name=spec.kg_name or source_name(spec.source),
        template_set=template_set,
        questions=None,
        extra_conversations=extra,
        problems=problems,
    )
