"""The executor: sequential turns in order with context, retries, failures, cache, cancel, pause."""

from __future__ import annotations

import asyncio
import time

import pytest

from kontest_tui.domain.failures import classify_error
from kontest_tui.domain.records import Answer, Conversation, Query
from kontest_tui.domain.seeds import draw_seed
from kontest_tui.errors import ModelError
from kontest_tui.models.base import ChatOptions, ChatResult, Message
from kontest_tui.run.executor import (
    Executor,
    ExecutorConfig,
    ExecutorEvents,
    RunResult,
    cache_key,
)
from kontest_tui.run.session import run_session
from kontest_tui.store import Store
from tests.run.run_toys import ToyModel, make_conversations, make_relations, store_session

FAST = ExecutorConfig(
    concurrency=4,
    backoff_base=0.001,
    backoff_max=0.01,
    jitter_seed=1,
    use_cache=False,
    share_answers=False,
)


def echo_answer(request) -> str:  # noqa: ANN001
    """'Yes <n>' where n = number of messages seen: shows how much context a turn had."""
    return f"Yes {len(request.messages)}"


async def test_sequential_turns_in_order_with_earlier_answers_as_context() -> None:
    conversations = make_conversations(make_relations(6))
    model = ToyModel(echo_answer, delay=0.002)
    # no reuse: every turn is a call here (reuse is tested below)
    executor = Executor(
        model, config=ExecutorConfig(concurrency=8, use_cache=False, share_answers=False)
    )
    await executor.run(conversations)
    assert model.prepared == 1
    assert len(model.calls) == 6 * 6
    assert model.max_in_flight > 1  # really concurrent
    for request in model.calls:
        if request.turn == 1:
            # user q1, assistant answer to q1 (which saw 1 message), user q2
            roles = [m.role for m in request.messages]
            assert roles == ["user", "assistant", "user"]
            assert request.messages[1].content == "Yes 1"
            assert request.kind == "sequential"
    # turn 2 of every sequential conversation starts only after its turn 1 ended
    for conversation in conversations:
        if conversation.kind != "sequential":
            continue
        end_first = model.log.index(("end", conversation.id, 0))
        start_second = model.log.index(("start", conversation.id, 1))
        assert end_first < start_second
    assert executor.responses[(conversations[2].id, 1)].raw == "Yes 3"


@pytest.mark.parametrize("concurrency", [1, 3, 8])
async def test_every_distinct_request_is_asked_once_at_any_concurrency(concurrency: int) -> None:
    conversations = make_conversations(make_relations(6))
    model = ToyModel(echo_answer, delay=0.001)
    executor = Executor(model, config=ExecutorConfig(concurrency=concurrency))
    result = await executor.run(conversations)
    # per relation: Q1, Q2 and the second turns of A and B; A's and B's first turns repeat
    # Q1 and Q2 and take their answers
    assert len(model.calls) == executor.calls == 6 * 4
    assert result.progress.cached == 6 * 2 and result.progress.done == 6 * 6
    asked = [(request.conversation_id, request.turn) for request in model.calls]
    assert len({request.messages for request in model.calls}) == len(asked)
    assert all(turn == 1 for conversation, turn in asked if "+" in conversation)
    for conversation in conversations:
        if conversation.kind == "sequential":
            first = executor.responses[conversation.id, 0]
            atomic = conversation.id.split("+")[0]
            assert first.raw == executor.responses[atomic, 0].raw == "Yes 1"
            assert first.attempts == 0  # not a call


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_a_later_turn_repeated_by_another_conversation_is_asked_once(
    concurrency: int,
) -> None:
    """Two relations phrased alike (places has four such pairs): their sequential
    conversations ask the same second turn after the same first one. At concurrency 1 the
    second conversation came long after the first and asked it again (1056 calls for 1052
    distinct requests on places)."""
    q1, q2 = Query("R", "t1", "Does A have a B?"), Query("R", "t2", "Is there a B in A?")
    conversations = [
        Conversation("R/t1", "R", "atomic", "Q1", (q1,)),
        Conversation("R/t1+t2", "R", "sequential", "A", (q1, q2)),
        *[
            Conversation(f"S{n}/t1", f"S{n}", "atomic", "Q1", (Query(f"S{n}", "t1", f"Q{n}?"),))
            for n in range(10)
        ],  # others between, so the twin is not in flight
        Conversation("R2/t1+t2", "R2", "sequential", "A", (q1, q2)),
    ]
    model = ToyModel(echo_answer, delay=0.001)
    executor = Executor(model, config=ExecutorConfig(concurrency=concurrency))
    result = await executor.run(conversations)
    assert len(model.calls) == 2 + 10  # q1 once, (q1, answer, q2) once, the ten others
    assert result.progress.cached == 3  # both first turns and the twin's second turn
    assert executor.responses["R2/t1+t2", 1].raw == executor.responses["R/t1+t2", 1].raw
    assert executor._memo == {} and not executor._memo_uses  # nothing kept after its last use


