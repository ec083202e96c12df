"""The engine's session API, one for every front end (the CLI, the explorer, Python callers).

A `SessionSpec` (run.spec) says what to ask: the KG source and scope (entities, depth), the
templates, the test kinds and their options, the model, the chat and run options.
`prepare(spec)` (run.prepare) says what its run would ask and what blocks it, before anything
is stored; `create_session` stores it; `start_session` checks the model, stores the session
and runs it; `resume_session` goes on with a stored one; `confirm_errors` (run.confirm) asks
a stored session's errors again and stores whether each is confirmed; `stored_spec` gives a stored
session's spec back (to start another like it); `load_session` reads one back with its
answers and evaluation. They chain the steps of run.session (create, run, evaluate) so no
front end strings them together itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Relation,
    Response,
)
from kontest_tui.domain.rerun import RerunPlanJSON
from kontest_tui.errors import InvalidInputError, KontestError
from kontest_tui.generate.check import REASONS as QUESTION_CHECK_REASONS
from kontest_tui.generate.check import QuestionCheck
from kontest_tui.generate.check import examples as check_examples
from kontest_tui.generate.conversations import build_conversations, fill_question
from kontest_tui.generate.sample import SampleSpec
from kontest_tui.generate.templates import Template, TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds.registry import KindOptions, array_kinds, headline_title, kind_info
from kontest_tui.models.base import ChatModel, ChatOptions
from kontest_tui.models.specs import WithheldKey, key_withheld, recording_of, withheld_key
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.oracles.ontological import error_path
from kontest_tui.oracles.report_json import ReportJSON, report_from_json, report_section
from kontest_tui.results.delta import DeltaJSON, SessionDelta, session_delta
from kontest_tui.results.evaluate import (
    evaluate_session,
    evaluation_engine,
    session_graph,
    session_kinds,
)
from kontest_tui.results.reports import ensure_report, refresh_report, session_report
from kontest_tui.run.choices import (
    LOGIC_RULES,
    QUESTION_TYPES,
    KindChoice,
    KindControl,
    build_wikidata_source,
    describe_model_choice,
    discover_server_models,
    finder_title,
    kind_of,
    kind_options_from,
    list_server_models,
    list_test_kinds,
    loaded_first,
    model_presets,
    model_spec_patterns,
    sample_sources,
    server_title,
    source_of_match,
)
from kontest_tui.run.confirm import (
    DEFAULT_REWORDINGS,
    MAX_DRAWS,
    MAX_REWORDINGS,
    ConfirmationOutcome,
    confirm_errors,
)
from kontest_tui.run.curation import SessionTemplates, read_session_templates
from kontest_tui.run.executor import (
    Executor,
    ExecutorConfig,
    ExecutorEvents,
    Progress,
    is_cacheable,
    samples,
)
from kontest_tui.run.live import LiveCounts, LiveTally, kontest_per_relation
from kontest_tui.run.prepare import (
    KindCount,
    Preparation,
    Problem,
    QueryVariants,
    RelationPreview,
    check_model,
    check_spec_questions,
    model_problem,
    prepare,
    preview_relation,
)
from kontest_tui.run.rerun import RerunPlan, plan_reuse, rerun_spec, reuse_answers
from kontest_tui.run.session import (
    SessionOutcome,
    create_session,
    failed_message,
    open_session_model,
    options_from_dict,
    run_session,
)
from kontest_tui.run.spec import KgSource, SessionSpec, resolve_spec
from kontest_tui.store.database import Store
from kontest_tui.store.records import template_set_from_dict, template_set_to_dict

if TYPE_CHECKING:  # made only in preview_variants (the module reads WordNet's lists)
    from pathlib import Path

    from kontest_tui.generate.variants import VariantPreview as VariantPreview
    from kontest_tui.models.replay import ReplayFailures as ReplayFailures
    from kontest_tui.run.batch import BatchPhase as BatchPhase

__all__ = [
    "DEFAULT_REWORDINGS",
    "MAX_DRAWS",
    "MAX_REWORDINGS",
    "BatchPhase",
    "ChatOptions",
    "LOGIC_RULES",
    "QUESTION_CHECK_REASONS",
    "QUESTION_TYPES",
    "DeltaJSON",
    "ConfirmationOutcome",
    "Evaluation",
    "Executor",
    "ExecutorConfig",
    "ExecutorEvents",
    "KgSource",
    "KindChoice",
    "KindOptions",
    "LiveCounts",
    "LiveTally",
    "KindCount",
    "Preparation",
    "Problem",
    "Progress",
    "QueryVariants",
    "QuestionCheck",
    "ReplayFailures",
    "ReportJSON",
    "RelationPreview",
    "RerunPlan",
    "RerunPlanJSON",
    "SessionDelta",
    "SessionOutcome",
    "SessionSpec",
    "SessionTemplates",
    "StoredSession",
    "WithheldKey",
    "add_template",
    "batch_phase",
    "build_wikidata_source",
    "check_examples",
    "check_model",
    "check_spec_questions",
    "confirm_errors",
    "create_batch_session",
    "create_session",
    "error_path",
    "evaluation_engine",
    "headline_title",
    "extend_session",
    "failed_message",
    "fill_question",
    "kontest_per_relation",
    "describe_model_choice",
    "discover_server_models",
    "finder_title",
    "list_server_models",
    "loaded_first",
    "KindControl",
    "array_kinds",
    "kind_of",
    "kind_options_from",
    "list_test_kinds",
    "ensure_report",
    "load_session",
    "mark_interrupted",
    "model_presets",
    "model_spec_patterns",
    "model_problem",
    "prepare",
    "preview_relation",
    "preview_variants",
    "read_session_templates",
    "refresh_report",
    "report_from_json",
    "rerun_session",
    "recording_of",
    "replay_failures_of",
    "report_section",
    "resolve_spec",
    "resume_session",
    "sample_sources",
    "session_delta",
    "session_kinds",
    "session_report",
    "server_title",
    "source_of_match",
    "start_session",
    "stored_spec",
    "withheld_key",
    "withheld_key_of",
]


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
    kinds: list[str]  # TestKind members, a plugin kind's name
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


def create_batch_session(store: Store, spec: SessionSpec) -> str:
    """Store a new session to be asked in batch mode (`batch_phase`), its model named as
    the parsed spec names itself. A model no batch engine runs (Ollama, replay, local) is
    one InvalidInputError before anything is stored (run.batch.check_batch_model)."""
    from kontest_tui.models.specs import parse_model_spec
    from kontest_tui.run.batch import check_batch_model

    check_batch_model(spec.model)
    return create_session(store, spec, parse_model_spec(spec.model).spec)


def batch_phase(
    store: Store, session_id: str, batch_in: Path | None, batch_out: Path | None
) -> BatchPhase:
    """One step of batch mode (run.batch.batch_phase): store the results file `batch_in`,
    then write the next requests under `batch_out`, or evaluate when no turn is left."""
    from kontest_tui.run.batch import batch_phase as phase

    return phase(store, session_id, batch_in, batch_out)


def replay_failures_of(store: Store, session_id: str, path: str | Path) -> ReplayFailures:
    """Why the failed turns of a session replayed from the recording `path` failed
    (models.replay.replay_failures: the lines it lacks, the turns it holds as failed, the
    others); the engine's KontestError when the recording cannot be read."""
    from kontest_tui.models.replay import load_recording, replay_failures

    recording = load_recording(path)
    errors = {
        key: response.error
        for key, response in store.responses.load(session_id).items()
        if response.error is not None
    }
    return replay_failures(recording, store.relations.load_conversations(session_id), errors)


