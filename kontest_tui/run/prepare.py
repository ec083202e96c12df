"""What a session spec would ask, before anything is stored: `prepare(spec)`.

`prepare` resolves the spec (loads and scopes the KG, reads the template set and questions
file) and says what the run would be: the scoped graph's summary, its relation count, the
conversations and model calls per test kind, the first relations with every conversation
the run asks about them (each kind's, covering-array rows included), and the problems that
block a run (an empty scope, a KG that does not load, an unreadable template set, too few
templates, a kind that builds nothing, a model spec that does not parse or a model that does
not answer). A front end shows it and starts the run only when `problems` is empty; the CLI
calls it with `detail=False`, which only resolves and checks (no summary, counts or
previews), so `kontest run` costs what it did.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from typing import TYPE_CHECKING, Literal

from kontest_tui.domain.records import Conversation, Relation, TestKind
from kontest_tui.errors import (
    GraphError,
    InvalidInputError,
    KontestError,
    TemplateError,
    TooManyPathsError,
)
from kontest_tui.generate.conversations import build_conversations, question_text
from kontest_tui.generate.relations import iter_relations
from kontest_tui.generate.summary import GraphSummary, describe_graph
from kontest_tui.generate.templates import Template, TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.names import NodeNames
from kontest_tui.kg.paths import check_path_count, iter_paths
from kontest_tui.kinds.registry import (
    PrebuiltKinds,
    all_kinds,
    array_kinds,
    build_kind_for_relations,
    build_other_kinds,
)
from kontest_tui.run.spec import SessionSpec, resolve_spec

if TYPE_CHECKING:
    from kontest_tui.generate.check import QuestionCheck
    from kontest_tui.generate.variants import VariantPreview

PREVIEW_RELATIONS = 200  # relations listed for browsing their conversations
CHECK_RELATIONS = 5_000  # relations whose questions the preview's question check reads
PATHS_SHOWN = 500  # root-to-leaf paths listed

Step = Literal["graph", "templates", "kinds", "model"]


@dataclass(frozen=True, slots=True)
class Problem:
    """Something that blocks a run, and the wizard step where it is fixed."""

    step: Step
    message: str
    error: KontestError | None = field(default=None, compare=False)  # the engine's own

    def raise_error(self) -> None:
        """Raise the engine's error behind this problem (one line on the command line)."""
        if self.error is not None:
            raise self.error
        raise InvalidInputError(self.message.rstrip("."))


@dataclass(frozen=True, slots=True)
class KindCount:
    """How much one test kind asks: conversations and model calls (turns)."""

    kind: str  # a kind's name (the questions file's kind for its conversations)
    conversations: int
    calls: int


@dataclass(frozen=True, slots=True)
class QueryVariants:
    """The covering array of one question: the template it fills and its variant rows."""

    template_id: str
    question: str
    preview: VariantPreview | None  # None when the array cannot be made (`note` says why)
    note: str = ""


@dataclass(frozen=True, slots=True)
class RelationPreview:
    """Every conversation a run asks about one relation, kind by kind in the order asked,
    and the covering array of each of its questions."""

    relation: Relation
    name: str  # `Ireland ⊃ Ulster`, by name (kg.names: equal labels told apart)
    conversations: tuple[Conversation, ...]
    variants: tuple[QueryVariants, ...] | None  # None: not made (variant_rows=False)
    notes: tuple[str, ...] = ()  # kinds that could not be built for it, and why


@dataclass(slots=True)
class Preparation:
    """What `prepare` found: the resolved spec and what its run would ask."""

    spec: SessionSpec  # resolved (graph in memory) when the KG loaded, else the spec given
    summary: GraphSummary | None = None
    relations: int = 0
    counts: list[KindCount] = field(default_factory=list)
    listed: list[Relation] = field(default_factory=list)  # the first PREVIEW_RELATIONS
    listed_names: list[str] = field(default_factory=list)  # `Ireland ⊃ Ulster` each
    paths: list[tuple[str, ...]] = field(default_factory=list)  # the first PATHS_SHOWN
    preview: RelationPreview | None = None  # the first relation's
    questions: QuestionCheck | None = None  # the question check (generate.check), KONTEST's
    problems: list[Problem] = field(default_factory=list)
    model_line: str = ""  # what the model's check said (ask_model=True)

    @property
    def kg(self) -> KnowledgeGraph | None:
        """The scoped graph, None when it did not load."""
        source = self.spec.source
        return source if isinstance(source, KnowledgeGraph) else None

    @property
    def blocked(self) -> str:
        """Why a run cannot start ('' when it can): every problem, one sentence each."""
        return " ".join(problem.message for problem in self.problems)

    @property
    def calls(self) -> int:
        """Model calls of the whole run."""
        return sum(count.calls for count in self.counts)