async def test_identical_requests_in_flight_share_one_call() -> None:
    q = Query("R", "t1", "Does A have a B?")
    twins = [Conversation(f"R/{n}", "R", "atomic", "Q1", (q,)) for n in range(3)]
    model = ToyModel(delay=0.01)
    executor = Executor(model, config=ExecutorConfig(concurrency=3))
    result = await executor.run(twins)
    assert len(model.calls) == 1  # the others waited for it
    assert result.progress.cached == 2
    assert {response.raw for response in executor.responses.values()} == {"Yes"}


async def test_a_failed_shared_call_is_asked_again_by_the_waiting_turn() -> None:
    q = Query("R", "t1", "Does A have a B?")
    twins = [Conversation(f"R/{n}", "R", "atomic", "Q1", (q,)) for n in range(2)]
    model = ToyModel(
        delay=0.01, failures={("R/0", 0): [ModelError("HTTP 404 unknown model", retryable=False)]}
    )
    executor = Executor(model, config=ExecutorConfig(concurrency=2))
    result = await executor.run(twins)
    assert [request.conversation_id for request in model.calls] == ["R/0", "R/1"]
    assert executor.responses["R/0", 0].error is not None
    assert executor.responses["R/1", 0].raw == "Yes"
    assert result.progress.cached == 0


async def test_concurrency_is_bounded() -> None:
    model = ToyModel(delay=0.002)
    await Executor(model, config=ExecutorConfig(concurrency=3)).run(
        make_conversations(make_relations(5))
    )
    assert model.max_in_flight == 3


async def test_retries_are_counted_in_the_store(tmp_path) -> None:  # noqa: ANN001
    relations = make_relations(2)
    conversations = make_conversations(relations)
    flaky = {
        ("P0>C0/t1", 0): [
            ModelError("HTTP 429 too many requests", retryable=True, retry_after=0.001),
            ModelError("HTTP 500 server error", retryable=True),
        ],
        ("P1>C1/t2+t1", 1): [ModelError("stream dropped", retryable=True)],
    }
    model = ToyModel(failures=flaky)
    with Store(tmp_path / "s.db") as store:
        session = store_session(store, relations, conversations)
        outcome = await run_session(store, session, model, config=FAST)
        rows = {(r["conversation"], r["turn"]): r for r in store.responses.rows(session)}
        assert rows["P0>C0/t1", 0]["attempts"] == 3
        assert rows["P1>C1/t2+t1", 1]["attempts"] == 2
        assert rows["P0>C0/t2", 0]["attempts"] == 1
        assert all(r["error"] is None and r["answer"] == "yes" for r in rows.values())
        assert store.sessions.get(session)["retries"] == 3
        assert store.sessions.get(session)["status"] == "done"
    assert outcome.result.progress.retries == 3
    assert len(model.calls) == 12 + 3  # 12 turns + 3 failed attempts