def model_seed(options: ChatOptions | None) -> int:
    """The seed the simulated model is opened with: the options' seed (the model's seed,
    `--model-seed`), else 0."""
    return options.seed if options is not None and options.seed is not None else 0


def preview_variants(
    kg: KnowledgeGraph,
    relation: Relation,
    template: Template,
    domain: str,
    strength: int = 2,
    *,
    realise: bool | None = None,
) -> VariantPreview:
    """One question's covering array (generate.variants.preview_variants; WordNet is read
    the first time: call it from a worker). `realise`: whether the template's set is
    realised (None: as the domain's default set is)."""
    from kontest_tui.generate.templates import template_set_for_domain
    from kontest_tui.generate.variants import preview_variants as preview

    if realise is None:
        try:
            realise = template_set_for_domain(domain).realise
        except KontestError:
            realise = False
    return preview(kg, relation, template, domain, strength, realise=realise)


def _from_files(kind: str) -> bool:
    """A kind read from a file, not built from the KG (annotated questions)."""
    info = kind_info(kind)
    return info is not None and info.build is None


def stored_spec(store: Store, session_id: str) -> SessionSpec:
    """The spec of a stored session, to start another like it ("same scope, another
    model": `replace(stored_spec(store, id), model=...)`). Its source is the KG snapshot the
    session stored (already scoped), so the new session asks the same relations whatever
    became of the file or sample since; the same depth, per-path mode, templates, kinds and
    their options, chat options, seed, the same number of relations (or the same sample)
    and the same annotated questions."""
    row = store.sessions.get(session_id)
    kinds, kind_options, problems = session_kinds(store, session_id)
    sample = row["kinds_json"].get("sample")
    extra = [
        conversation
        for conversation in store.relations.load_conversations(session_id)
        if _from_files(conversation.test_kind)
    ]
    asked = [kind for kind in kinds if not _from_files(kind)]
    return SessionSpec(
        session_graph(store, session_id),
        model=str(row["model"]),
        depth=row.get("depth"),
        per_path=bool(row.get("per_path")),
        kg_name=str(row["kg_name"]),
        template_set=template_set_from_dict(row["templates_json"], f"session {session_id}"),
        template_ids=tuple(row.get("template_ids") or ()) or None,
        kinds=tuple(asked),
        kind_options=kind_options,
        options=options_from_dict(row["options_json"]),
        seed=int(row.get("seed") or 0),
        # The first N relations of the same graph are the same relations (Algorithm 1's
        # order); a sampled session draws the same sample.
        limit=None if sample or not asked else int(row["relations"]) or None,
        sample=SampleSpec.from_json(sample) if sample else None,
        extra_conversations=extra,
        problems=problems,
        fresh_conversations=bool(row.get("fresh_conversations")),
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
    spec = resolve_spec(spec)
    model = open_session_model(spec.model, spec.graph, spec.options, model_seed(spec.options))
    return await _run(
        store,
        model,
        lambda: create_session(store, spec, model.spec),
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
    session_id = store.sessions.resolve(session_id, unfinished=not retry_errors)
    row = store.sessions.get(session_id)
    if row["status"] == "done" and not row["failed"]:
        raise InvalidInputError(f"session {session_id} is already done")
    options = options_from_dict(row["options_json"])
    chat = open_session_model(
        model or row["model"],
        session_graph(store, session_id),
        seed=model_seed(options),
        stored=not model,
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


async def rerun_session(
    store: Store,
    session_id: str | None = None,
    *,
    changed_only: bool = True,
    template_set: TemplateSet | None = None,
    config: ExecutorConfig | None = None,
    events: ExecutorEvents | None = None,
    on_created: Callable[[str], None] | None = None,
    on_planned: Callable[[RerunPlan], None] | None = None,
    on_executor: Callable[[Executor], None] | None = None,
    stream: bool = True,
) -> SessionOutcome:
    """Ask a stored session again with its templates' texts and the synonym lists as they
    are now (run.rerun): a new session linked to it (its `parent`) with the same model,
    scope, kinds and options, in which `changed_only` reuses every answer to a question
    asked as before (marked with its origin) and asks only the others; then evaluate it.
    `template_set` gives the texts instead of the domain's set as it is now. `on_planned`
    gets the plan once the reused answers are stored, before the first question; nothing
    changed is one InvalidInputError (no session is left). `stream` as for start_session."""
    session_id = store.sessions.resolve(session_id)
    row = store.sessions.get(session_id)
    spec, changed = rerun_spec(stored_spec(store, session_id), template_set)
    spec = resolve_spec(spec)
    options = options_from_dict(row["options_json"])
    chat = open_session_model(
        str(row["model"]), session_graph(store, session_id), seed=model_seed(options), stored=True
    )
    fresh = bool(row.get("fresh_conversations"))
    share = (
        (config or ExecutorConfig()).share_answers
        and not fresh
        and is_cacheable(chat)
        and not samples(options)  # each call its own seed: two draws, never one
    )
    parent: str = session_id

    def prepare() -> str:
        new_id = create_session(store, spec, str(row["model"]), parent=parent)
        plan = plan_reuse(
            parent,
            store.relations.load_conversations(parent) if changed_only else (),
            store.responses.answered_turns(parent) if changed_only else {},
            store.relations.load_conversations(new_id),
            by_text=not fresh,
            share_requests=share,
            changed_templates=changed,
        )
        if not plan.asked:
            store.sessions.delete(new_id)
            raise InvalidInputError(
                f"nothing to ask again: every question of session {parent} is asked as "
                "before (edit a template or a synonym list first)"
            )
        plan = reuse_answers(store, plan, new_id)
        if on_planned is not None:
            on_planned(plan)
        return new_id

    return await _run(
        store,
        chat,
        prepare,
        config=config,
        events=events,
        on_created=on_created,
        on_executor=on_executor,
        stream=stream,
    )


def withheld_key_of(store: Store, session_id: str) -> WithheldKey | None:
    """Whether resuming a stored session with its stored model withholds the API key from
    its URL (models.specs.key_withheld: the URL's host is not the key's): the explorer and
    the command line each say so in one line before the run."""
    return key_withheld(str(store.sessions.get(session_id)["model"]))


def mark_interrupted(store: Store, session_id: str, message: str) -> bool:
    """A session whose run was cut off without winding down (its process ending) is marked
    cancelled with `message`, as a run interrupted in time marks itself, unless it is no
    longer running or paused (it ended meanwhile); whether it was marked."""
    if store.sessions.get(session_id)["status"] not in ("running", "paused"):
        return False
    store.sessions.update(session_id, status="cancelled", message=message)
    return True


def add_template(store: Store, session_id: str, template: Template) -> list[Conversation]:
    """Add `template` to a stored session: its atomic question for every relation of the
    session is stored (asked by the next resume), and the session's template set and ids
    gain it, so its gap, the ensemble and the report include it. A template id the session
    already has is refused (save an edited template under a new id)."""
    row = store.sessions.get(session_id)
    template_set = template_set_from_dict(row["templates_json"], f"session {session_id}")
    if template.id in template_set.ids:
        raise InvalidInputError(
            f"session {session_id} already has a template {template.id}; give it a new id"
        )
    extended = replace(template_set, templates=(*template_set.templates, template))
    template_ids = [*(row.get("template_ids") or []), template.id]
    relations = [r for r in store.relations.load(session_id) if r.type in template.texts]
    if not relations:
        raise InvalidInputError(
            f"template {template.id} has no text for the relation types of session {session_id}"
        )
    atomic = build_conversations(
        session_graph(store, session_id), relations, extended, [template.id]
    )
    label = f"Q{len(template_ids)}"  # Q1, Q2 are the first templates' atomic questions
    conversations = [replace(conversation, label=label) for conversation in atomic]
    store.relations.add_conversations(
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
    session_id = store.sessions.resolve(session_id)
    row = store.sessions.get(session_id)
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
        relations=store.relations.load(session_id),
        conversations=store.relations.load_conversations(session_id),
        kinds=kinds,
        kind_options=kind_options,
        problems=problems,
        responses=store.responses.load(session_id),
        evaluation=evaluate_session(store, session_id),
        seed=int(row.get("seed") or 0),
    )
