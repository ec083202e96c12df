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
from kontest_tui.errors import InvalidInputError, KontestError, LeaseLostError, ModelSpecError
from kontest_tui.gc_pause import paused_gc, rare_gc
from kontest_tui.generate.conversations import Suite, build_conversations, build_suite
from kontest_tui.generate.realise import forget_realiser
from kontest_tui.generate.relations import iter_relations
from kontest_tui.generate.sample import Sample, SampleSpec, sample_relations
from kontest_tui.generate.templates import TemplateSet, resolve_template_set
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import graph_to_dict
from kontest_tui.kinds.registry import (
    KindOptions,
    PrebuiltKinds,
    build_kind_conversations,
    count_refusals,
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


def limit_relations(
    relations: Sequence[Relation], conversations: Sequence[Conversation], limit: int | None
) -> tuple[list[Relation], list[Conversation]]:
    """The first `limit` relations and their conversations (all when limit is None)."""
    if limit is None:
        return list(relations), list(conversations)
    if limit < 1:
        raise ValueError("limit must be at least 1")
    kept = list(relations[:limit])
    ids = {relation.id for relation in kept}
    return kept, [c for c in conversations if c.relation_id in ids]


def options_to_dict(options: ChatOptions) -> dict[str, Any]:
    return asdict(options)


def options_from_dict(data: dict[str, Any]) -> ChatOptions:
    known = {f.name for f in fields(ChatOptions)}
    return ChatOptions(**{key: value for key, value in data.items() if key in known})


def create_session(
    store: Store,
    kg: KnowledgeGraph,
    model_spec: str,
    *,
    kg_name: str | None = None,
    depth: int | None = None,
    per_path: bool = False,
    template_set: TemplateSet | str | None = None,
    template_ids: Sequence[str] | None = None,
    options: ChatOptions | None = None,
    seed: int = 0,
    limit: int | None = None,
    conversations: Sequence[Conversation] | None = None,
    relations: Sequence[Relation] | None = None,
    kinds: Sequence[TestKind] = (TestKind.KONTEST,),
    kind_options: KindOptions | None = None,
    extra_conversations: Sequence[Conversation] = (),
    problems: Sequence[str] = (),
    sample: SampleSpec | None = None,
    fresh_conversations: bool = False,
    prebuilt: PrebuiltKinds | None = None,
    parent: str | None = None,
) -> str:
    """Generate (unless given) and store a session's relations and conversations; return its id.

    When the conversations are generated here, `kinds` are the test kinds built from the KG
    (kinds.registry; their conversations follow the KONTEST ones); given `conversations` are
    stored as they are, whatever their kinds. `extra_conversations` are added as given
    (annotated questions, with the `problems` found reading their file). `limit` keeps the
    first N relations and applies before the kinds are built; `sample` instead keeps a seeded
    random sample stratified by relation type and depth (generate.sample), recorded with the
    session so its report estimates every rate for the whole KG. `seed` seeds the sample and
    the kinds' options; the model's seed is `options.seed` (None: none is sent). When
    `options` has no system prompt, the template set's is used. `fresh_conversations`: every
    conversation is asked from scratch (the KONTEST paper's setting; run_session never shares
    an answer between conversations, and the report adds the stability test). `prebuilt`:
    the other kinds' conversations run.prepare built to count them, stored as they are when
    they were built for this session's relations, templates, kinds and options. `parent`:
    the session this one asks again (run.rerun).
    """
    template_set = resolve_template_set(template_set, kg.domain)
    chosen_ids = tuple(template.id for template in template_set.select(template_ids))
    generated = conversations is None
    drawn: Sample | None = None
    if (
        generated
        and relations is None
        and sample is None
        and not extra_conversations
        and list(kinds) == [TestKind.KONTEST]
    ):
        if limit is not None and limit < 1:
            raise ValueError("limit must be at least 1")
        chunks = _generated_chunks(kg, depth, per_path, template_set, chosen_ids, limit)
        first = next(chunks, None)
        if first is None:
            raise InvalidInputError("nothing to ask: the selected test kinds gave no questions")
        return _store_session(
            store,
            kg,
            model_spec,
            kg_name,
            depth,
            per_path,
            template_set,
            chosen_ids,
            options,
            seed,
            [],
            [],
            _kontest_kinds_json(kind_options),
            itertools.chain([first], chunks),
            fresh_conversations=fresh_conversations,
            parent=parent,
        )
    if sample is not None:
        if limit is not None:
            raise InvalidInputError("--sample and --limit do not go together: choose one")
        if relations is not None or conversations is not None:
            raise InvalidInputError("a sample is drawn from the KG's relations, not given ones")
        drawn = sample_relations(
            lambda: iter_relations(kg, depth, per_path=per_path, template_set=template_set),
            sample,
        )
        relations = drawn.relations
        conversations = build_conversations(kg, relations, template_set, chosen_ids)
    if relations is None or conversations is None:
        suite = build_suite(
            kg,
            depth=depth,
            per_path=per_path,
            template_set=template_set,
            template_ids=template_ids,
            limit=limit if relations is None else None,
        )
        relations = suite.relations if relations is None else relations
        conversations = suite.conversations if conversations is None else conversations
    chosen_relations, chosen = limit_relations(relations, conversations, limit)
    kind_options = kind_options or KindOptions(seed=seed)
    others = [kind for kind in kinds if kind is not TestKind.KONTEST] if generated else []
    if generated and TestKind.KONTEST not in kinds:
        chosen = [c for c in chosen if c.test_kind is not TestKind.KONTEST]
    if (
        others
        and prebuilt is not None
        and prebuilt.matches(chosen_relations, chosen_ids, others, kind_options)
    ):
        chosen = [*chosen, *prebuilt.conversations]  # built by prepare for exactly these
    elif others:
        suite = Suite(chosen_relations, list(chosen), template_set, chosen_ids)
        chosen = [*chosen, *build_kind_conversations(suite, kg, others, kind_options)]
    chosen = [*chosen, *extra_conversations]
    if not chosen:
        raise InvalidInputError("nothing to ask: the selected test kinds gave no questions")
    asked = sorted({c.test_kind for c in chosen}, key=list(TestKind).index)
    kinds_json = (
        None
        if asked == [TestKind.KONTEST]
        and drawn is None
        and kind_options.ontological_rule == PAPER_RULE
        else {
            "kinds": [kind.value for kind in asked],
            "options": kind_options.to_json(),
            "problems": list(problems),
            **({"sample": drawn.to_json()} if drawn is not None else {}),
        }
    )
    return _store_session(
        store,
        kg,
        model_spec,
        kg_name,
        depth,
        per_path,
        template_set,
        chosen_ids,
        options,
        seed,
        chosen_relations,
        chosen,
        kinds_json,
        fresh_conversations=fresh_conversations,
        parent=parent,
    )


def _kontest_kinds_json(kind_options: KindOptions | None) -> dict[str, Any] | None:
    """The kinds JSON of a session of KONTEST questions alone: none (the default) unless its
    options say more than the builders' defaults (another ontological rule)."""
    if kind_options is None or kind_options.ontological_rule == PAPER_RULE:
        return None
    return {"kinds": [TestKind.KONTEST.value], "options": kind_options.to_json(), "problems": []}


def _generated_chunks(
    kg: KnowledgeGraph,
    depth: int | None,
    per_path: bool,
    template_set: TemplateSet,
    template_ids: Sequence[str],
    limit: int | None,
) -> Iterator[tuple[list[Relation], list[Conversation]]]:
    """The KG's relations (the first `limit`) and their KONTEST conversations, CHUNK_RELATIONS
    relations at a time, made as they are stored (build_suite's, in its order). After a
    session run in chunks (over STREAM_ABOVE relations) the KG's realised names are dropped:
    its run needs none of them (about 160 MB at 1M relations)."""
    relations = islice(
        iter_relations(
            kg, depth, per_path=per_path, template_set=template_set, guard=limit is None
        ),
        limit,
    )
    made = 0
    while True:
        part = list(islice(relations, CHUNK_RELATIONS))
        if not part:
            if made > STREAM_ABOVE:
                forget_realiser(kg)
            return
        made += len(part)
        yield part, build_conversations(kg, part, template_set, template_ids)


def _store_session(
    store: Store,
    kg: KnowledgeGraph,
    model_spec: str,
    kg_name: str | None,
    depth: int | None,
    per_path: bool,
    template_set: TemplateSet,
    chosen_ids: Sequence[str],
    options: ChatOptions | None,
    seed: int,
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    kinds_json: Mapping[str, Any] | None,
    chunks: Iterable[tuple[Sequence[Relation], Sequence[Conversation]]] | None = None,
    *,
    fresh_conversations: bool = False,
    parent: str | None = None,
) -> str:
    """Store a created session (create_session); the options get the template set's system
    prompt when they have none."""
    options = options or ChatOptions(temperature=template_set.temperature)
    if options.system_prompt is None:
        options = dataclasses.replace(options, system_prompt=template_set.system_prompt)
    with paused_gc():  # bursts of many small acyclic records
        return store.sessions.create(
            NewSession(
                kg_name=kg_name or kg.name,
                kg_json=SnapshotText.of(graph_to_dict(kg)),  # the dict goes (1M: ~200 MB)
                templates_json=template_set_to_dict(template_set),
                template_ids=chosen_ids,
                model=model_spec,
                options=options_to_dict(options),
                labels={node_id: node.label for node_id, node in kg.nodes.items()},
                seed=seed,
                depth=depth,
                per_path=per_path,
                kinds=kinds_json,
                fresh_conversations=fresh_conversations,
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
    """The ChatModel for a spec (models.specs.open_model; replay works without it);
    `stored`: the spec is a session's, read from its database (the key stays home)."""
    try:
        from kontest_tui.models.specs import open_model
    except ImportError:
        if spec.startswith("replay:"):
            from kontest_tui.models.replay import ReplayModel

            return ReplayModel(spec.removeprefix("replay:"))
        raise ModelSpecError(f"model clients are not available for {spec!r}") from None
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
        streamed = _stream_size(store, session_id, row, model, chunk) if stream else None
        conversations: list[Conversation] = []
        stored: dict[AnswerKey, Response] = {}
        with paused_gc():  # bursts of many small records
            if streamed is None:
                conversations = store.relations.load_conversations(session_id)
            store.responses.delete_failed(session_id)  # failed turns are asked again
            if streamed is None:
                stored = store.responses.load(session_id)
        stored_cached = store.responses.count_cached(session_id)
        done = {key: response.raw for key, response in stored.items()}
        options = options_from_dict(row["options_json"])
        if row.get("fresh_conversations"):  # every conversation from scratch: nothing shared
            config = replace(config or ExecutorConfig(), share_answers=False)
        events = events or ExecutorEvents()
        events = replace(events, on_state=_track_state(store, session_id, events.on_state))
        events = watch_notices(events, model.spec)
        writer = BatchWriter(store, session_id)
        executor = Executor(
            model,
            options,
            config=config,
            sink=writer,
            cache=writer,
            events=events,
        )
        if on_executor is not None:
            on_executor(executor)
        store.sessions.update(
            session_id, status="running", started=row["started"] or now_iso(), message=None
        )
    except BaseException:
        store.leases.release(lease)
        raise
    clock = time.monotonic()
    elapsed = row["elapsed_s"] or 0.0
    evaluation: Evaluation | None = None
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
                elapsed_s=elapsed + time.monotonic() - clock,
            )
        except LeaseLostError:
            raise
        except KontestError as error:  # a full disk: at least the status, in place
            mark_failed(f"{message}; {error}" if message else str(error))

    def mark_failed(message: str) -> None:
        """Mark the session failed with `message` (one row updated in place: what a full
        disk still lets through), so it never stays "running" after this run; a write
        that fails even so leaves it for `--resume` (the lease goes back with the run)."""
        with contextlib.suppress(KontestError):
            store.sessions.finish_run(
                session_id,
                lease=lease,
                status="failed",
                message=message,
                elapsed_s=elapsed + time.monotonic() - clock,
            )

    try:
        if streamed is not None:
            evaluation = await _ask_streamed(store, session_id, executor, streamed, row)
            result = executor.result()
        else:
            result = await executor.run(conversations, done)
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
    try:
        if streamed is None or evaluation is None:
            with paused_gc():
                # From memory: the answers stored before this run and those it just stored
                # (a streamed run that could not be evaluated in chunks: from the store).
                evaluation = evaluate_responses(
                    store.relations.load(session_id),
                    conversations
                    if streamed is None
                    else store.relations.load_conversations(session_id),
                    (executor.responses if not stored else {**stored, **executor.responses})
                    if streamed is None
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
        assert evaluation is not None
        evaluation.from_cache = stored_cached + result.progress.cached
        failed = evaluation.failed
        status = "cancelled" if result.cancelled else "failed" if failed else "done"
        with paused_gc():  # the verdict rows
            store.sessions.finish_run(
                session_id,
                lease=lease,
                status=status,
                message={"cancelled": "cancelled", "failed": failed_message(failed)}.get(status),
                elapsed_s=elapsed + time.monotonic() - clock,
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
        mark_failed(
            f"every answer is stored, but not their evaluation ({error}); "
            "`kontest report --re-evaluate` stores it once the database can be written"
        )
        with contextlib.suppress(KontestError):
            store.leases.release(lease)
        raise
    except BaseException:
        store.leases.release(lease)
        raise
    return SessionOutcome(session_id, status, result, evaluation)


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
                conversation.id: conversation.test_kind.value
                for conversation in chunk.conversations
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