async def test_permanent_failure_is_recorded_as_failed_and_the_run_completes(tmp_path) -> None:  # noqa: ANN001
    relations = make_relations(2)
    conversations = make_conversations(relations)
    always = [ModelError("HTTP 503 unavailable", retryable=True) for _ in range(10)]
    model = ToyModel(
        failures={
            ("P0>C0/t1", 0): always,
            ("P1>C1/t1+t2", 0): [ModelError("HTTP 404 unknown model", retryable=False)],
        }
    )
    config = ExecutorConfig(
        max_attempts=3, backoff_base=0.001, backoff_max=0.01, use_cache=False, share_answers=False
    )
    with Store(tmp_path / "s.db") as store:
        session = store_session(store, relations, conversations)
        outcome = await run_session(store, session, model, config=config)
        rows = {(r["conversation"], r["turn"]): r for r in store.responses.rows(session)}
        assert len(rows) == 12
        failed = rows["P0>C0/t1", 0]
        assert (failed["answer"], failed["attempts"], failed["raw"]) == ("invalid", 3, "")
        assert "503" in str(failed["error"])
        refused = rows["P1>C1/t1+t2", 0]
        assert refused["attempts"] == 1 and "404" in str(refused["error"])
        # the run went on, but turn 2 of that conversation was not asked: its context is
        # missing; it is recorded as failed with the reason, attempts 0
        skipped = rows["P1>C1/t1+t2", 1]
        assert str(skipped["error"]).startswith("not asked: turn 1") and skipped["attempts"] == 0
        assert ("P1>C1/t1+t2", 1) not in {(r.conversation_id, r.turn) for r in model.calls}
        assert store.sessions.get(session)["failed"] == 3
        assert store.sessions.get(session)["status"] == "failed"
    assert outcome.status == "failed"
    assert outcome.result.progress.errors == {"5xx": 1, "other": 1}
    assert outcome.result.progress.failed == 3
    # failed turns are no answers: 9 executions, none invalid, 3 failed
    assert (outcome.evaluation.executions, outcome.evaluation.invalid) == (9, 0)
    assert outcome.evaluation.failed == 3


async def test_cache_hit_avoids_the_call(tmp_path) -> None:  # noqa: ANN001
    relations = make_relations(1)
    conversations = make_conversations(relations)
    with Store(tmp_path / "s.db") as store:
        first = ToyModel(echo_answer)
        one = store_session(store, relations, conversations)
        await run_session(store, one, first, config=ExecutorConfig(concurrency=1, use_cache=True))
        # concurrency 1: Q1, Q2 asked; A1 repeats Q1's chat and B1 repeats Q2's -> cached
        assert len(first.calls) == 4
        second = ToyModel(lambda request: "No")
        two = store_session(store, relations, conversations)
        tokens: list[tuple[str, int, str]] = []
        outcome = await run_session(
            store,
            two,
            second,
            config=ExecutorConfig(concurrency=1, use_cache=True),  # the user opted in
            events=ExecutorEvents(on_token=lambda c, t, text: tokens.append((c, t, text))),
        )
        assert second.calls == []
        assert tokens[:2] == [("P0>C0/t1", 0, "Yes 1"), ("P0>C0/t2", 0, "Yes 1")]  # shown once
        assert outcome.result.progress.cached == 6
        assert {r["raw"] for r in store.responses.rows(two)} == {"Yes 1", "Yes 3"}
        assert all(r["cached"] == 1 for r in store.responses.rows(two))
        assert outcome.evaluation.to_json()["answers_from_cache"] == 6
        # By default a new session asks the model: nothing carried over from earlier sessions,
        # only this session's own repeats are shared (the same 4 calls as the first session).
        third = ToyModel(lambda request: "No")
        three = store_session(store, relations, conversations)
        outcome = await run_session(store, three, third, config=ExecutorConfig(concurrency=1))
        assert len(third.calls) == 4
        assert {r["raw"] for r in store.responses.rows(three)} == {"No"}
        assert outcome.evaluation.to_json()["answers_from_cache"] == 2
        # --no-cache: every turn asked.
        fourth = ToyModel(lambda request: "No")
        four = store_session(store, relations, conversations)
        config = ExecutorConfig(concurrency=1, share_answers=False)
        outcome = await run_session(store, four, fourth, config=config)
        assert len(fourth.calls) == 6
        assert outcome.evaluation.to_json()["answers_from_cache"] == 0


def seed_answer(request) -> str:  # noqa: ANN001
    """'Yes <seed>': shows which seed the call that answered a turn was sent."""
    return f"Yes {request.options.seed}"


