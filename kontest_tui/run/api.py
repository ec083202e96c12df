"""The engine's session API, one for every front end (the CLI, the explorer, Python callers).

A `SessionSpec` says what to ask: the KG (already scoped to the chosen entities), the
templates, the test kinds and their options, the model, the chat and run options.
`start_session` checks the model, stores the session and runs it; `resume_session` goes on
with a stored one; `load_session` reads one back with its answers and evaluation. They chain
the steps of run.session (create, run, evaluate) so no front end strings them together itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Relation,
    Response,
    TestKind,
)
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import build_conversations
from kontest_tui.generate.sample import SampleSpec
from kontest_tui.generate.templates import Template, TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds.registry import KindOptions
from kontest_tui.models.base import ChatModel, ChatOptions
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.run.executor import Executor, ExecutorConfig, ExecutorEvents
from kontest_tui.run.session import (
    SessionOutcome,
    create_session,
    evaluate_session,
    open_session_model,
    run_session,
    session_graph,
    session_kinds,
    session_report,
)
from kontest_tui.store.database import Store
from kontest_tui.store.records import template_set_from_dict, template_set_to_dict

__all__ = [
    "SessionOutcome",
    "SessionSpec",
    "StoredSession",
    "add_template",
    "extend_session",
    "load_session",
    "resume_session",
    "session_report",
    "start_session",
]


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """Everything a new session needs. Defaults are `kontest run`'s."""

    kg: KnowledgeGraph  # the graph to test, already scoped (kg.scope.scope_graph)
    model: str = "sim"  # a model spec (models.specs); stored as the opened model names itself
    kg_name: str | None = None  # how the session names its KG (file or sample); default kg.name
    depth: int | None = None  # longest path followed (None: every path)
    per_path: bool = False  # count every pair on every path, as the paper's tables do
    template_set: TemplateSet | None = None  # default: the KG domain's set
    template_ids: Sequence[str] | None = None  # default: the set's first two
    kinds: Sequence[TestKind] = (TestKind.KONTEST,)  # test kinds built from the KG
    kind_options: KindOptions | None = None  # default: KindOptions(seed=seed)
    options: ChatOptions | None = None  # default: the template set's prompt and temperature
    seed: int = 0  # seeds the simulated model, the kinds and the options
    limit: int | None = None  # only the first N relations
    sample: SampleSpec | None = None  # a stratified random sample of the relations instead
    # Relations and conversations built already (the explorer's preview); stored as given.
    relations: Sequence[Relation] | None = None
    conversations: Sequence[Conversation] | None = None
    # Conversations added as given (annotated questions) and the lines their file skipped.
    extra_conversations: Sequence[Conversation] = ()
    problems: Sequence[str] = ()
    config: ExecutorConfig | None = None  # run options: concurrency, retries, rate, cache


@dataclass(slots=True)
class StoredSession:
    """A stored session read back: what it asked, the answers so far, their evaluation."""

    id: str
    status: str
    model: str
    kg: KnowledgeGraph
    kg_name: str
    depth: int | None
    per_path: bool
    template_set: TemplateSet | None  # None when the stored snapshot cannot be read
    template_ids: list[str]
    relations: list[Relation]
    conversations: list[Conversation]
    kinds: list[TestKind]
    kind_options: KindOptions
    problems: list[str]
    responses: dict[AnswerKey, Response]
    evaluation: Evaluation
    seed: int = 0

    @property
    def raw(self) -> dict[AnswerKey, str]:
        """The model's reply text per turn."""
        return {key: response.raw for key, response in self.responses.items()}

    @property
    def answers(self) -> dict[AnswerKey, Answer]:
        """The parsed answer per answered turn (a failed turn, an error row, is no answer)."""
        return {
            key: response.answer
            for key, response in self.responses.items()
            if response.error is None
        }


def create_spec_session(store: Store, spec: SessionSpec, model_spec: str | None = None) -> str:
    """Store the session `spec` describes (nothing is asked); return its id."""
    return create_session(
        store,
        spec.kg,
        model_spec or spec.model,
        kg_name=spec.kg_name,
        depth=spec.depth,
        per_path=spec.per_path,
        template_set=spec.template_set,
        template_ids=spec.template_ids,
        options=spec.options,
        seed=spec.seed,
        limit=spec.limit,
        sample=spec.sample,
        relations=spec.relations,
        conversations=spec.conversations,
        kinds=spec.kinds,
        kind_options=spec.kind_options,
        extra_conversations=spec.extra_conversations,
        problems=spec.problems,
    )


async def start_session(
    store: Store,
    spec: SessionSpec,
    *,
    events: ExecutorEvents | None = None,
    on_created: Callable[[str], None] | None = None,
    on_executor: Callable[[Executor], None] | None = None,
    stream: bool = True,
) -> SessionOutcome:
    """Check the model (an unreachable one fails here, before anything is stored), store the
    session, ask every turn and evaluate. `on_created` gets the new id before the first
    question; `on_executor` the executor (pause / resume / cancel); `stream=False`: never in
    chunks (run.session.run_session), so the evaluation keeps its verdict list."""
    model = open_session_model(spec.model, spec.kg, spec.options, spec.seed)
    return await _run(
        store,
        model,
        lambda: create_spec_session(store, spec, model.spec),
        config=spec.config,
        events=events,
        on_created=on_created,
        on_executor=on_executor,
        stream=stream,
    )


