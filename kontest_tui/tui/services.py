"""The explorer's one door to the engine: thin calls by planned name, imported lazily.

Screens call these functions from workers; nothing here computes a metric. When an engine
module has not landed (or lacks a function), `FeatureUnavailable` says so in one line and
the screen shows a "not available yet" placeholder instead of made-up data.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation, Verdict
from kontest_tui.errors import KontestError
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.report import compare
from kontest_tui.report.compare import (
    ComparableSessions,
)
from kontest_tui.run.api import SessionSpec, load_session, start_session


class FeatureUnavailable(KontestError):
    """An engine function the explorer needs has not landed in this build."""

    title = "Not available yet"


def find_engine(module: str, name: str) -> Callable[..., Any]:
    """`kontest_tui.<module>.<name>`, or FeatureUnavailable naming what is missing."""
    try:
        loaded = importlib.import_module(f"kontest_tui.{module}")
    except ImportError as error:
        raise FeatureUnavailable(f"{module}.{name} is not available yet ({error})") from None
    found = getattr(loaded, name, None)
    if found is None:
        raise FeatureUnavailable(f"{module}.{name} is not available yet")
    return found


def has_engine(module: str, name: str) -> bool:
    """Whether `kontest_tui.<module>.<name>` exists (for placeholders and palette hints)."""
    try:
        find_engine(module, name)
    except FeatureUnavailable:
        return False
    return True


# -- knowledge graphs -------------------------------------------------------------------


def list_samples() -> list[str]:
    return list(find_engine("kg.io", "list_samples")())


def load_graph(source: str | Path) -> KnowledgeGraph:
    return find_engine("kg.io", "load_graph")(source)


def describe_graph(kg: KnowledgeGraph, depth: int | None = None, per_path: bool = False) -> Any:
    return find_engine("generate.summary", "describe_graph")(kg, depth=depth, per_path=per_path)


def search_entities(text: str, online: bool = False, limit: int = 10) -> list[Any]:
    return list(find_engine("kg.search", "search_entities")(text, online=online, limit=limit))


def list_domains() -> list[str]:
    """Wikidata build domains (assets/domains/*.toml and the user's)."""
    return list(find_engine("kg.domains", "list_domains")())


def build_wikidata_graph(
    domain: str, seeds: Sequence[str], depth: int, progress: Callable[[Any], None]
) -> KnowledgeGraph:
    """Build a KG from Wikidata for `seeds` (QIDs) down to `depth`, reporting progress."""
    build = find_engine("kg.wikidata", "build_graph")
    return build(domain, list(seeds), depth, progress=progress)


def find_paths(kg: KnowledgeGraph, depth: int | None = None) -> list[tuple[str, ...]]:
    return list(find_engine("kg.paths", "find_paths")(kg, depth=depth))


def extract_relations(
    kg: KnowledgeGraph, depth: int | None = None, per_path: bool = False
) -> list[Relation]:
    return list(
        find_engine("generate.relations", "extract_relations")(kg, depth=depth, per_path=per_path)
    )


# -- templates and conversations --------------------------------------------------------


def load_template_set(domain_or_path: str | Path) -> Any:
    return find_engine("generate.templates", "load_template_set")(domain_or_path)


def fill_template(text: str, parent_label: str, child_label: str) -> str:
    return find_engine("generate.templates", "fill_template")(text, parent_label, child_label)


def build_conversations(
    kg: KnowledgeGraph,
    relations: Sequence[Relation],
    template_set: Any,
    template_ids: Sequence[str] | None = None,
) -> list[Conversation]:
    build = find_engine("generate.conversations", "build_conversations")
    return list(build(kg, list(relations), template_set, template_ids=template_ids))


@dataclass(frozen=True)
class KindChoice:
    """One test kind the wizard offers (kinds.registry.KINDS, those built from a KG)."""

    value: str  # TestKind value: kontest | variant | factcheck | logic
    title: str
    description: str
    oracles: tuple[str, ...]


def list_test_kinds() -> list[KindChoice]:
    """The test kinds a session can ask from a KG, in registry order (annotated questions,
    read from a file, are left to `kontest run --questions`)."""
    from kontest_tui.kinds.registry import KINDS

    return [
        KindChoice(kind.value, info.title, info.description, tuple(info.oracles))
        for kind, info in KINDS.items()
        if info.build is not None
    ]


def make_kind_options(
    strength: int = 2,
    postfix: bool = False,
    seed: int = 0,
    variant_limit: int | None = None,
    question_types: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
) -> Any:
    """The engine's KindOptions for what the wizard lets you choose (None: all / no limit)."""
    return find_engine("kinds.registry", "KindOptions")(
        seed=seed,
        strength=strength,
        variant_limit=variant_limit,
        postfix=postfix,
        question_types=tuple(question_types) if question_types else None,
        rules=tuple(rules) if rules else None,
    )


def list_question_types() -> tuple[str, ...]:
    """FactChecker's question types (probes.templates.QUESTION_TYPES), in its order."""
    return tuple(find_engine("probes.templates", "QUESTION_TYPES"))  # type: ignore[arg-type]


def list_logic_rules() -> tuple[str, ...]:
    """The logic rules (probes.templates.LOGIC_RULES), in their order."""
    return tuple(find_engine("probes.templates", "LOGIC_RULES"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class AnnotatedQuestions:
    """An annotated-questions file read for a session: its variant conversations and the
    lines skipped (`FILE:LINE: reason`, oracles.annotation)."""

    path: str
    conversations: list[Conversation]
    problems: list[str]

    @property
    def questions(self) -> int:
        """How many questions were read (each has relation id `qLINE`)."""
        return len({conversation.relation_id for conversation in self.conversations})


def load_annotated_questions(path: str | Path, options: Any = None) -> AnnotatedQuestions:
    """Variant conversations of a questions JSONL file (oracles.annotation), built with the
    variant options (strength, variant limit, postfix) as `kontest run --questions` does.
    InvalidInputError when the file is unreadable or holds no usable question."""
    build = find_engine("kinds.registry", "build_annotated_questions")
    options = options if options is not None else make_kind_options()
    conversations, problems = build(path, options)
    return AnnotatedQuestions(str(path), list(conversations), list(problems))


def build_kind_conversations(
    kg: KnowledgeGraph,
    relations: Sequence[Relation],
    template_set: Any,
    template_ids: Sequence[str],
    kind: str,
    options: Any = None,
) -> list[Conversation]:
    """The conversations of one test kind for these relations and templates
    (kinds.registry.build_kind_conversations over the KONTEST suite)."""
    from kontest_tui.domain.records import TestKind

    kontest = build_conversations(kg, relations, template_set, template_ids)
    if kind == TestKind.KONTEST.value:
        return kontest
    suite_class = find_engine("generate.conversations", "Suite")
    chosen_ids = tuple(template.id for template in template_set.select(list(template_ids)))
    suite = suite_class(list(relations), kontest, template_set, chosen_ids)
    build = find_engine("kinds.registry", "build_kind_conversations")
    return list(build(suite, kg, [TestKind(kind)], options))


def template_ids_of(template_set: Any) -> list[str]:
    """The template ids a TemplateSet offers, whatever its exact shape."""
    for attribute in ("template_ids", "ids"):
        value = getattr(template_set, attribute, None)
        if value is not None:
            return list(value() if callable(value) else value)
    templates = getattr(template_set, "templates", None)
    if isinstance(templates, Mapping):
        return list(templates)
    if templates is not None:
        return [getattr(template, "id", str(template)) for template in templates]
    return []


# -- models -----------------------------------------------------------------------------


def open_model(spec: str, kg: KnowledgeGraph | None = None) -> Any:
    return find_engine("models.specs", "open_model")(spec, kg=kg)


def list_models(spec: str) -> list[str]:
    return list(find_engine("models.specs", "list_models")(spec))


def list_sim_profiles() -> list[str]:
    """Simulated-model profiles: the engine's list, else the profile files in assets/models."""
    try:
        return list(find_engine("models.sim", "list_profiles")())
    except FeatureUnavailable:
        from kontest_tui.resources import asset_path

        names = sorted(path.stem for path in asset_path("models").glob("*.toml"))
        return names or ["default"]


# -- answers, evaluation, store ---------------------------------------------------------

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """Model output made safe for display: the engine's clean_text, else escapes removed."""
    try:
        return find_engine("domain.answers", "clean_text")(text)
    except FeatureUnavailable:
        return _CONTROLS.sub("", _ESCAPES.sub("", text))


def parse_answer(text: str) -> Answer:
    return find_engine("domain.answers", "parse_answer")(text)


def evaluate(
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    answers: Mapping[AnswerKey, Answer],
    session: str | None = None,
    model: str | None = None,
    raw_answers: Mapping[AnswerKey, str] | None = None,
) -> Any:
    """Every oracle over the answers so far (kinds.evaluate.evaluate_all): the KONTEST ones
    and each other test kind's judge, which reads the raw replies (WH and multiple choice)."""
    run = find_engine("kinds.evaluate", "evaluate_all")
    return run(
        list(relations),
        list(conversations),
        dict(answers),
        dict(raw_answers or {}),
        session=session,
        model=model,
    )


_STORE_OPENING = threading.Lock()


def open_store(path: str | Path | None) -> Any:
    """A Store on `path` (the default database when None). Open it in the thread using it.

    Opening is serialised: two workers creating the schema of a new file at once would
    collide ("table sessions already exists").
    """
    from kontest_tui.paths import default_db_path

    store_class = find_engine("store", "Store")
    with _STORE_OPENING:
        return store_class(Path(path) if path else default_db_path())


@dataclass
class SessionSummary:
    """One row of the start screen's recent-sessions table."""

    id: str
    model: str
    kg: str
    date: str
    status: str
    error_rate: float | None
    kinds: tuple[str, ...] = ("kontest",)  # the test kinds the session asked


def summarize_session_row(row: Mapping[str, Any]) -> SessionSummary:
    """A store sessions row (a dict) as the start screen shows it."""
    rate = row.get("oracle_error_rate", row.get("error_rate"))
    return SessionSummary(
        id=str(row.get("id", "")),
        model=str(row.get("model") or row.get("model_spec") or ""),
        kg=str(row.get("kg") or row.get("kg_name") or ""),
        date=str(row.get("created") or row.get("updated") or "")[:16].replace("T", " "),
        status=str(row.get("status") or ""),
        error_rate=float(rate) if isinstance(rate, int | float) else None,
    )


def list_sessions(db: str | Path | None, limit: int = 30) -> list[SessionSummary]:
    """Recent sessions, newest first, each with its error rate from run.session's evaluation."""
    evaluate_session = find_engine("run.session", "evaluate_session")
    store = open_store(db)
    try:
        rows = list(store.iter_sessions())[-limit:]
        summaries: list[SessionSummary] = []
        for row in reversed(rows):
            summary = summarize_session_row(row)
            try:
                summary.error_rate = float(evaluate_session(store, summary.id).error_rate)
            except KontestError:
                summary.error_rate = None
            summary.kinds = session_kinds_of(store, summary.id)
            summaries.append(summary)
        return summaries
    finally:
        store.close()


def session_kinds_of(store: Any, session_id: str) -> tuple[str, ...]:
    """The test kinds a stored session asked (run.session.session_kinds; KONTEST when the
    session predates test kinds or cannot be read)."""
    try:
        kinds, _options, _problems = find_engine("run.session", "session_kinds")(
            store, session_id
        )
    except KontestError:
        return ("kontest",)
    return tuple(str(kind.value) for kind in kinds) or ("kontest",)


# -- what the screens pass around -------------------------------------------------------


@dataclass
class SessionPlan:
    """Everything chosen in the wizard: the KG, its relations and conversations, the model."""

    kg: KnowledgeGraph
    kg_source: str
    depth: int | None
    relations: list[Relation]
    conversations: list[Conversation]
    template_set: Any
    template_ids: list[str]
    model_spec: str
    per_path: bool = False
    kinds: tuple[str, ...] = ("kontest",)  # test kinds asked (kinds.registry), registry order
    kind_options: Any = None  # kinds.registry.KindOptions the kinds were built with
    problems: list[str] = field(default_factory=list)  # lines skipped in a questions file


@dataclass
class SessionResult:
    """A finished (or stopped) session: its plan, the answers so far and the evaluation."""

    plan: SessionPlan
    raw: dict[AnswerKey, str] = field(default_factory=dict)
    answers: dict[AnswerKey, Answer] = field(default_factory=dict)
    evaluation: Any = None
    session_id: str | None = None
    # relation id -> its conversations, grouped on first use (services.conversation_views)
    conversations_by_relation: dict[str, list[Conversation]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def relations(self) -> list[Relation]:
        """The relations asked (what report.compare reads, with `evaluation`)."""
        return self.plan.relations


def verdicts_of(evaluation: Any) -> list[Verdict]:
    """The verdicts an Evaluation holds."""
    return list(getattr(evaluation, "verdicts", []) or [])


def report_of(evaluation: Any) -> dict[str, Any]:
    """The Report JSON (DESIGN.md) of an Evaluation, as a dict."""
    to_json = getattr(evaluation, "to_json", None)
    if to_json is None:
        return {}
    data = to_json()
    if isinstance(data, str):
        import json

        data = json.loads(data)
    return dict(data)


# -- per-relation views for the results screen (grouping only; verdicts come from oracles) --


@dataclass
class TurnView:
    """One asked question with the model's raw answer and its parsed value."""

    question: str
    raw: str | None
    answer: Answer | None


@dataclass
class ConversationView:
    conversation: Conversation
    turns: list[TurnView]


METAMORPHIC_ORACLES = ("atomic", "sequential_intra", "sequential_inter")
KIND_ORACLES = ("variant", "factcheck", "logic", "annotation")  # the other test kinds' oracles


def is_kontest(conversation: Conversation) -> bool:
    """Whether a conversation is a KONTEST paraphrase test (not another test kind's)."""
    return str(conversation.test_kind) == "kontest"


def kind_section_tables(report: Mapping[str, Any]) -> list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]]:
    """(title, header, rows) of a report's other-kind sections, as `kontest report` prints them."""
    return find_engine("report.render", "section_tables")(report)


def conversation_label(conversation: Conversation) -> str:
    """How views name a conversation: `Q1 atomic`, `A sequential` for KONTEST, the kind
    then its own label for the others (`factcheck wh`, `logic negation`, `variant t1 v3`)."""
    if is_kontest(conversation):
        return f"{conversation.label} {conversation.kind}"
    return f"{conversation.test_kind} {conversation.label}"


@dataclass
class RelationView:
    """A relation with its atomic answer per template and its error verdicts."""

    relation: Relation
    answers: dict[str, Answer | None]
    conversations: list[ConversationView]
    errors: list[Verdict]

    @property
    def metamorphic_errors(self) -> list[Verdict]:
        return [verdict for verdict in self.errors if verdict.oracle in METAMORPHIC_ORACLES]

    @property
    def kind_errors(self) -> list[Verdict]:
        """Errors found by the other test kinds (variants, FactChecker, logic rules)."""
        return [verdict for verdict in self.errors if verdict.oracle in KIND_ORACLES]

    @property
    def ontological_errors(self) -> list[Verdict]:
        return [verdict for verdict in self.errors if verdict.oracle == "ontological"]


def build_relation_views(result: SessionResult) -> dict[str, RelationView]:
    """Each relation with its atomic answer per template and its error verdicts, by id.

    Conversations are left empty here: `conversation_views` fills them for the relations a
    detail pane shows (building a view of every turn up front cost ~20 ms for 12,000
    answers on each screen open).
    """
    views = {
        relation.id: RelationView(relation=relation, answers={}, conversations=[], errors=[])
        for relation in result.plan.relations
    }
    atomic_answers = getattr(result.evaluation, "atomic_answers", None)
    if atomic_answers is not None:
        for (relation_id, template_id), answer in atomic_answers().items():
            view = views.get(relation_id)
            if view is not None:
                view.answers[template_id] = answer
    else:  # no evaluation yet: read the atomic answers from the conversations
        for conversation in result.plan.conversations:
            view = views.get(conversation.relation_id)
            if (
                view is not None
                and conversation.kind == "atomic"
                and conversation.turns
                and is_kontest(conversation)
            ):
                view.answers[conversation.turns[0].template_id] = result.answers.get(
                    (conversation.id, 0)
                )
    for verdict in verdicts_of(result.evaluation):
        if verdict.error and verdict.relation_id in views:
            views[verdict.relation_id].errors.append(verdict)
    return views


def conversation_views(result: SessionResult, relation_id: str) -> list[ConversationView]:
    """Every conversation about one relation, each turn with its raw and parsed answer
    (the session's conversations are grouped by relation once, on the first call)."""
    if result.conversations_by_relation is None:
        grouped: dict[str, list[Conversation]] = {}
        for conversation in result.plan.conversations:
            grouped.setdefault(conversation.relation_id, []).append(conversation)
        result.conversations_by_relation = grouped
    return [
        ConversationView(
            conversation=conversation,
            turns=[
                TurnView(
                    question=query.text,
                    raw=result.raw.get((conversation.id, index)),
                    answer=result.answers.get((conversation.id, index)),
                )
                for index, query in enumerate(conversation.turns)
            ],
        )
        for conversation in result.conversations_by_relation.get(relation_id, [])
    ]


def fill_conversation_views(result: SessionResult, views: Sequence[RelationView]) -> None:
    """Fill the conversations of these views (once each) for a detail pane."""
    for view in views:
        if not view.conversations:
            view.conversations = conversation_views(result, view.relation.id)


# -- other stored sessions on the same KG (compare and ensemble) -----------------------


def find_comparable_sessions(
    db: str | Path | None,
    kg_names: Sequence[str],
    relation_ids: Collection[str],
    exclude: str | None = None,
) -> ComparableSessions:
    """Stored sessions worth comparing with the current one (report.compare)."""
    store = open_store(db)
    try:
        return compare.find_comparable_sessions(store, kg_names, relation_ids, exclude)
    finally:
        store.close()


def describe_ensemble(results: Sequence[SessionResult], k: int = 5) -> str:
    """The weighted ensemble across sessions on one KG (cross-validated over relations, as
    `kontest ensemble` does), rendered by the report module as text."""
    cross_validate = find_engine("mitigate.ensemble", "cross_validate")
    render_ensemble = find_engine("report.render", "render_ensemble")
    outcome = cross_validate([result.evaluation for result in results], k=k)
    return str(render_ensemble(outcome, "text"))


# -- running ----------------------------------------------------------------------------


class RunControl:
    """Pause / resume / cancel for a run that executes in another thread's event loop.

    The executor is attached from the run thread; every control call is handed to that
    loop with `call_soon_threadsafe`, so the UI thread never touches it directly.
    """

    def __init__(self) -> None:
        import threading

        self.executor: Any = None
        self.loop: Any = None
        self._paused = False
        self._cancelled = False
        self._lock = threading.Lock()

    def attach(self, executor: Any) -> None:
        """Called in the run's loop before it starts."""
        import asyncio

        with self._lock:
            self.executor = executor
            self.loop = asyncio.get_running_loop()
            if self._paused:
                executor.pause()
            if self._cancelled:
                executor.cancel()

    def _forward(self, method: str) -> None:
        with self._lock:
            if self.executor is not None and self.loop is not None and not self.loop.is_closed():
                self.loop.call_soon_threadsafe(getattr(self.executor, method))

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def pause(self) -> None:
        self._paused = True
        self._forward("pause")

    def resume(self) -> None:
        self._paused = False
        self._forward("resume")

    def cancel(self) -> None:
        self._cancelled = True
        self._forward("cancel")


TokenHandler = Callable[[str, int, str], None]
ResponseHandler = Callable[[Any], None]


@dataclass
class RunOutcome:
    """How a run ended: the stored session (if any), cancelled or not, its evaluation."""

    session_id: str | None
    cancelled: bool
    evaluation: Any = None


def chat_options_for(plan: SessionPlan) -> Any:
    """The session's generation options: the template set's prompt and temperature."""
    from kontest_tui.models.base import ChatOptions

    return ChatOptions(
        temperature=float(getattr(plan.template_set, "temperature", 0.0)),
        system_prompt=getattr(plan.template_set, "system_prompt", None),
    )


async def run_plan(
    plan: SessionPlan,
    *,
    on_token: TokenHandler,
    on_response: ResponseHandler,
    control: RunControl,
    db: str | Path | None = None,
    store_session: bool = True,
) -> RunOutcome:
    """Ask the model every conversation of `plan`: a stored session through run.session
    (when `store_session`), else the executor alone. Call it in the loop of a worker thread."""
    events_class = find_engine("run.executor", "ExecutorEvents")
    events = events_class(on_token=on_token, on_response=on_response)
    if store_session:
        spec = SessionSpec(
            plan.kg,
            model=plan.model_spec,
            kg_name=plan.kg_source,
            depth=plan.depth,
            per_path=plan.per_path,
            template_set=plan.template_set,
            template_ids=plan.template_ids,
            options=chat_options_for(plan),
            relations=plan.relations,
            # Every kind's conversations (annotated questions too) are in the plan
            # already and are stored as they are; the session's kinds are read
            # from them, the questions file's skipped lines kept beside them.
            conversations=plan.conversations,
            kind_options=plan.kind_options,
            problems=list(plan.problems),
        )
        store = open_store(db)
        try:
            outcome = await start_session(store, spec, events=events, on_executor=control.attach)
        finally:
            store.close()
        return RunOutcome(
            session_id=outcome.session_id,
            cancelled=outcome.status == "cancelled",
            evaluation=outcome.evaluation,
        )
    model = open_model(plan.model_spec, plan.kg)
    try:
        await model.check()
        executor_class = find_engine("run.executor", "Executor")
        executor = executor_class(model, chat_options_for(plan), events=events)
        control.attach(executor)
        result = await executor.run(plan.conversations)
        return RunOutcome(session_id=None, cancelled=bool(result.cancelled))
    finally:
        await model.aclose()


async def ask_extra_template(
    result: SessionResult, template: Any, db: str | Path | None
) -> SessionResult:
    """Ask only `template`'s atomic questions against the session's model, then re-evaluate
    the session with them so its gap sits next to the other templates'."""
    import asyncio
    import dataclasses

    plan = result.plan
    extended_set = dataclasses.replace(
        plan.template_set, templates=(*plan.template_set.templates, template)
    )
    new_conversations = await asyncio.to_thread(
        build_conversations, plan.kg, plan.relations, extended_set, [template.id]
    )
    extra_plan = dataclasses.replace(
        plan, conversations=new_conversations, template_set=extended_set
    )
    raw: dict[AnswerKey, str] = {}
    answers: dict[AnswerKey, Answer] = {}

    def keep(response: Any) -> None:
        raw[(response.conversation_id, response.turn)] = response.raw
        answers[(response.conversation_id, response.turn)] = response.answer

    await run_plan(
        extra_plan,
        on_token=lambda *_: None,
        on_response=keep,
        control=RunControl(),
        db=db,
        store_session=False,
    )
    merged_plan = dataclasses.replace(
        plan,
        conversations=[*plan.conversations, *new_conversations],
        template_set=extended_set,
        template_ids=[*plan.template_ids, template.id],
    )
    merged = SessionResult(
        plan=merged_plan,
        raw={**result.raw, **raw},
        answers={**result.answers, **answers},
        session_id=result.session_id,
    )
    merged.evaluation = await asyncio.to_thread(
        evaluate,
        merged_plan.relations,
        merged_plan.conversations,
        merged.answers,
        result.session_id,
        plan.model_spec,
        merged.raw,
    )
    return merged


def load_session_result(db: str | Path | None, session_id: str) -> SessionResult:
    """A stored session as the results screen needs it (plan, raw answers, evaluation)."""
    store = open_store(db)
    try:
        stored = load_session(store, session_id)
    finally:
        store.close()
    plan = SessionPlan(
        kg=stored.kg,
        kg_source=stored.kg_name,
        depth=stored.depth,
        relations=stored.relations,
        conversations=stored.conversations,
        template_set=stored.template_set,
        template_ids=stored.template_ids,
        model_spec=stored.model,
        per_path=stored.per_path,
        kinds=tuple(kind.value for kind in stored.kinds),
        kind_options=stored.kind_options,
    )
    return SessionResult(
        plan=plan,
        raw=stored.raw,
        answers=stored.answers,
        evaluation=stored.evaluation,
        session_id=stored.id,
    )


def save_user_template_set(template_set: Any) -> Path:
    """Write `template_set` under the user config dir (it then replaces the built-in set),
    through the engine's validated writer (generate.templates.save_template_set)."""
    from kontest_tui.generate.templates import save_template_set

    return save_template_set(template_set)


@dataclass
class VariantPreview:
    """A covering array for one question: its words (parameters) and the rows' values."""

    parameters: list[str]
    rows: list[list[str]]  # one value per parameter; row 0 is the original question
    sentences: list[str]
    levels: tuple[int, ...]


def preview_variants(
    kg: KnowledgeGraph,
    relation: Relation,
    template: Any,
    domain: str,
    strength: int = 2,
    seed: int = 0,
) -> VariantPreview:
    """The input-parameter model of one filled template and its t-way covering array."""
    ipm = find_engine("generate.ipm", "ipm_for_query")(kg, relation, template, domain)
    array = find_engine("generate.covering", "build_covering_array")(ipm.levels, strength, seed)
    rows = [
        [parameter.values[index] for parameter, index in zip(ipm.parameters, row, strict=True)]
        for row in array.rows
    ]
    return VariantPreview(
        parameters=[parameter.word for parameter in ipm.parameters],
        rows=rows,
        sentences=[ipm.render(values) for values in rows],
        levels=tuple(ipm.levels),
    )


def variant_array_size(
    kg: KnowledgeGraph, relation: Relation, template: Any, domain: str, strength: int = 2
) -> int:
    """Rows of the covering array for one question's variants."""
    return len(preview_variants(kg, relation, template, domain, strength).rows)


def pin_synonym(domain: str, word: str, value: str) -> Path:
    return Path(find_engine("generate.synonyms", "pin_value")(domain, word, value))


def ban_synonym(domain: str, word: str, value: str) -> Path:
    return Path(find_engine("generate.synonyms", "ban_value")(domain, word, value))