@pytest.mark.parametrize("seed", [7, None])
async def test_samples_at_a_temperature_above_0_are_never_shared(seed: int | None) -> None:
    """At temperature 0.8 every conversation is sent its own seed: a sequential
    conversation's first turn is another draw than its atomic twin's, asked apart (it was
    taken from the twin, sent the twin's seed). Unseeded, each call is a draw of its own."""
    conversations = make_conversations(make_relations(3))
    model = ToyModel(seed_answer)
    executor = Executor(model, ChatOptions(temperature=0.8, seed=seed))
    result = await executor.run(conversations)
    assert len(model.calls) == 3 * 6 and result.progress.cached == 0
    for conversation in conversations:
        own = draw_seed(seed, conversation.id) if seed is not None else None
        assert executor.responses[conversation.id, 0].raw == f"Yes {own}"
    # At temperature 0 the seed changes nothing: the twins still share one call.
    model = ToyModel(seed_answer)
    await Executor(model, ChatOptions(temperature=0.0, seed=seed)).run(conversations)
    assert len(model.calls) == 3 * 4


async def test_a_cached_sample_is_reused_only_for_the_same_seed(tmp_path) -> None:  # noqa: ANN001
    """The cache key of a sample holds the call's seed: a session at temperature 0.8 with
    another model seed asks again (it got the first session's draws back); the same seed
    reproduces them from the cache."""
    relations = make_relations(1)
    conversations = make_conversations(relations)
    config = ExecutorConfig(concurrency=1, use_cache=True)
    with Store(tmp_path / "s.db") as store:
        raws = {}
        for seed, asked in ((1, 6), (2, 6), (1, 0)):
            options: dict[str, object] = {"temperature": 0.8, "seed": seed, "timeout": 5.0}
            session = store_session(store, relations, conversations, options=options)
            model = ToyModel(seed_answer)
            await run_session(store, session, model, config=config)
            assert len(model.calls) == asked
            stored = store.responses.load(session)
            raws[session] = {(key[0], response.raw) for key, response in stored.items()}
        first, other, again = raws.values()
        assert again == first and not first & other
        assert all(raw == f"Yes {draw_seed(1, c)}" for c, raw in first)


def test_cache_key_depends_on_spec_options_and_messages() -> None:
    messages = (Message("user", "Does A have a B?"),)
    base = cache_key("sim", ChatOptions(), messages)
    assert base == cache_key("sim", ChatOptions(timeout=5.0), messages)  # timeout: not part
    assert base != cache_key("sim:careful", ChatOptions(), messages)
    assert base != cache_key("sim", ChatOptions(temperature=0.5), messages)
    assert base != cache_key("sim", ChatOptions(seed=1), messages)
    assert base != cache_key("sim", ChatOptions(), (Message("user", "Does A have a C?"),))


async def test_cancel_stops_the_run_and_leaves_whole_rows(tmp_path) -> None:  # noqa: ANN001
    relations = make_relations(10)
    conversations = make_conversations(relations)
    with Store(tmp_path / "s.db") as store:
        session = store_session(store, relations, conversations)
        holder: dict[str, Executor] = {}

        def stop_after_five(response) -> None:  # noqa: ANN001
            if len(holder["executor"].responses) == 5:
                holder["executor"].cancel()

        model = ToyModel(delay=0.001)
        outcome = await run_session(
            store,
            session,
            model,
            config=ExecutorConfig(concurrency=2),
            events=ExecutorEvents(on_response=stop_after_five),
            on_executor=lambda executor: holder.update(executor=executor),
        )
        assert outcome.status == "cancelled"
        row = store.sessions.get(session)
        assert row["status"] == "cancelled"
        stored = list(store.responses.rows(session))
        assert len(stored) == 5 == row["answered"]
        assert all(r["answer"] == "yes" and r["raw"] == "Yes" for r in stored)


async def test_task_cancellation_marks_the_session_cancelled(tmp_path) -> None:  # noqa: ANN001
    relations = make_relations(5)
    conversations = make_conversations(relations)
    with Store(tmp_path / "s.db") as store:
        session = store_session(store, relations, conversations)
        model = ToyModel(delay=0.01)
        task = asyncio.create_task(
            run_session(store, session, model, config=ExecutorConfig(concurrency=1))
        )
        while len(list(store.responses.rows(session))) < 3:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert store.sessions.get(session)["status"] == "cancelled"
        count = len(list(store.responses.rows(session)))
        assert 3 <= count < 30