async def resume_session(
    store: Store,
    session_id: str | None = None,
    *,
    model: str | None = None,
    retry_errors: bool = False,
    config: ExecutorConfig | None = None,
    events: ExecutorEvents | None = None,
    on_created: Callable[[str], None] | None = None,
    on_executor: Callable[[Executor], None] | None = None,
    stream: bool = True,
) -> SessionOutcome:
    """Go on with a stored session (the latest unfinished one when `session_id` is None):
    ask the turns without an answer, failed ones again (run.session.run_session), with its
    stored model unless `model` names another. `retry_errors` lets a session be taken when
    no id is given even if it is done; `stream` as for start_session."""
    session_id = store.resolve_session(session_id, unfinished=not retry_errors)
    row = store.get_session(session_id)
    if row["status"] == "done" and not row["failed"]:
        raise InvalidInputError(f"session {session_id} is already done")
    chat = open_session_model(
        model or row["model"], session_graph(store, session_id), seed=row["seed"]
    )
    resumed: str = session_id
    return await _run(
        store,
        chat,
        lambda: resumed,
        config=config,
        events=events,
        on_created=on_created,
        on_executor=on_executor,
        stream=stream,
    )


def add_template(store: Store, session_id: str, template: Template) -> list[Conversation]:
    """Add `template` to a stored session: its atomic question for every relation of the
    session is stored (asked by the next resume), and the session's template set and ids
    gain it, so its gap, the ensemble and the report include it. A template id the session
    already has is refused (save an edited template under a new id)."""
    row = store.get_session(session_id)
    template_set = template_set_from_dict(row["templates_json"], f"session {session_id}")
    if template.id in template_set.ids:
        raise InvalidInputError(
            f"session {session_id} already has a template {template.id}; give it a new id"
        )
    extended = replace(template_set, templates=(*template_set.templates, template))
    template_ids = [*(row.get("template_ids") or []), template.id]
    relations = [r for r in store.load_relations(session_id) if r.type in template.texts]
    if not relations:
        raise InvalidInputError(
            f"template {template.id} has no text for the relation types of session {session_id}"
        )
    atomic = build_conversations(
        session_graph(store, session_id), relations, extended, [template.id]
    )
    label = f"Q{len(template_ids)}"  # Q1, Q2 are the first templates' atomic questions
    conversations = [replace(conversation, label=label) for conversation in atomic]
    store.add_conversations(
        session_id,
        conversations,
        templates_json=template_set_to_dict(extended),
        template_ids=template_ids,
    )
    return conversations


async def extend_session(
    store: Store,
    session_id: str,
    template: Template,
    *,
    model: str | None = None,
    config: ExecutorConfig | None = None,
    events: ExecutorEvents | None = None,
    on_executor: Callable[[Executor], None] | None = None,
) -> SessionOutcome:
    """Ask a stored session one more template (add_template, then the resume asks only the
    new turns) and evaluate the whole session again."""
    add_template(store, session_id, template)
    return await resume_session(
        store, session_id, model=model, config=config, events=events, on_executor=on_executor
    )


async def _run(
    store: Store,
    model: ChatModel,
    prepare: Callable[[], str],
    *,
    config: ExecutorConfig | None,
    events: ExecutorEvents | None,
    on_created: Callable[[str], None] | None,
    on_executor: Callable[[Executor], None] | None,
    stream: bool = True,
) -> SessionOutcome:
    """Check the model, prepare the session (store it, or clear failed turns), run it."""
    try:
        await model.check()
        session_id = prepare()
        if on_created is not None:
            on_created(session_id)
        return await run_session(
            store,
            session_id,
            model,
            config=config,
            events=events,
            on_executor=on_executor,
            stream=stream,
        )
    finally:
        await model.aclose()


def load_session(store: Store, session_id: str | None = None) -> StoredSession:
    """A stored session (the latest when `session_id` is None) with its answers so far and
    their evaluation (run.session.evaluate_session, what `kontest report` prints)."""
    session_id = store.resolve_session(session_id)
    row = store.get_session(session_id)
    kg = session_graph(store, session_id)
    template_set: TemplateSet | None
    try:
        template_set = template_set_from_dict(row["templates_json"], f"session {session_id}")
    except InvalidInputError:
        template_set = None
    kinds, kind_options, problems = session_kinds(store, session_id)
    return StoredSession(
        id=session_id,
        status=str(row.get("status") or ""),
        model=str(row.get("model") or ""),
        kg=kg,
        kg_name=str(row.get("kg_name") or kg.name),
        depth=row.get("depth"),
        per_path=bool(row.get("per_path")),
        template_set=template_set,
        template_ids=list(row.get("template_ids") or []),
        relations=store.load_relations(session_id),
        conversations=store.load_conversations(session_id),
        kinds=kinds,
        kind_options=kind_options,
        problems=problems,
        responses=store.load_responses(session_id),
        evaluation=evaluate_session(store, session_id),
        seed=int(row.get("seed") or 0),
    )