def prepare(
    spec: SessionSpec,
    *,
    detail: bool = True,
    ask_model: bool = False,
    strength: int = 2,
    variant_rows: bool = False,
) -> Preparation:
    """Resolve `spec` and say what its run would ask and what blocks it (see the module
    docstring). Blocking: loads, scopes and builds counts; call it from a worker thread.
    The first relation's preview holds the covering array of each question with
    `variant_rows` (WordNet is read the first time: seconds); `strength` is their strength
    when the variant kind is not asked (its own options' strength when it is)."""
    preparation = Preparation(spec)
    problem = model_problem(spec.model)
    try:
        resolved = resolve_spec(spec)
    except KontestError as error:
        step: Step = "templates" if isinstance(error, TemplateError) else "graph"
        if spec.questions is not None and not isinstance(error, GraphError | TemplateError):
            step = "kinds"  # the questions file
        preparation.problems.append(Problem(step, _sentence(error), error))
        if problem is not None:
            preparation.problems.append(problem)
        return preparation
    preparation.spec = resolved
    kinds = list(resolved.kinds)
    template_ids: list[str] = []
    try:
        template_ids = _template_ids(resolved)
    except KontestError as error:
        preparation.problems.append(Problem("templates", _sentence(error), error))
    else:
        if TestKind.KONTEST in kinds and len(template_ids) < 2:
            preparation.problems.append(
                Problem(
                    "templates", "Choose at least two templates: KONTEST compares two phrasings."
                )
            )
    if not kinds and not resolved.extra_conversations:
        preparation.problems.append(
            Problem("kinds", "Tick at least one test kind or load annotated questions.")
        )
    try:
        relations = _check_relations(preparation, resolved, detail) if kinds else iter(())
        if detail and not preparation.problems:
            _describe(preparation, resolved, relations, strength, variant_rows)
    except TooManyPathsError as error:  # the explorer's words; the CLI raises the error
        preparation.problems.append(
            Problem(
                "graph",
                f"{error.what}: narrow the scope: choose a depth, or entities to keep with "
                "their subtrees.",
                error,
            )
        )
    except KontestError as error:
        preparation.problems.append(Problem("graph", _sentence(error), error))
    if problem is None and ask_model:
        problem, preparation.model_line = check_model(resolved)
    if problem is not None:
        preparation.problems.append(problem)
    return preparation


def model_problem(spec: str) -> Problem | None:
    """A model spec that does not parse or fails its provider's check (a simulated profile
    that does not exist; no network)."""
    from kontest_tui.models.specs import check_model_spec

    try:
        check_model_spec(spec)
    except KontestError as error:
        return Problem("model", _sentence(error), error)
    return None


def check_model(spec: SessionSpec) -> tuple[Problem | None, str]:
    """Whether the spec's model can run: (a problem, '') when its spec does not parse or it
    does not answer, else (None, what its check said). Blocking: a worker thread."""
    problem = model_problem(spec.model)
    if problem is not None:
        return problem, ""
    try:
        return None, check_model_now(spec)
    except KontestError as error:
        return Problem("model", f"The model does not answer: {_sentence(error)}", error), ""


def check_model_now(spec: SessionSpec) -> str:
    """Ask the spec's model whether it answers (blocking: a worker thread, not an event
    loop); what it said, or its KontestError."""
    from kontest_tui.run.session import open_session_model

    graph = spec.source if isinstance(spec.source, KnowledgeGraph) else None

    async def check() -> str:
        model = open_session_model(spec.model, graph, spec.options, spec.seed)
        try:
            return str(await model.check())
        finally:
            await model.aclose()

    return asyncio.run(check())


def preview_relation(
    spec: SessionSpec,
    relation: Relation,
    *,
    strength: int = 2,
    variant_rows: bool = True,
    names: NodeNames | None = None,
) -> RelationPreview:
    """Every conversation the run of a resolved `spec` asks about `relation` (each kind's,
    built for this relation alone), with the covering array of each of its questions
    (unless not `variant_rows`). `names`: the graph's NodeNames, when made already."""
    kg = spec.graph
    template_set = _template_set(spec)
    template_ids = _template_ids(spec)
    options = spec.kind_settings
    if any(kind in spec.kinds for kind in array_kinds()):  # the arrays it asks: its strength
        strength = options.strength
    conversations: list[Conversation] = []
    notes: list[str] = []
    for kind, info in all_kinds().items():
        if kind not in spec.kinds or info.build is None:
            continue
        try:
            conversations += build_kind_for_relations(
                kg, [relation], template_set, template_ids, kind, options
            )
        except KontestError as error:
            notes.append(f"{kind}: {_sentence(error)}")
    variants = (
        tuple(
            _query_variants(kg, relation, template, template_set, strength, options.seed)
            for template in template_set.select(template_ids or None)
        )
        if variant_rows
        else None
    )
    return RelationPreview(
        relation,
        (names or NodeNames(kg)).relation(relation),
        tuple(conversations),
        variants,
        tuple(notes),
    )