async def test_pause_holds_new_calls_until_resume() -> None:
    conversations = make_conversations(make_relations(3))
    model = ToyModel(delay=0.001)
    executor = Executor(model, config=ExecutorConfig(concurrency=1))
    executor.pause()
    task = asyncio.create_task(executor.run(conversations))
    for _ in range(5):
        await asyncio.sleep(0.005)
    assert model.calls == [] and executor.paused
    executor.resume()
    result = await task
    assert result.progress.done == 18 and not result.cancelled


async def test_tokens_and_progress_events() -> None:
    tokens: list[tuple[str, int, str]] = []
    seen: list[int] = []
    events = ExecutorEvents(
        on_token=lambda c, t, text: tokens.append((c, t, text)),
        on_progress=lambda progress: seen.append(progress.done),
    )
    conversations = make_conversations(make_relations(1))
    model = ToyModel(lambda request: "Yes it does")
    await Executor(model, config=ExecutorConfig(concurrency=1), events=events).run(conversations)
    assert tokens[:3] == [("P0>C0/t1", 0, "Yes"), ("P0>C0/t1", 0, "it"), ("P0>C0/t1", 0, "does")]
    assert seen == [0, 1, 2, 3, 4, 5, 6]


def test_backoff_is_exponential_and_honours_retry_after() -> None:
    executor = Executor(ToyModel(), config=ExecutorConfig(backoff_base=1.0, backoff_max=8.0))
    for attempt, base in ((1, 1.0), (2, 2.0), (3, 4.0), (5, 8.0)):
        delay = executor._backoff(attempt, None)
        assert 0.5 * base <= delay <= 1.5 * base
    assert executor._backoff(1, 6.0) >= 6.0
    assert executor._backoff(1, 100.0) <= 8.0 * 1.5


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("HTTP 429 Too Many Requests", "429"),
        ("ollama timed out after 60 s", "timeout"),
        ("HTTP 502 bad gateway", "5xx"),
        ("the stream ended before the answer was complete", "stream"),
        ("cannot reach ollama at http://127.0.0.1:1: connection refused", "connection"),
        ("unauthorized: check OPENAI_API_KEY", "other"),
    ],
)
def test_classify_error(message: str, kind: str) -> None:
    assert classify_error(message) == kind


async def test_invalid_answers_are_kept_raw() -> None:
    hostile = "\x1b[31m[bold red]Maybe[/bold red]\x1b[0m " + "x" * 1_000_000
    model = ToyModel(lambda request: hostile)
    executor = Executor(model)
    result = await executor.run(make_conversations(make_relations(1))[:1])
    response = executor.responses["P0>C0/t1", 0]
    # kept raw up to the bound (domain.answers.MAX_ANSWER_CHARS), the cut recorded
    assert response.raw == hostile[:65_536] and response.answer is Answer.INVALID
    assert response.cut == len(hostile) - 65_536
    assert result.progress.invalid == 1


async def test_rate_limiter_spaces_call_starts(monkeypatch) -> None:  # noqa: ANN001
    """At 4 calls/s, calls asked at the same instant start 0, 0.25, 0.5, 0.75 s later."""
    from kontest_tui.run import executor as module

    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(round(seconds, 6))

    monkeypatch.setattr(time, "monotonic", lambda: 100.0)  # the module executor.py imports
    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    limiter = module.RateLimiter(4.0)
    for _ in range(4):
        await limiter.wait()
    assert sleeps == [0.25, 0.5, 0.75]


async def test_unexpected_client_exception_is_one_error_row() -> None:
    class Broken(ToyModel):
        async def chat(self, request, on_token=None):  # noqa: ANN001, ANN202
            if request.conversation_id == "P0>C0/t2":
                raise KeyError("choices")
            return await super().chat(request, on_token)

    executor = Executor(Broken())
    result = await executor.run(make_conversations(make_relations(1)))
    failed = executor.responses["P0>C0/t2", 0]
    assert failed.error == "KeyError: 'choices'" and failed.answer is Answer.INVALID
    assert result.progress.done == 6 and result.progress.errors == {"other": 1}


