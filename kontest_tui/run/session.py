"""Sessions: create one (KG -> relations -> conversations, stored), run or resume it, evaluate it.

A session snapshots everything a run needs (KG, template set, template ids, model spec
without secrets, chat options, seed), so `resume_session` needs only the store: it asks
the turns that have no response row yet, in generation order, a sequential conversation
whose first turn is stored going on at turn 2 with the stored answer as context.
Answers are stored as they arrive, in small transactions grouped by time (run.writer). At the
end, the evaluation is computed from memory (the answers of this run and those stored before
it, read once when it started) and stored once, verdicts and Report JSON
(store.reports), in the transaction that finishes the run. `results.reports` reads that
stored report back (evaluating again in memory when it is stale), `results.evaluate`
evaluates stored answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from itertools import islice
from typing import Any

from kontest_tui.domain.records import (
    AnswerKey,
    Conversation,
    Relation,
    Response,
    TestKind,
)
from kontest_tui.errors import InvalidInputError, KontestError, LeaseLostError
from kontest_tui.gc_pause import paused_gc, rare_gc
from kontest_tui.generate.conversations import Suite, build_conversations
from kontest_tui.generate.realise import forget_realiser
from kontest_tui.generate.relations import iter_relations
from kontest_tui.generate.sample import Sample, sample_relations
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import graph_to_dict
from kontest_tui.kinds.registry import (
    KindOptions,
    build_kind_conversations,
    count_refusals,
    kind_rank,
)
from kontest_tui.models.base import ChatModel, ChatOptions
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.oracles.evidence import EvidenceTally, cut_answers
from kontest_tui.oracles.margins import MarginTally
from kontest_tui.oracles.ontological import PAPER_RULE
from kontest_tui.oracles.streamed import NotStreamable, StreamedEvaluation
from kontest_tui.results.evaluate import (
    add_evidence,
    add_margins,
    evaluate_responses,
    evaluation_engine,
    session_doubts,
    session_ontological_rule,
    split_answers,
)
from kontest_tui.run.executor import (
    Executor,
    ExecutorConfig,
    ExecutorEvents,
    RunResult,
    is_cacheable,
)
from kontest_tui.run.notices import watch_notices
from kontest_tui.run.spec import SessionSpec, resolve_spec
from kontest_tui.run.writer import BatchWriter
from kontest_tui.store.database import Store
from kontest_tui.store.leases import RENEW_EVERY_S, Lease
from kontest_tui.store.records import NewSession, SnapshotText, template_set_to_dict
from kontest_tui.store.schema import now_iso

# Relations per chunk of a streamed run, and the session size from which a run streams by
# default (smaller ones are asked whole, and their outcome holds every verdict for the views;
# a whole run of 100k relations peaks at ~850 MB, and its creation keeps the records it
# stores for the run, so they are not read back).
CHUNK_RELATIONS = 2_000
STREAM_ABOVE = 120_000


@dataclass(slots=True, repr=False)
class SessionOutcome:
    """What a run of a session ended with (its repr is one short line: asyncio.run formats
    the repr of its main task's result when it restores the SIGINT handler, which took
    seconds for the evaluation of a 10k-relation session)."""

    session_id: str
    status: str  # done | cancelled | failed (some turns got no answer)
    result: RunResult
    evaluation: Evaluation

    def __repr__(self) -> str:
        return f"SessionOutcome({self.session_id!r}, {self.status!r}, {self.result.progress.done} turns)"


def _track_state(
    store: Store, session_id: str, then: Callable[[str], None] | None
) -> Callable[[str], None]:
    """An on_state callback that records paused / running in the session row first."""

    def on_state(state: str) -> None:
        if state in ("paused", "running"):
            store.sessions.update(session_id, status=state)
        if then is not None:
            then(state)

    return on_state


def options_to_dict(options: ChatOptions) -> dict[str, Any]:
    return asdict(options)


def options_from_dict(data: dict[str, Any]) -> ChatOptions:
    known = {f.name for f in fields(ChatOptions)}
    return ChatOptions(**{key: value for key, value in data.items() if key in known})


def create_session(
    store: Store, spec: SessionSpec, model_spec: str | None = None, *, parent: str | None = None
) -> str:
    """Store the session `spec` describes (nothing is asked); return its id.

    The spec is resolved first (run.spec.resolve_spec: its KG loaded and scoped) unless it
    is already. Its `kinds` are built from the KG (kinds.registry; their conversations follow
    the KONTEST ones); no kind (annotated questions only): no relation is stored. The
    `extra_conversations` are added as given (annotated questions, with the `problems` found
    reading their file). `limit` keeps the first N relations and applies before the kinds
    are built; `sample` instead keeps a seeded random sample stratified by relation type
    and depth (generate.sample), recorded with the session so its report estimates every
    rate for the whole KG. `seed` seeds the sample and the kinds' options; the model's seed
    is `options.seed` (None: none is sent). When `options` has no system prompt, the
    template set's is used. `fresh_conversations`: every conversation is asked from scratch
    (the KONTEST paper's setting; run_session never shares an answer between
    conversations, and the report adds the stability test). `prebuilt`: the other kinds'
    conversations run.prepare built to count them, stored as they are when they were built
    for this session's relations, templates, kinds and options. `model_spec` stores the
    model under the name the opened model gives itself (default: the spec's); `parent`:
    the session this one asks again (run.rerun).
    """
    spec = resolve_spec(spec)
    chosen_ids = tuple(template.id for template in _template_set(spec).select(spec.template_ids))
    model = model_spec or spec.model
    if spec.sample is not None and spec.limit is not None:
        raise InvalidInputError("--sample and --limit do not go together: choose one")
    if spec.limit is not None and spec.limit < 1:
        raise ValueError("limit must be at least 1")
    if (
        list(spec.kinds) == [TestKind.KONTEST]
        and spec.sample is None
        and not spec.extra_conversations
    ):
        chunks = _generated_chunks(spec, chosen_ids)
        first = next(chunks, None)
        if first is None:
            raise InvalidInputError(NOTHING_TO_ASK)
        return _store_session(
            store,
            spec,
            model,
            chosen_ids,
            _kontest_kinds_json(spec.kind_options),
            chunks=itertools.chain([first], chunks),
            parent=parent,
        )
    relations, drawn = _chosen_relations(spec)
    conversations = [
        *_kind_conversations(spec, relations, chosen_ids),
        *spec.extra_conversations,
    ]
    if not conversations:
        raise InvalidInputError(NOTHING_TO_ASK)
    return _store_session(
        store,
        spec,
        model,
        chosen_ids,
        _kinds_json(spec, conversations, drawn),
        relations=relations,
        conversations=conversations,
        parent=parent,
    )


NOTHING_TO_ASK = "nothing to ask: the selected test kinds gave no questions"


def _template_set(spec: SessionSpec) -> TemplateSet:
    template_set = spec.template_set
    assert isinstance(template_set, TemplateSet), "resolve_spec gives a TemplateSet"
    return template_set


def _spec_relations(spec: SessionSpec, *, guard: bool = True) -> Iterator[Relation]:
    """The resolved spec's relations in Algorithm 1's order (all of them: no limit)."""
    return iter_relations(
        spec.graph,
        spec.depth,
        per_path=spec.per_path,
        template_set=_template_set(spec),
        guard=guard,
    )


def _chosen_relations(spec: SessionSpec) -> tuple[list[Relation], Sample | None]:
    """The relations a session of the resolved spec asks (the first `limit`, or a sample
    drawn from all), and the sample when one was drawn; none when no kind is built from
    the KG (annotated questions only)."""
    if spec.sample is not None:
        if not spec.kinds:
            raise InvalidInputError("a sample is drawn from the KG's relations, not given ones")
        drawn = sample_relations(lambda: _spec_relations(spec), spec.sample)
        return drawn.relations, drawn
    if not spec.kinds:
        return [], None
    return list(islice(_spec_relations(spec, guard=spec.limit is None), spec.limit)), None


def _kind_conversations(
    spec: SessionSpec, relations: list[Relation], chosen_ids: tuple[str, ...]
) -> list[Conversation]:
    """The conversations of the spec's kinds over `relations`: KONTEST's first (when asked),
    then the other kinds', as run.prepare built them when they match, else built here."""
    kontest = (
        build_conversations(spec.graph, relations, _template_set(spec), chosen_ids)
        if TestKind.KONTEST in spec.kinds
        else []
    )
    others = [kind for kind in spec.kinds if kind is not TestKind.KONTEST]
    if not others:
        return kontest
    options = spec.kind_settings
    prebuilt = spec.prebuilt
    if prebuilt is not None and prebuilt.matches(relations, chosen_ids, others, options):
        return [*kontest, *prebuilt.conversations]  # built by prepare for exactly these
    suite = Suite(relations, list(kontest), _template_set(spec), chosen_ids)
    return [*kontest, *build_kind_conversations(suite, spec.graph, others, options)]


def _kinds_json(
    spec: SessionSpec, conversations: Sequence[Conversation], drawn: Sample | None
) -> dict[str, Any] | None:
    """The stored kinds JSON: none for KONTEST questions alone with the builders' defaults,
    else the kinds asked, their options, the questions file's problems and the sample."""
    kind_options = spec.kind_settings
    asked = sorted({c.test_kind for c in conversations}, key=kind_rank)
    if (
        asked == [TestKind.KONTEST]
        and drawn is None
        and kind_options.ontological_rule == PAPER_RULE
    ):
        return None
    return {
        "kinds": [str(kind) for kind in asked],
        "options": kind_options.to_json(),
        "problems": list(spec.problems),
        **({"sample": drawn.to_json()} if drawn is not None else {}),
    }


def _kontest_kinds_json(kind_options: KindOptions | None) -> dict[str, Any] | None:
    """The kinds JSON of a session of KONTEST questions alone: none (the default) unless its
    options say more than the builders' defaults (another ontological rule)."""
    if kind_options is None or kind_options.ontological_rule == PAPER_RULE:
        return None
    return {"kinds": [TestKind.KONTEST.value], "options": kind_options.to_json(), "problems": []}


def _generated_chunks(
    spec: SessionSpec, template_ids: Sequence[str]
) -> Iterator[tuple[list[Relation], list[Conversation]]]:
    """The resolved spec's relations (the first `limit`) and their KONTEST conversations,
    CHUNK_RELATIONS relations at a time, made as they are stored (in Algorithm 1's order).
    After a session run in chunks (over STREAM_ABOVE relations) the KG's realised names are
    dropped: its run needs none of them (about 160 MB at 1M relations)."""
    relations = islice(_spec_relations(spec, guard=spec.limit is None), spec.limit)
    made = 0
    while True:
        part = list(islice(relations, CHUNK_RELATIONS))
        if not part:
            if made > STREAM_ABOVE:
                forget_realiser(spec.graph)
            return
        made += len(part)
        yield part, build_conversations(spec.graph, part, _template_set(spec), template_ids)


def _store_session(
    store: Store,
    spec: SessionSpec,
    model_spec: str,
    chosen_ids: Sequence[str],
    kinds_json: Mapping[str, Any] | None,
    *,
    relations: Sequence[Relation] = (),
    conversations: Sequence[Conversation] = (),
    chunks: Iterable[tuple[Sequence[Relation], Sequence[Conversation]]] | None = None,
    parent: str | None = None,
) -> str:
    """Store a created session (create_session) of a resolved spec; the options get the
    template set's system prompt when they have none."""
    kg, template_set = spec.graph, _template_set(spec)
    options = spec.options or ChatOptions(temperature=template_set.temperature)
    if options.system_prompt is None:
        options = dataclasses.replace(options, system_prompt=template_set.system_prompt)
    with paused_gc():  # bursts of many small acyclic records
        return store.sessions.create(
            NewSession(
                kg_name=spec.kg_name or kg.name,
                kg_json=SnapshotText.of(graph_to_dict(kg)),  # the dict goes (1M: ~200 MB)
                templates_json=template_set_to_dict(template_set),
                template_ids=chosen_ids,
                model=model_spec,
                options=options_to_dict(options),
                labels={node_id: node.label for node_id, node in kg.nodes.items()},
                seed=spec.seed,
                depth=spec.depth,
                per_path=spec.per_path,
                kinds=kinds_json,
                fresh_conversations=spec.fresh_conversations,
                parent=parent,
            ),
            relations=relations,
            conversations=conversations,
            chunks=chunks,
            keep_up_to=STREAM_ABOVE,  # a run asks these whole: kept for it
        )


def open_session_model(
    spec: str,
    kg: KnowledgeGraph | None = None,
    options: ChatOptions | None = None,
    seed: int = 0,
    *,
    stored: bool = False,
) -> ChatModel:
    """The ChatModel for a spec (models.specs.open_model); `stored`: the spec is a
    session's, read from its database (the key stays home)."""
    from kontest_tui.models.specs import open_model

    return open_model(spec, kg=kg, options=options, seed=seed, stored=stored)


def failed_message(failed: int) -> str:
    """The session message of a run that ended with failed turns."""
    return f"{failed} turn{'s' if failed != 1 else ''} failed after all attempts"


async def run_session(
    store: Store,
    session_id: str,
    model: ChatModel,
    *,
    config: ExecutorConfig | None = None,
    events: ExecutorEvents | None = None,
    on_executor: Callable[[Executor], None] | None = None,
    chunk: int | None = None,
    stream: bool = True,
) -> SessionOutcome:
    """Ask every turn of the session that has no response yet, then evaluate and store verdicts.

    Streamed (`chunk` relations at a time; by default CHUNK_RELATIONS when the session has
    more than STREAM_ABOVE relations): when the session allows it (KONTEST questions only,
    stored in their relations' order: Store.streamable; a model that needs no `prepare`, so
    not a replay), each chunk's conversations and stored answers are read, asked, evaluated
    (oracles.streamed) and their verdicts stored before the next chunk is read, and the
    ontological verdicts and the report are made at the end from compact totals. The stored
    verdicts and report are the same as a whole run's; the outcome's evaluation then has the
    report's counts but no verdict list (`evaluation.streamed`: read them from the store).
    `stream=False` never streams: the evaluation keeps its verdicts (the explorer shows them,
    and holds the whole session in memory anyway).

    Works for a new session and for a resumed one alike; a resumed one first drops its
    failed turns (and the turns after them) so they are asked again. The run holds the
    session's lease (store.leases) from start to end, so a second run or resume of the same
    session is refused with SessionBusyError; a lease left by a killed process is taken over.
    The end is one transaction: counts, verdicts, status and the lease's release. A run that
    ends with failed turns leaves the session `failed` (unfinished). `on_executor` receives
    the executor before it starts (the TUI keeps it for its pause / resume / cancel buttons).
    Cancelling the calling task (Ctrl-C, SIGTERM in the CLI) marks the session cancelled and
    re-raises.
    """
    with rare_gc():  # millions of short-lived records per run
        return await _run_session(
            store,
            session_id,
            model,
            config=config,
            events=events,
            on_executor=on_executor,
            chunk=chunk,
            stream=stream,
        )


async def _run_session(
    store: Store,
    session_id: str,
    model: ChatModel,
    *,
    config: ExecutorConfig | None,
    events: ExecutorEvents | None,
    on_executor: Callable[[Executor], None] | None,
    chunk: int | None,
    stream: bool,
) -> SessionOutcome:
    row = store.sessions.get(session_id)
    lease = store.leases.acquire(session_id)
    try:
        begun = _begin_run(
            store,
            session_id,
            row,
            model,
            config=config,
            events=events,
            streamed=_stream_size(store, session_id, row, model, chunk) if stream else None,
        )
        writer = begun.writer
        if on_executor is not None:
            on_executor(begun.executor)
        store.sessions.update(
            session_id, status="running", started=row["started"] or now_iso(), message=None
        )
    except BaseException:
        store.leases.release(lease)
        raise
    clock = time.monotonic()
    elapsed = row["elapsed_s"] or 0.0

    def elapsed_s() -> float:
        return float(elapsed + time.monotonic() - clock)

    run_task = asyncio.current_task()
    lost: list[bool] = []  # set by the heartbeat when another process took the lease

    def stop_asking() -> None:
        lost.append(True)
        if run_task is not None:
            run_task.cancel()

    heartbeat = asyncio.create_task(_renew_lease(store, lease, stop_asking))

    def close(status: str, message: str | None) -> None:
        heartbeat.cancel()
        try:
            writer.close()  # what this run received is kept, even when it failed
        except KontestError as error:
            message = f"{message}; {error}" if message else str(error)
        try:
            store.sessions.finish_run(
                session_id,
                lease=lease,
                status=status,
                message=message,
                elapsed_s=elapsed_s(),
            )
        except LeaseLostError:
            raise
        except KontestError as error:  # a full disk: at least the status, in place
            _mark_failed(
                store,
                session_id,
                lease,
                f"{message}; {error}" if message else str(error),
                elapsed_s(),
            )

    try:
        result, evaluation = await _ask(store, session_id, row, begun)
        writer.close()
    except (asyncio.CancelledError, KeyboardInterrupt):
        if lost:  # the session is another run's now: store what came, touch nothing else
            heartbeat.cancel()
            with contextlib.suppress(KontestError):  # turns the other run stored are refused
                writer.close()
            if run_task is not None:
                run_task.uncancel()
            raise store.leases.lost(lease) from None
        close("cancelled", "interrupted")
        raise
    except KontestError as error:
        close("failed", str(error))
        raise
    except Exception as error:
        close("failed", f"{type(error).__name__}: {error}")
        raise
    heartbeat.cancel()
    return _finish_run(store, session_id, lease, row, begun, result, evaluation, elapsed_s)


def _finish_run(
    store: Store,
    session_id: str,
    lease: Lease,
    row: Mapping[str, Any],
    begun: _BegunRun,
    result: RunResult,
    evaluation: Evaluation | None,
    elapsed_s: Callable[[], float],
) -> SessionOutcome:
    """The end of a run that asked every turn it could: its evaluation (`evaluation` when
    it was streamed) stored with the counts, verdicts and status in one transaction that
    gives the lease back."""
    try:
        if begun.streamed is None or evaluation is None:
            evaluation = _evaluate_whole(store, session_id, row, begun)
        evaluation.from_cache = begun.stored_cached + result.progress.cached
        failed = evaluation.failed
        status = "cancelled" if result.cancelled else "failed" if failed else "done"
        with paused_gc():  # the verdict rows
            store.sessions.finish_run(
                session_id,
                lease=lease,
                status=status,
                message={"cancelled": "cancelled", "failed": failed_message(failed)}.get(status),
                elapsed_s=elapsed_s(),
                verdicts=None if evaluation.streamed else evaluation.verdicts,
                oracle_error_rate=evaluation.listed_error_rate,
                oracle_errors=evaluation.error_total,
                report=evaluation.to_json(),
                engine=evaluation_engine(),
                keep_verdicts=evaluation.streamed,
            )
    except LeaseLostError:
        store.leases.release(lease)
        raise
    except KontestError as error:  # the verdicts and report could not be written
        _mark_failed(
            store,
            session_id,
            lease,
            f"every answer is stored, but not their evaluation ({error}); "
            "`kontest report --re-evaluate` stores it once the database can be written",
            elapsed_s(),
        )
        with contextlib.suppress(KontestError):
            store.leases.release(lease)
        raise
    except BaseException:
        store.leases.release(lease)
        raise
    return SessionOutcome(session_id, status, result, evaluation)


def _mark_failed(
    store: Store, session_id: str, lease: Lease, message: str, elapsed_s: float
) -> None:
    """Mark the session failed with `message` (one row updated in place: what a full disk
    still lets through), so it never stays "running" after this run; a write that fails
    even so leaves it for `--resume` (the lease goes back with the run)."""
    with contextlib.suppress(KontestError):
        store.sessions.finish_run(
            session_id, lease=lease, status="failed", message=message, elapsed_s=elapsed_s
        )


@dataclass(slots=True)
class _BegunRun:
    """What a run of a session set up before its first question: the executor and the
    writer it stores through, and (unless it streams) the conversations and the answers
    stored before it."""

    executor: Executor
    writer: BatchWriter
    streamed: int | None  # relations per chunk when the run streams (_stream_size)
    conversations: list[Conversation]
    stored: dict[AnswerKey, Response]
    stored_cached: int

    @property
    def done(self) -> dict[AnswerKey, str]:
        return {key: response.raw for key, response in self.stored.items()}


async def _ask(
    store: Store, session_id: str, row: Mapping[str, Any], begun: _BegunRun
) -> tuple[RunResult, Evaluation | None]:
    """Ask every turn without an answer: whole, or chunk by chunk with each chunk evaluated
    (then the evaluation too, unless it could not be made in chunks)."""
    if begun.streamed is not None:
        evaluation = await _ask_streamed(store, session_id, begun.executor, begun.streamed, row)
        return begun.executor.result(), evaluation
    return await begun.executor.run(begun.conversations, begun.done), None


def _begin_run(
    store: Store,
    session_id: str,
    row: Mapping[str, Any],
    model: ChatModel,
    *,
    config: ExecutorConfig | None,
    events: ExecutorEvents | None,
    streamed: int | None,
) -> _BegunRun:
    """Read what the run needs (failed turns dropped, to be asked again) and make its
    executor (run_session holds the lease meanwhile)."""
    conversations: list[Conversation] = []
    stored: dict[AnswerKey, Response] = {}
    with paused_gc():  # bursts of many small records
        if streamed is None:
            conversations = store.relations.load_conversations(session_id)
        store.responses.delete_failed(session_id)  # failed turns are asked again
        if streamed is None:
            stored = store.responses.load(session_id)
    stored_cached = store.responses.count_cached(session_id)
    options = options_from_dict(row["options_json"])
    if row.get("fresh_conversations"):  # every conversation from scratch: nothing shared
        config = replace(config or ExecutorConfig(), share_answers=False)
    events = events or ExecutorEvents()
    events = replace(events, on_state=_track_state(store, session_id, events.on_state))
    events = watch_notices(events, model.spec)
    writer = BatchWriter(store, session_id)
    executor = Executor(model, options, config=config, sink=writer, cache=writer, events=events)
    return _BegunRun(executor, writer, streamed, conversations, stored, stored_cached)


def _evaluate_whole(
    store: Store, session_id: str, row: Mapping[str, Any], begun: _BegunRun
) -> Evaluation:
    """The evaluation of a run asked whole, from memory: the answers stored before it and
    those it just stored (a streamed run that could not be evaluated in chunks: from the
    store)."""
    responses = begun.executor.responses
    with paused_gc():
        return evaluate_responses(
            store.relations.load(session_id),
            begun.conversations
            if begun.streamed is None
            else store.relations.load_conversations(session_id),
            ({**begun.stored, **responses} if begun.stored else responses)
            if begun.streamed is None
            else store.responses.load(session_id),
            session=session_id,
            model=row["model"],
            problems=row["kinds_json"].get("problems", ()),
            sample=row["kinds_json"].get("sample"),
            fresh=bool(row.get("fresh_conversations")),
            doubts=session_doubts(store, session_id),
            labels=lambda nodes: store.relations.node_labels(session_id, nodes),
            ontological_rule=session_ontological_rule(row),
        )


def _stream_size(
    store: Store, session_id: str, row: Mapping[str, Any], model: ChatModel, chunk: int | None
) -> int | None:
    """Relations per chunk when this run streams (see run_session), else None."""
    if chunk is None:
        if row["relations"] <= STREAM_ABOVE:
            return None
        chunk = CHUNK_RELATIONS
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    if (
        row["kinds_json"].get("sample")
        or row.get("fresh_conversations")
        or session_ontological_rule(row) != PAPER_RULE
        or not is_cacheable(model)
    ):
        # a sample's intervals need every verdict, as does a fresh session's stability test
        # and the prototype's ontological rule (oracles.streamed has the paper's); a replay
        # prepares the whole run
        return None
    return chunk if store.chunks.streamable(session_id) else None


async def _ask_streamed(
    store: Store, session_id: str, executor: Executor, size: int, row: Mapping[str, Any]
) -> Evaluation | None:
    """Ask the session chunk by chunk, evaluating and storing each chunk's verdicts, then the
    ontological ones; the session's evaluation (None when it could not be evaluated in
    chunks: oracles.streamed.NotStreamable; the caller evaluates it whole)."""
    counts = store.sessions.refresh_counts(session_id)
    executor.begin(int(row["planned"]), counts["answered"])
    store.verdicts.clear(session_id)
    totals: StreamedEvaluation | None = StreamedEvaluation(session=session_id, model=row["model"])
    evidence = EvidenceTally()
    failed: Counter[str] = Counter()
    stopped = {"length": 0, "timeout": 0}
    cut: Counter[str] = Counter()
    margins = MarginTally()
    # The low-margin first answers of atomic conversations, by row key: all that the
    # ontological verdicts made at the end compare (the chunk's other low-margin answers are
    # dropped once its verdicts are counted: a key each is ~180 bytes, 1M relations ~190 MB).
    low_atomic: set[int] = set()
    for chunk in store.chunks.read(session_id, size):
        done = {key: response.raw for key, response in chunk.responses.items()}
        await executor.ask(chunk.conversations, done)  # returns at once once cancelled
        responses = {**chunk.responses, **executor.responses}
        executor.responses.clear()
        if totals is None:
            continue
        with paused_gc():
            answers, raw, chunk_failed, chunk_stopped, chunk_cut = split_answers(responses)
            failed.update(chunk_failed)
            kinds = {
                conversation.id: str(conversation.test_kind) for conversation in chunk.conversations
            }
            cut.update(kinds.get(key[0], "kontest") for key in chunk_cut)
            for reason, count in chunk_stopped.items():
                stopped[reason] = stopped.get(reason, 0) + count
            try:
                verdicts = totals.add_chunk(
                    chunk.relations, chunk.conversations, answers, chunk.conversation_keys
                )
            except NotStreamable:
                totals = None
                continue
            add_margins(margins, chunk.conversations, responses)
            margins.add_verdicts(verdicts)
            atomic = {c.id for c in chunk.conversations if c.kind == "atomic"}
            low_atomic.update(
                chunk.conversation_keys[key[0]]
                for key in margins.low
                if key[1] == 0 and key[0] in atomic
            )
            margins.low.clear()
            totals.refusals += count_refusals(chunk.conversations, raw, answers)
            relations = {relation.id: relation for relation in chunk.relations}
            evidence.add_answers(
                relations, chunk.conversations, answers, raw, cut_answers(responses)
            )
            evidence.add_errors(verdicts, {c.id: c for c in chunk.conversations}, relations)
            store.verdicts.append(session_id, verdicts, chunk.relation_keys)
    if totals is None:
        return None
    try:
        totals.seal()
    except NotStreamable:
        return None
    totals.findings.doubts = session_doubts(store, session_id)
    for template_id in list(totals.templates):
        for chunk in store.chunks.read(session_id, size, conversations=False):
            with paused_gc():
                keys: dict[str, int] = {}  # conversation id -> row key, of these verdicts

                def named(wanted: Sequence[int], keys: dict[str, int] = keys) -> Mapping[int, str]:
                    found = store.chunks.conversation_ids(wanted)
                    keys.update((name, key) for key, name in found.items())
                    return found

                verdicts = totals.ontological_verdicts(template_id, chunk.relations, named)
                evidence.add_errors(verdicts, {}, {})
                margins.low = {
                    ref
                    for verdict in verdicts
                    if verdict.error
                    for ref in verdict.refs
                    if keys.get(ref[0]) in low_atomic
                }
                margins.add_verdicts(verdicts)
                store.verdicts.append(session_id, verdicts, chunk.relation_keys)
    evaluation = totals.evaluation()
    add_evidence(evaluation, evidence.to_json(evaluation.gap))
    evaluation.failed = failed.total()
    evaluation.failed_reasons = dict(failed.most_common())
    evaluation.stopped = stopped
    evaluation.cut, evaluation.cut_by_kind = cut.total(), dict(cut)
    evaluation.margins = margins.to_json()
    return evaluation


async def _renew_lease(store: Store, lease: Lease, on_lost: Callable[[], None]) -> None:
    """Renew the run's lease every RENEW_EVERY_S until cancelled (the run's end); when another
    process took it over (this one was paused past STALE_AFTER_S and the session resumed
    elsewhere), call `on_lost` (the run stops asking) and stop."""
    while True:
        await asyncio.sleep(RENEW_EVERY_S)
        try:
            kept = store.leases.renew(lease)
        except KontestError:  # a busy database: the next beat tries again
            continue
        if not kept:
            on_lost()
            return