def _query_variants(
    kg: KnowledgeGraph,
    relation: Relation,
    template: Template,
    template_set: TemplateSet,
    strength: int,
    seed: int,
) -> QueryVariants:
    from kontest_tui.generate.variants import preview_variants  # reads WordNet: seconds

    try:
        question = question_text(kg, relation, template_set, template.id)
        preview = preview_variants(
            kg,
            relation,
            template,
            template_set.domain,
            strength,
            seed,
            realise=template_set.realise,
        )
    except KontestError as error:
        return QueryVariants(template.id, "", None, _sentence(error))
    return QueryVariants(template.id, question, preview)


def _check_relations(
    preparation: Preparation, spec: SessionSpec, detail: bool
) -> Iterator[Relation]:
    """An empty scope is a problem; with `detail`, the first relations are listed. The
    relations the run asks, to read on from (the first ones read again, then the rest: one
    walk)."""
    relations = _relations(spec)
    first = list(islice(relations, PREVIEW_RELATIONS if detail else 1))
    if first:
        preparation.listed = first if detail else []
        return chain(first, relations)
    kg = spec.graph
    if not kg.nodes:
        message = f"{preparation.spec.kg_name or kg.name} has no nodes: nothing to ask."
    elif len(kg.nodes) == 1 or not kg.edges:
        leaf = kg.label(next(iter(kg.nodes)))
        message = (
            f"{leaf} has nothing below it in this KG, so the scope has no relations: "
            "choose an entity above it or another KG."
            if len(kg.nodes) == 1
            else "The KG has no edges, so it has no relations to ask."
        )
    else:
        message = "The scope has no relations (each needs a parent and a child below it)."
    preparation.problems.append(Problem("graph", message))
    return iter(())


def _describe(
    preparation: Preparation,
    spec: SessionSpec,
    relations: Iterator[Relation],
    strength: int,
    variant_rows: bool,
) -> None:
    """The summary, counts per kind, paths, the question check and the first relation's
    preview, from one walk over the relations the run asks (`relations`)."""
    kg = spec.graph
    walk = _RelationWalk()
    if spec.kinds:
        check_path_count(kg, spec.depth)  # what a walk over every relation is refused for
        walk = _walk_relations(relations, keep_all=bool(_other_kinds(spec)))
        # The walk counted every relation by type unless a limit cut it short.
        counted = walk.by_type if spec.limit is None else None
        preparation.summary = describe_graph(kg, spec.depth, spec.per_path, counted)
        total = walk.total  # the first `limit`, or all of them (a sample draws from all)
        preparation.relations = total if spec.sample is None else spec.sample.size(total)
        preparation.paths = list(islice(iter_paths(kg, spec.depth, guard=False), PATHS_SHOWN))
    try:
        preparation.counts, prebuilt = _count_kinds(spec, _template_ids(spec), walk)
        if prebuilt is not None:
            preparation.spec = replace(preparation.spec, prebuilt=prebuilt)
    except KontestError as error:
        preparation.problems.append(Problem("kinds", _sentence(error), error))
        return
    empty = [count.kind for count in preparation.counts if not count.conversations]
    if empty:
        preparation.problems.append(
            Problem("kinds", f"Nothing to ask: {', '.join(empty)} gave no questions.")
        )
    if TestKind.KONTEST in spec.kinds:
        preparation.questions = _check_questions(spec, walk.checked, preparation.relations)
    names = NodeNames(kg)
    preparation.listed_names = [names.relation(relation) for relation in preparation.listed]
    if preparation.listed:
        preparation.preview = preview_relation(
            spec, preparation.listed[0], strength=strength, variant_rows=variant_rows, names=names
        )


@dataclass(slots=True)
class _RelationWalk:
    """What `prepare` reads from the relations the run asks, in one walk over them: the
    first ones (the question check's), the count of each type with one relation of it,
    and all of them when another kind is built over them."""

    checked: list[Relation] = field(default_factory=list)  # the first CHECK_RELATIONS
    by_type: Counter[str] = field(default_factory=Counter)
    one_of_type: dict[str, Relation] = field(default_factory=dict)
    every: list[Relation] = field(default_factory=list)  # only when kept

    @property
    def total(self) -> int:
        return self.by_type.total()