def test_pause_resume_cancel_from_another_thread() -> None:
    """The TUI presses its buttons in the UI thread while the run's loop lives in a worker."""
    import threading

    conversations = make_conversations(make_relations(20))
    model = ToyModel(delay=0.002)
    executor = Executor(model, config=ExecutorConfig(concurrency=2))
    outcome: dict[str, RunResult] = {}
    thread = threading.Thread(
        target=lambda: outcome.update(result=asyncio.run(executor.run(conversations)))
    )
    thread.start()
    while len(executor.responses) < 4:
        threading.Event().wait(0.001)
    executor.pause()
    while not executor.paused or model.in_flight:
        threading.Event().wait(0.001)
    paused_at = len(model.calls)
    threading.Event().wait(0.05)
    assert len(model.calls) == paused_at  # nothing new started while paused
    executor.resume()
    while len(executor.responses) < 20:
        threading.Event().wait(0.001)
    executor.cancel()
    thread.join(timeout=10)
    assert not thread.is_alive()
    result = outcome["result"]
    assert result.cancelled and 20 <= result.progress.done < 120


def test_pause_from_another_thread_with_a_model_that_never_suspends() -> None:
    """The built-in simulated model answers without awaiting anything that suspends; a pause
    pressed in the UI thread must still take effect while the run goes on."""
    import threading

    class Instant(ToyModel):
        async def chat(self, request, on_token=None):  # noqa: ANN001, ANN202
            self.calls.append(request)
            threading.Event().wait(0.0005)  # work, but no await: the loop is never released
            return ChatResult(text="Yes", tokens=1)

    conversations = make_conversations(make_relations(200))  # 1,200 turns
    model = Instant()
    executor = Executor(model, config=ExecutorConfig(concurrency=4))
    outcome: dict[str, RunResult] = {}
    thread = threading.Thread(
        target=lambda: outcome.update(result=asyncio.run(executor.run(conversations)))
    )
    thread.start()
    while len(model.calls) < 10:
        threading.Event().wait(0.0005)
    executor.pause()
    deadline = time.monotonic() + 10
    while not executor.paused and time.monotonic() < deadline:
        threading.Event().wait(0.001)
    assert executor.paused
    paused_at = len(model.calls)
    threading.Event().wait(0.05)
    assert len(model.calls) == paused_at < 1200  # held mid-run, not at the end
    executor.resume()
    thread.join(timeout=30)
    assert outcome["result"].progress.done == 1200


async def test_pause_and_resume_are_recorded_in_the_session(tmp_path) -> None:  # noqa: ANN001
    relations = make_relations(2)
    conversations = make_conversations(relations)
    seen: list[tuple[str, str]] = []
    with Store(tmp_path / "s.db") as store:
        session = store_session(store, relations, conversations)
        holder: dict[str, Executor] = {}

        def on_response(response) -> None:  # noqa: ANN001
            if len(holder["executor"].responses) == 3:
                holder["executor"].pause()
                asyncio.get_running_loop().call_later(0.01, holder["executor"].resume)

        def on_state(state: str) -> None:
            seen.append((state, store.sessions.get(session)["status"]))

        outcome = await run_session(
            store,
            session,
            ToyModel(),
            config=ExecutorConfig(concurrency=1),
            events=ExecutorEvents(on_response=on_response, on_state=on_state),
            on_executor=lambda executor: holder.update(executor=executor),
        )
        assert seen == [("paused", "paused"), ("running", "running")]
        assert outcome.status == "done" and store.sessions.get(session)["status"] == "done"


def test_cache_key_is_the_sha256_of_the_documented_json() -> None:
    """Keys stay those of earlier sessions' caches: SHA-256 of the compact JSON text
    `[spec, shaping, [[role, content], ...]]` (sorted keys, non-ASCII kept)."""
    import hashlib
    import json

    options = ChatOptions(seed=3, max_tokens=8, system_prompt="Say yes or no.")
    messages = (
        Message("system", "Say yes or no."),
        Message("user", 'Does "Ærø" have a\nC\\D?\t\x01'),
        Message("assistant", "Ja — \u2028 \ud83d"),
        Message("user", ""),
    )
    shaping = {"temperature": 0.0, "seed": 3, "max_tokens": 8, "system_prompt": "Say yes or no."}
    text = json.dumps(
        ["sim", shaping, [[m.role, m.content] for m in messages]],
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    expected = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    assert cache_key("sim", options, messages) == expected


def test_request_key_is_the_cache_key_of_the_messages_after_the_system_prompt() -> None:
    """The executor's key of a request (the options' system prompt sent first) is the
    documented cache_key of the whole chat, with and without a system prompt."""
    from kontest_tui.run.executor import request_key

    chat = (
        Message("user", 'Does "Ærø" have a\nC\\D?'),
        Message("assistant", "Ja — \u2028 \ud83d"),
        Message("user", "And B?"),
    )
    for prompt in ("Say yes or no.", 'Sag "ja"\n', None, ""):
        options = ChatOptions(seed=3, system_prompt=prompt)
        system = (Message("system", prompt),) if prompt else ()
        for turns in (chat[:1], chat):
            assert request_key("sim", options, turns) == cache_key(
                "sim", options, (*system, *turns)
            )
    assert request_key("sim", ChatOptions(system_prompt="S"), ()) == cache_key(
        "sim", ChatOptions(system_prompt="S"), (Message("system", "S"),)
    )


async def test_a_streak_of_failed_turns_is_said_once_and_its_end_too() -> None:
    """A model server that dies mid-run must not fail every turn silently. Turns in
    a row without an answer after all attempts call `on_failing` once, when the streak
    reaches `failing_after`, and (0, "") when an answer ends it; a shorter streak says
    nothing. Worked out with one worker and one attempt per turn: calls 5-16 fail (12 turns
    in a row: said at the 10th), calls 25-33 fail (9: not said)."""
    down = set(range(5, 17)) | set(range(25, 34))
    calls = [0]

    def answer(request) -> str:  # noqa: ANN001
        index = calls[0]
        calls[0] += 1
        if index in down:
            raise ModelError("cannot reach toy: connection refused", retryable=True)
        return "Yes"

    said: list[tuple[int, str]] = []
    model = ToyModel(answer)
    config = ExecutorConfig(concurrency=1, max_attempts=1, share_answers=False, use_cache=False)
    events = ExecutorEvents(on_failing=lambda turns, error: said.append((turns, error)))
    executor = Executor(model, config=config, events=events)
    # atomic conversations only: each turn is one call, none skipped after a failure
    conversations = [c for c in make_conversations(make_relations(20)) if c.kind == "atomic"]
    result = await executor.run(conversations)
    assert said == [(10, "cannot reach toy: connection refused"), (0, "")]
    assert result.progress.failed == 12 + 9 and len(model.calls) == 40


async def test_a_resume_counts_a_new_streak() -> None:
    """After a pause (the explorer pauses on `on_failing`) and a resume, the streak starts
    again: a model still down is said again after `failing_after` more failed turns."""
    said: list[int] = []
    model = ToyModel(lambda request: (_ for _ in ()).throw(ModelError("down", retryable=True)))
    executor: Executor

    def failing(turns: int, error: str) -> None:
        said.append(turns)
        if len(said) == 1:  # the explorer pauses; the user resumes
            executor.pause()
            asyncio.get_running_loop().call_soon(executor.resume)

    config = ExecutorConfig(
        concurrency=1, max_attempts=1, share_answers=False, use_cache=False, failing_after=3
    )
    executor = Executor(model, config=config, events=ExecutorEvents(on_failing=failing))
    conversations = [c for c in make_conversations(make_relations(4)) if c.kind == "atomic"]
    await executor.run(conversations)
    assert said == [3, 3]  # 8 turns failed: said at the 3rd, and at the 3rd after the resume


async def test_failures_not_worth_retrying_are_no_streak() -> None:
    """A turn the model refuses for good (not in a recording, a bad request) says nothing
    about the model being reachable: only retryable failures make a streak."""
    said: list[int] = []
    model = ToyModel(lambda request: (_ for _ in ()).throw(ModelError("bad request")))
    config = ExecutorConfig(
        concurrency=1,
        max_attempts=2,
        share_answers=False,
        use_cache=False,
        failing_after=3,
        stop_after_identical=100,  # (the same failure every turn stops a run at 5)
    )
    executor = Executor(
        model, config=config, events=ExecutorEvents(on_failing=lambda t, e: said.append(t))
    )
    conversations = [c for c in make_conversations(make_relations(4)) if c.kind == "atomic"]
    result = await executor.run(conversations)
    assert result.progress.failed == 8 and said == []