def _walk_relations(relations: Iterable[Relation], *, keep_all: bool) -> _RelationWalk:
    """Read the relations once (see _RelationWalk)."""
    walk = _RelationWalk()
    for relation in relations:
        if len(walk.checked) < CHECK_RELATIONS:
            walk.checked.append(relation)
        walk.by_type[relation.type] += 1
        walk.one_of_type.setdefault(relation.type, relation)
        if keep_all:
            walk.every.append(relation)
    return walk


def check_spec_questions(
    spec: SessionSpec, *, limit: int = CHECK_RELATIONS, total: int = 0
) -> QuestionCheck:
    """The question check (generate.check) over the KONTEST questions the run of `spec`
    asks, of its first `limit` relations (`total`: the relations of the whole run, said
    when more than were checked). Resolves the spec; blocking (a worker thread)."""
    resolved = resolve_spec(spec)
    return _check_questions(resolved, islice(_relations(resolved), limit), total)


def _check_questions(spec: SessionSpec, relations: Iterable[Relation], total: int) -> QuestionCheck:
    """The question check over the KONTEST questions of these relations of a resolved spec."""
    from kontest_tui.generate.check import check_questions

    return check_questions(
        spec.graph, relations, _template_set(spec), _template_ids(spec), total=total
    )


def _count_kinds(
    spec: SessionSpec, template_ids: Sequence[str], walk: _RelationWalk
) -> tuple[list[KindCount], PrebuiltKinds | None]:
    """Conversations and calls per asked kind: KONTEST's from one relation of each type
    (every relation of a type gets the same conversations), the others built in full over
    the walk's relations (and returned, for the run to store as they are)."""
    counts: list[KindCount] = []
    template_set = _template_set(spec)
    if TestKind.KONTEST in spec.kinds:
        conversations = calls = 0
        for relation_type, relation in walk.one_of_type.items():
            built = build_conversations(spec.graph, [relation], template_set, template_ids)
            conversations += len(built) * walk.by_type[relation_type]
            calls += sum(len(c.turns) for c in built) * walk.by_type[relation_type]
        counts.append(KindCount(TestKind.KONTEST.value, conversations, calls))
    others = _other_kinds(spec)
    prebuilt: PrebuiltKinds | None = None
    if others:
        # Built once, over the relations alone (no kind reads KONTEST's conversations), and
        # kept with the spec: the run stores them instead of building them a second time.
        prebuilt = build_other_kinds(
            spec.graph, walk.every, template_set, template_ids, others, spec.kind_settings
        )
        for kind in prebuilt.kinds:
            built = [c for c in prebuilt.conversations if c.test_kind is kind]
            counts.append(KindCount(str(kind), len(built), sum(len(c.turns) for c in built)))
    if spec.extra_conversations:
        extra = spec.extra_conversations
        counts.append(
            KindCount(str(extra[0].test_kind), len(extra), sum(len(c.turns) for c in extra))
        )
    # a sample is drawn when the session is stored: its relations are not these
    return counts, prebuilt if spec.sample is None else None


def _other_kinds(spec: SessionSpec) -> list[str]:
    """The asked kinds other than KONTEST that are built from the KG, in registry order."""
    return [
        kind
        for kind, info in all_kinds().items()
        if kind in spec.kinds and not info.is_core and info.build is not None
    ]


def _relations(spec: SessionSpec) -> Iterator[Relation]:
    """The relations the run asks, in order (the first `limit`; a sample draws from all),
    made as they are read. Not guarded: a KG of too many paths (kg.paths.MAX_PATHS) is
    refused before the walk reads past the first few (_describe)."""
    relations = iter_relations(
        spec.graph,
        spec.depth,
        per_path=spec.per_path,
        template_set=_template_set(spec),
        guard=False,
    )
    return islice(relations, spec.limit)


def _template_set(spec: SessionSpec) -> TemplateSet:
    template_set = spec.template_set
    assert isinstance(template_set, TemplateSet), "resolve_spec gives a TemplateSet"
    return template_set


def _template_ids(spec: SessionSpec) -> list[str]:
    """The ids of the templates the run uses (the set's first two by default); TemplateError
    for an id the set does not have."""
    return [template.id for template in _template_set(spec).select(spec.template_ids)]


def _sentence(error: KontestError) -> str:
    """An error's message on one line, with a full stop (its words as the engine said them:
    it may start with a file name)."""
    text = " ".join(str(error).split()) or error.title
    return text if text.endswith((".", "!", "?")) else text + "."
