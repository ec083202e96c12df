"""Ask a ChatModel a list of conversations: bounded concurrency, retries, cache, cancellation.

`Executor.run(conversations, done)` calls `model.prepare(conversations)` once, then N workers
(default 4) take conversations in generation order; the turns of one conversation are asked
strictly in order, each seeing the earlier questions and the model's earlier answers
(user, assistant, user, ...). Turns already in `done` (a resumed session) are not asked again;
their stored text is the context of the next turn.

Every call asked once: unless `share_answers` is off (`kontest run --no-cache`) or the model
is a replay, identical requests of this run share one model call. A request identical to one in flight waits
for it (single flight) and takes its answer; a conversation whose first turn repeats an earlier
conversation's (a sequential conversation's first turn is an atomic question) is taken
`2 x concurrency` conversations after that one, so its first turn is usually answered by then
and comes from this run's memo (or the cache) without waiting; a later turn whose questions
so far repeat another conversation's (two relations phrased alike) is answered once too, the
first to ask it keeping its answer in the memo for the others. Answers reused so are stored
as cached responses. Answers of earlier sessions (the cache table) are reused only with
`use_cache=True` (`kontest run --reuse-cache`); they are always written, so a later session
may opt in. With `share_answers=False` every turn is asked. A request is known (memo and
cache key) by the model, the options that shape the answer and the whole chat; when the
model samples (temperature above 0, or the server's default) also by the call's own seed, so
two conversations (each sent its own seed) or two draws never take each other's answer, and
a sample sent no seed is shared with none.

Retryable `ModelError`s (429, 5xx, timeouts, broken streams) are retried with exponential
backoff and jitter, honouring `retry_after`; fatal ones (401/403 unauthorized, 404 unknown
model) are not, and `stop_after_fatal` of them with no answer in between end the run with a
`ModelError` (after storing them); so do `stop_after_identical` turns in a row that failed
with the same error the server answered (an identical 400 for every chat, a gateway's
identical 500 after all its attempts) or the same error that asking again cannot mend (ids
and numbers of 8+ characters aside), since every later turn would get it too. A call that still fails is recorded as an error
response (answer INVALID, `error` set: a *failed* turn, never an answer) and the run goes on;
the later turns of that conversation are not asked (they need its answer as context) and are
recorded as failed with that reason. `failing_after` calls in a row that still fail with a
retryable error (a server that died) call `on_failing` once, and again with 0 when the model
answers: the explorer pauses the run, the command line prints one line. Each response goes
to the sink before the next event (a session's sink, run.writer, stores it within 50 ms, in
one transaction with the others received meanwhile). Cancelling (`cancel()` or cancelling the task)
stops the workers between awaits, so no half-written response exists.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Protocol

from kontest_tui.domain.answers import cut_answer
from kontest_tui.domain.failures import NOT_ASKED, classify_error
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Response
from kontest_tui.domain.seeds import draw_seed
from kontest_tui.errors import KontestError, ModelError
from kontest_tui.kinds.registry import answer_format, read_reply
from kontest_tui.models.base import ChatModel, ChatOptions, ChatRequest, ChatResult, Message

# How long a worker may go on without letting the event loop run its other callbacks.
YIELD_EVERY_S = 0.005


class ResponseSink(Protocol):
    """Where finished responses go (the store binds a session id)."""

    def save_response(self, response: Response, *, cached: bool = False) -> None: ...


class ResponseCache(Protocol):
    """A key -> (raw text, tokens) cache of successful answers."""

    def cache_get(self, key: str) -> tuple[str, int] | None: ...

    def cache_put(self, key: str, model: str, raw: str, tokens: int) -> None: ...


# An answer reused within a run: (raw text, tokens, why it stopped early or None, its margin).
Reused = tuple[str, int, str | None, float | None]


class AnswerCutError(ModelError):
    """The call's timeout cut the answer before it could be read (a stream that stalled
    after "Ye"): asked again while attempts remain; the last attempt's is a cut answer
    (Answer.CUT), never an invalid one."""


@dataclass(slots=True)
class ExecutorConfig:
    """How to ask: concurrency, retries, rate limit, cache use."""

    concurrency: int = 4
    max_attempts: int = 4  # calls per turn, the first one included
    backoff_base: float = 0.5  # seconds before the 2nd attempt; doubles each time
    backoff_max: float = 30.0
    rate_limit: float | None = None  # model calls per second, None = unlimited
    # Reuse answers cached by earlier sessions (same model, options and chat)? Off by default:
    # a new session asks the model; reuse is an explicit opt-in (`kontest run --reuse-cache`).
    use_cache: bool = False
    # Identical requests within this run asked once (single flight, a sequential
    # conversation's first turn answered by its atomic twin)? `kontest run --no-cache` turns
    # it off so that every turn is asked.
    share_answers: bool = True
    jitter_seed: int | None = None  # for reproducible backoff in tests
    stop_after_fatal: int = 3  # 401/403/404 failures with no success since: the run stops
    # Turns in a row that failed with the same rejection (or the same error that asking
    # again cannot mend), with no answer between: the run stops.
    stop_after_identical: int = 5
    # Calls in a row that still failed after all their attempts with an error worth retrying
    # (a server that died, a network gone): the model looks unreachable, and `on_failing`
    # says so once per such streak.
    failing_after: int = 10


@dataclass(slots=True)
class Progress:
    """Counts for the progress bar and the live view."""

    total: int
    done: int = 0
    skipped: int = 0  # answered before this run (resume)
    errors: Counter[str] = field(default_factory=Counter)  # failed calls by type
    retries: int = 0
    invalid: int = 0
    failed: int = 0  # turns with no answer after all attempts (and the turns after them)
    stopped: Counter[str] = field(default_factory=Counter)  # answers cut: timeout / length
    cached: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def finished(self) -> int:
        return self.skipped + self.done

    @property
    def rate(self) -> float:
        """Turns answered per second in this run."""
        elapsed = time.monotonic() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the current rate (None before the first answer)."""
        rate = self.rate
        return (self.total - self.finished) / rate if rate > 0 else None


@dataclass(slots=True)
class ExecutorEvents:
    """Callbacks for the TUI and the progress bar (all optional, called in the loop thread)."""

    on_token: Callable[[str, int, str], None] | None = None  # (conversation id, turn, text)
    # the same with the conversation (a live view names it); used when on_token is not set
    on_stream: Callable[[Conversation, int, str], None] | None = None
    on_response: Callable[[Response], None] | None = None
    # the same, with the conversation it answers (a live view names it without a lookup)
    on_answer: Callable[[Conversation, Response], None] | None = None
    on_progress: Callable[[Progress], None] | None = None
    on_retry: Callable[[str, int, int, str], None] | None = None  # (conv, turn, attempt, error)
    on_state: Callable[[str], None] | None = None  # "paused" | "running" | "cancelling"
    # (turns failed in a row, the last error): once when a streak of failed turns reaches
    # `failing_after` (the model looks unreachable), and (0, "") when an answer ends it
    on_failing: Callable[[int, str], None] | None = None
    # one line worth telling the user once (e.g. replies that look like a base model asked
    # in chat mode: run.notices); run.session feeds it, the executor never calls it
    on_notice: Callable[[str], None] | None = None


@dataclass(slots=True)
class RunResult:
    progress: Progress
    cancelled: bool = False


_json_string: Callable[[str], str] = json.encoder.encode_basestring


def cache_key(spec: str, options: ChatOptions, messages: Sequence[Message]) -> str:
    """SHA-256 of (model spec, answer-shaping options, whole chat incl. system prompt): of
    the JSON text `[spec, shaping, [[role, content], ...]]` (sorted keys, compact)."""
    # The chat's JSON written by hand with json's own string encoder: the same text as
    # json.dumps(..., ensure_ascii=False) at a third of its cost (it sets up an encoder per call).
    chat = ",".join(f"[{_json_string(m.role)},{_json_string(m.content)}]" for m in messages)
    payload = f"{_key_prefix(spec, options)}[{chat}]]"
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def request_key(spec: str, options: ChatOptions, messages: Sequence[Message]) -> str:
    """`cache_key` of the request these messages make with these options: the options'
    system prompt (when they have one) first, then the messages; that first message's JSON
    is made once per options (a run asks millions of turns with one system prompt)."""
    if not messages:
        return cache_key(spec, options, _with_system(messages, options))
    chat = ",".join([f"[{_role_json(m.role)},{_json_string(m.content)}]" for m in messages])
    payload = f"{_request_prefix(spec, options)}{chat}]]"
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


@lru_cache(maxsize=64)
def _request_prefix(spec: str, options: ChatOptions) -> str:
    """The JSON text a request's `cache_key` payload starts with, up to its first message
    from the caller (the system prompt's message and its comma, when there is one)."""
    if not options.system_prompt:
        return f"{_key_prefix(spec, options)}["
    system = f"[{_json_string('system')},{_json_string(options.system_prompt)}]"
    return f"{_key_prefix(spec, options)}[{system},"


@lru_cache(maxsize=16)
def _role_json(role: str) -> str:
    return _json_string(role)


@lru_cache(maxsize=64)
def _key_prefix(spec: str, options: ChatOptions) -> str:
    """The JSON text of `[spec, shaping, ` (what every key of these options starts with)."""
    text = json.dumps(
        [spec, _shaping(options), 0], ensure_ascii=False, separators=(",", ":"), sort_keys=True
    )
    return text[: -len("0]")]


@lru_cache(maxsize=64)
def _shaping_items(options: ChatOptions) -> tuple[tuple[str, object], ...]:
    shaping = asdict(options)
    shaping.pop("timeout", None)
    if not shaping.get("think"):  # the keys of answers stored before `think` existed
        shaping.pop("think", None)
    return tuple(shaping.items())


def _shaping(options: ChatOptions) -> dict[str, object]:
    """The options that shape an answer (all but the timeout), computed once per options."""
    return dict(_shaping_items(options))


def samples(options: ChatOptions) -> bool:
    """Whether answers are draws (a temperature above 0, or the server's default one), so
    that a call's seed is part of what it asks: two seeds are two samples."""
    return options.temperature is None or options.temperature > 0


def request_identity(options: ChatOptions, call: ChatOptions) -> ChatOptions | None:
    """The options a request is known by (its memo and cache key), given the session's
    `options` and the `call`'s (the same with the call's own seed): the session's at
    temperature 0, where the call's seed changes nothing; when the model samples, the
    call's, seed included, as two seeds are two draws; None for a sample sent no seed, a
    draw of its own that no other request shares."""
    if not samples(options):
        return options
    return call if call.seed is not None else None


def is_cacheable(model: ChatModel) -> bool:
    """Whether a model's answers may be cached and shared: not when they depend on more than
    the chat (a recording's on the order they are asked in: its `cacheable = False`)."""
    return bool(getattr(model, "cacheable", True))


class RateLimiter:
    """Spaces call starts at least 1/rate seconds apart (shared by all workers)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


class Executor:
    """Runs conversations against one model with one set of options."""

    def __init__(
        self,
        model: ChatModel,
        options: ChatOptions | None = None,
        *,
        config: ExecutorConfig | None = None,
        sink: ResponseSink | None = None,
        cache: ResponseCache | None = None,
        events: ExecutorEvents | None = None,
        seeds: Mapping[str, int] | None = None,
    ) -> None:
        self.model = model
        # A conversation's own seed, sent whatever the options' (run.confirm: a repeated
        # sample's draw_seed); the others get draw 0 of the options' seed, or none.
        self.seeds: Mapping[str, int] = seeds or {}
        self.options = options or ChatOptions()
        self.config = config or ExecutorConfig()
        if self.config.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.config.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.sink = sink
        self.share = self.config.share_answers and is_cacheable(model)
        self.cache = cache if self.share else None  # written always, read only on opt-in
        self.read_cache = self.share and self.config.use_cache
        self.events = events or ExecutorEvents()
        self.responses: dict[AnswerKey, Response] = {}
        self._random = random.Random(self.config.jitter_seed)
        self._fatal_streak = 0  # fatal failures (ModelError.fatal) since the last answer
        self._fatal_message = ""
        self._same_streak = 0  # turns in a row failed with the same rejection (_same_failure)
        self._same_key = ""
        self._same_message = ""
        self._failing = 0  # turns in a row with no answer (the turns skipped after one aside)
        self._said_failing = False  # on_failing was called for the current streak
        self._uncacheable: set[AnswerKey] = set()  # answers cut by the timeout
        self._limiter = RateLimiter(self.config.rate_limit) if self.config.rate_limit else None
        self._running = asyncio.Event()
        self._running.set()
        self._cancelled = False
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self.progress = Progress(total=0)
        self.calls = 0  # model calls made (attempts included)
        self._inflight: dict[str, asyncio.Future[Reused | None]] = {}
        self._memo: dict[str, Reused] = {}  # answers of this run asked again later
        self._memo_uses: Counter[str] = Counter()  # how many later asks each memo entry serves
        self._first_keys: dict[str, str] = {}  # conversation id -> its first turn's key
        # A later turn whose questions so far repeat another conversation's -> how many other
        # conversations ask it: the first to ask it keeps its answer for them (the memo).
        self._repeated_turns: dict[AnswerKey, int] = {}
        self._prompt_options: dict[str, ChatOptions] = {}  # a conversation's system prompt's
        # An in-process model that answers without awaiting I/O (the simulated model with no
        # latency) cannot hang: its calls need no timeout.
        self._never_waits = bool(getattr(model, "never_waits", False))

    # -- control hooks (TUI buttons, Ctrl-C) ----------------------------------------------

    def pause(self) -> None:
        """Finish the calls in flight, start no new one until `resume()`."""
        self._in_loop(self._pause_now)

    def resume(self) -> None:
        self._in_loop(self._resume_now)

    def _pause_now(self) -> None:
        self._running.clear()
        self._emit_state("paused")

    def _resume_now(self) -> None:
        self._running.set()
        self._failing = 0  # asked again (the model is back?): a new streak is counted
        self._said_failing = False
        self._emit_state("running")

    def _emit_state(self, state: str) -> None:
        if self.events.on_state is not None:
            self.events.on_state(state)

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def cancel(self) -> None:
        """Stop now: calls in flight are abandoned (not stored), the run returns cancelled."""
        self._cancelled = True
        self._in_loop(self._cancel_tasks)

    def _cancel_tasks(self) -> None:
        self._emit_state("cancelling")
        self._running.set()
        for task in self._tasks:
            task.cancel()

    def _in_loop(self, action: Callable[[], None]) -> None:
        """Run `action` in the run's event loop: at once from its own thread, else scheduled
        thread-safely (a TUI button pressed while the run's loop lives in a worker thread)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                current = asyncio.get_running_loop()
            except RuntimeError:
                current = None
            if current is not loop:
                loop.call_soon_threadsafe(action)
                return
        action()

    # -- the run --------------------------------------------------------------------------

    async def run(
        self,
        conversations: Sequence[Conversation],
        done: Mapping[AnswerKey, str] | None = None,
    ) -> RunResult:
        """Ask every turn not in `done` ((conversation, turn) -> stored raw text)."""
        done = done or {}
        self.model.prepare(conversations)
        total = sum(len(c.turns) for c in conversations)
        skipped = sum(1 for c in conversations for t in range(len(c.turns)) if (c.id, t) in done)
        self.begin(total, skipped)
        await self.ask(conversations, done)
        return self.result()

    def begin(self, total: int, skipped: int) -> None:
        """Start a run of `total` turns, `skipped` of them answered before it: what `run`
        does before asking; a run in chunks (run.session) then calls `ask` per chunk (the
        model's `prepare` is the caller's: only models that need no preparation, i.e. not
        a replay, are asked in chunks)."""
        self._loop = asyncio.get_running_loop()
        self.progress = Progress(total=total, skipped=skipped)
        self._emit_progress()

    def result(self) -> RunResult:
        return RunResult(progress=self.progress, cancelled=self._cancelled)

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    async def ask(
        self, conversations: Sequence[Conversation], done: Mapping[AnswerKey, str]
    ) -> None:
        """Ask every turn of `conversations` not in `done` (one chunk of a run: the memo of
        repeated first turns lives for the chunk; `responses` holds this chunk's answers
        when the caller clears it between chunks). Returns early when cancelled."""
        if self._cancelled:
            return
        self._memo.clear()
        self._memo_uses.clear()
        self._first_keys.clear()
        self._repeated_turns.clear()
        pending = (
            [
                conversation
                for conversation in conversations
                if any((conversation.id, t) not in done for t in range(len(conversation.turns)))
            ]
            if done
            else [conversation for conversation in conversations if conversation.turns]
        )
        if not pending:
            return
        workers = min(self.config.concurrency, max(len(pending), 1))
        if self.share:
            pending = self._order_shared(pending, done, 2 * workers)
        queue: asyncio.Queue[Conversation] = asyncio.Queue()
        for conversation in pending:
            queue.put_nowait(conversation)
        self._tasks = [asyncio.create_task(self._work(queue, done)) for _ in range(workers)]
        try:
            await asyncio.gather(*self._tasks)
        except BaseException as error:
            # One worker failed (e.g. the store), the run was cancelled, or the caller's task
            # was (Ctrl-C): stop every worker before returning or re-raising.
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            if not (isinstance(error, asyncio.CancelledError) and self._cancelled):
                raise
        finally:
            self._tasks = []

    def _order_shared(
        self, pending: list[Conversation], done: Mapping[AnswerKey, str], window: int
    ) -> list[Conversation]:
        """Generation order, except that a conversation whose first turn repeats an earlier
        one's goes `window` places after that one (so it usually finds the answer ready); the
        memo keeps such first answers until their last repeat has taken them. Later turns
        whose questions so far repeat another conversation's (two relations phrased alike)
        are noted too: the first of them to be asked keeps its answer for the others
        (_repeated_turns), as their requests are the same once the earlier turns are (a
        conversation whose first turns were answered before, a resumed one or one asked
        again with answers reused, run.rerun, included)."""
        first_seen: dict[str, int] = {}
        placed: list[tuple[int, int, Conversation]] = []
        later: dict[tuple[str, ...], list[AnswerKey]] = {}
        for index, conversation in enumerate(pending):
            if not conversation.turns:
                placed.append((index, index, conversation))
                continue
            answered_first = (conversation.id, 0) in done
            if answered_first and all(
                (conversation.id, turn) in done for turn in range(1, len(conversation.turns))
            ):
                placed.append((index, index, conversation))
                continue
            key = self._key(conversation, (Message("user", conversation.turns[0].text),))
            if key is None:  # a draw of its own (an unseeded sample): shared with none
                placed.append((index, index, conversation))
                continue
            for turn in range(1, len(conversation.turns)):
                if (conversation.id, turn) not in done:
                    texts = tuple(query.text for query in conversation.turns[1 : turn + 1])
                    later.setdefault((key, *texts), []).append((conversation.id, turn))
            if answered_first:
                placed.append((index, index, conversation))
                continue
            self._first_keys[conversation.id] = key
            leader = first_seen.setdefault(key, index)
            if leader == index:
                placed.append((index, index, conversation))
            else:
                self._memo_uses[key] += 1
                placed.append((max(index, leader + window), index, conversation))
        for turns in later.values():
            if len(turns) > 1:
                self._repeated_turns.update(dict.fromkeys(turns, len(turns) - 1))
        placed.sort(key=lambda item: (item[0], item[1]))
        return [conversation for _, _, conversation in placed]

    def _key(self, conversation: Conversation, messages: Sequence[Message]) -> str | None:
        identity = self._identity(self._options_for(conversation), conversation)
        if identity is None:
            return None
        return request_key(self.model.spec, identity, messages)

    def _identity(self, options: ChatOptions, conversation: Conversation) -> ChatOptions | None:
        """The options a request of this conversation is known by (`request_identity`)."""
        if not samples(options):
            return options
        return request_identity(options, self._seeded(options, conversation))

    def _options_for(self, conversation: Conversation) -> ChatOptions:
        options = self.options
        prompt = conversation.system_prompt
        if prompt is not None and options.system_prompt is None:
            with_prompt = self._prompt_options.get(prompt)
            if with_prompt is None:
                # every other option kept (`think` among them)
                with_prompt = replace(options, system_prompt=prompt)
                self._prompt_options[prompt] = with_prompt
            return with_prompt
        return options

    async def _work(
        self, queue: asyncio.Queue[Conversation], done: Mapping[AnswerKey, str]
    ) -> None:
        pace = _Pace()
        while not queue.empty() and not self._cancelled:
            conversation = queue.get_nowait()
            await self._ask_conversation(conversation, done, pace)

    async def _ask_conversation(
        self, conversation: Conversation, done: Mapping[AnswerKey, str], pace: _Pace
    ) -> None:
        messages: list[Message] = []
        options = self._options_for(conversation)
        identity = self._identity(options, conversation) if self.share else None
        for turn, query in enumerate(conversation.turns):
            messages.append(Message("user", query.text))
            stored = done.get((conversation.id, turn))
            if stored is None:
                # Let the loop run its other callbacks every few ms: a model that never
                # suspends (the simulated one) would otherwise hold off pause() from the UI
                # thread, which arrives through call_soon_threadsafe, until the run ends.
                if pace.due():
                    await asyncio.sleep(0)
                if not self._running.is_set():
                    await self._running.wait()
                if self._cancelled:
                    return  # models that never suspend see cancel() here
                response = await self._ask_turn(
                    conversation, turn, tuple(messages), options, identity
                )
                if response.error is not None:
                    self._skip_after_failure(conversation, turn, done)
                    return
                stored = response.raw
            messages.append(Message("assistant", stored))

    def _skip_after_failure(
        self, conversation: Conversation, failed: int, done: Mapping[AnswerKey, str]
    ) -> None:
        """Record the turns after a failed one as failed too, without asking them: their
        context (the failed turn's answer) does not exist. A resume asks them all again."""
        for turn in range(failed + 1, len(conversation.turns)):
            if (conversation.id, turn) in done:
                continue
            message = f"{NOT_ASKED} turn {failed + 1} of this conversation failed"
            response = Response(conversation.id, turn, "", Answer.INVALID, message, 0.0, 0, 0)
            self._finish(conversation, response)

    async def _ask_turn(
        self,
        conversation: Conversation,
        turn: int,
        messages: tuple[Message, ...],
        options: ChatOptions,
        identity: ChatOptions | None,
    ) -> Response:
        """Ask one turn; `identity`: the options its request is known by (`_identity`),
        None when it shares no answer with another request."""
        key = None
        if identity is not None:
            key = (
                self._first_keys.pop(conversation.id, None) if turn == 0 else None
            ) or request_key(self.model.spec, identity, messages)
            repeats = self._repeated_turns.pop((conversation.id, turn), 0) if turn else 0
            if repeats and key not in self._memo_uses and key not in self._memo:
                self._memo_uses[key] = repeats  # the first of its repeats: kept for the others
            while True:
                hit = self._reuse(key)
                if hit is not None:
                    return self._finish_reused(conversation, turn, hit)
                leader = self._inflight.get(key)
                if leader is None:
                    break
                # Single flight: the same request is being asked; take its answer (shielded:
                # cancelling this task must not cancel the leader's future). A failed leader
                # gives None and this turn asks on its own.
                shared = await asyncio.shield(leader)
                if shared is not None:
                    self._forget(key)
                    return self._finish_reused(conversation, turn, shared)
            future: asyncio.Future[Reused | None] = asyncio.get_running_loop().create_future()
            self._inflight[key] = future
            try:
                response = await self._ask_model(conversation, turn, messages, options)
                answered = (
                    (response.raw, response.tokens, response.stopped, response.p_yes)
                    if response.error is None and (conversation.id, turn) not in self._uncacheable
                    else None
                )
                if answered is not None and key in self._memo_uses:
                    self._memo[key] = answered
                future.set_result(answered)
            finally:
                del self._inflight[key]
                if not future.done():
                    future.set_result(None)
            if (
                answered is not None
                and self.cache is not None
                and response.stopped is None  # the cache keeps whole answers only
            ):
                self.cache.cache_put(key, self.model.spec, response.raw, response.tokens)
            self._finish(conversation, response)
            self._stop_if_hopeless()
            return response
        response = await self._ask_model(conversation, turn, messages, options)
        self._finish(conversation, response)
        self._stop_if_hopeless()
        return response

    def _reuse(self, key: str) -> Reused | None:
        """An answer to this request from this run's memo or the cache, or None."""
        hit = self._memo.get(key)
        if hit is None and self.cache is not None and self.read_cache:
            cached = self.cache.cache_get(key)
            hit = None if cached is None else (*cached, None, None)
        if hit is not None:
            self._forget(key)
        return hit

    def _forget(self, key: str) -> None:
        """One planned repeat of `key` answered: drop its memo entry after the last one."""
        uses = self._memo_uses.get(key)
        if uses is None:
            return
        if uses <= 1:
            del self._memo_uses[key]
            self._memo.pop(key, None)
        else:
            self._memo_uses[key] = uses - 1

    def _finish_reused(self, conversation: Conversation, turn: int, hit: Reused) -> Response:
        """Record an answer taken from the memo, the cache or a call in flight (an answer
        the token limit cut is as cut when reused)."""
        raw, tokens, stopped, p_yes = hit
        if self.events.on_token is not None:
            self.events.on_token(conversation.id, turn, raw)  # the live view shows it
        response = Response(
            conversation.id,
            turn,
            raw,
            read_reply(conversation, raw, stopped),
            None,
            0.0,
            tokens,
            0,
            stopped=stopped,
            p_yes=p_yes,
        )
        self._finish(conversation, response, cached=True)
        return response

    async def _ask_model(
        self,
        conversation: Conversation,
        turn: int,
        messages: tuple[Message, ...],
        options: ChatOptions,
    ) -> Response:
        """Ask the model (with retries); the response, an error response when it failed.

        A session seed (`options.seed`, --model-seed) is sent as this conversation's own seed
        (domain.seeds.draw_seed, draw 0): reproducible by a rerun, different per conversation."""
        options = self._seeded(options, conversation)
        reads = answer_format(conversation)
        request = ChatRequest(
            messages=messages,
            options=options,
            conversation_id=conversation.id,
            turn=turn,
            kind=conversation.kind,
            answer_format=reads,
        )
        on_token = None
        if self.events.on_token is not None:
            callback = self.events.on_token
            conversation_id = conversation.id

            def on_token(text: str) -> None:
                callback(conversation_id, turn, text)

        elif self.events.on_stream is not None and not self._never_waits:
            # (a model that answers in process has nothing to watch arrive: it would only
            # be made to split its answer into tokens)
            stream = self.events.on_stream

            def on_token(text: str) -> None:
                stream(conversation, turn, text)

        attempt = 0
        while True:
            attempt += 1
            if self._limiter is not None:
                await self._limiter.wait()
            started = time.perf_counter()
            self.calls += 1
            try:
                result = await self._call(request, on_token)
                if result.stopped is not None:
                    raw, cut = cut_answer(result.text)
                    cut += result.dropped
                    parsed = read_reply(conversation, raw, result.stopped)
                    if (
                        result.stopped == "timeout"
                        and parsed is Answer.CUT
                        and attempt < self.config.max_attempts
                    ):
                        raise AnswerCutError(
                            f"the timeout ({request.options.timeout:g} s) cut the answer after "
                            f"{len(result.text)} characters, before it could be read",
                            retryable=True,
                        )
            except ModelError as error:
                message = str(error) or type(error).__name__
                if error.retryable and attempt < self.config.max_attempts:
                    self.progress.retries += 1
                    if self.events.on_retry is not None:
                        self.events.on_retry(conversation.id, turn, attempt, message)
                    await asyncio.sleep(self._backoff(attempt, error.retry_after))
                    continue
                latency = (time.perf_counter() - started) * 1000.0
                self._count_failure(error, message)
                return Response(
                    conversation.id,
                    turn,
                    "",
                    Answer.INVALID,
                    message,
                    latency,
                    0,
                    attempt,
                    stopped="timeout" if isinstance(error, AnswerCutError) else None,
                )
            self._count_answer()
            latency = result.latency_ms or (time.perf_counter() - started) * 1000.0
            if result.stopped is None:
                raw, cut = cut_answer(result.text)
                cut += result.dropped
                parsed = read_reply(conversation, raw)
            else:
                self.progress.stopped[result.stopped] += 1
                if result.stopped == "timeout":  # depends on the machine's speed: not cached
                    self._uncacheable.add((conversation.id, turn))
            return Response(
                conversation.id,
                turn,
                raw,
                parsed,
                None,
                latency,
                result.tokens,
                attempt,
                cut,
                result.stopped,
                result.p_yes if reads == "yes_no" else None,
            )

    def _seeded(self, options: ChatOptions, conversation: Conversation) -> ChatOptions:
        """The options with this call's own seed: the conversation's given one (`seeds`),
        else draw 0 of the session's seed (none when it has none)."""
        own_seed = self.seeds.get(conversation.id)
        if own_seed is not None:
            return replace(options, seed=own_seed)
        if options.seed is not None:
            return replace(options, seed=draw_seed(options.seed, conversation.id))
        return options

    async def _call(
        self, request: ChatRequest, on_token: Callable[[str], None] | None
    ) -> ChatResult:
        """One model call; unexpected failures become ModelErrors (timeouts retryable)."""
        try:
            if self._never_waits:  # nothing to time out (and asyncio.timeout costs ~10 us)
                return await self.model.chat(request, on_token)
            async with asyncio.timeout(request.options.timeout + 5.0):
                return await self.model.chat(request, on_token)
        except ModelError:
            raise
        except TimeoutError:
            raise ModelError(
                f"timed out after {request.options.timeout:g} s", retryable=True
            ) from None
        except KontestError as error:
            raise ModelError(str(error)) from None
        except Exception as error:  # a client bug must cost one error row, not the whole run
            message = " ".join(str(error).split()) or "no message"
            raise ModelError(f"{type(error).__name__}: {message}") from None

    def _stop_if_hopeless(self) -> None:
        """Raise (ending the run) once `stop_after_fatal` calls in a row failed with an error
        that every call would hit (unauthorized, unknown model) instead of asking every turn."""
        if self._fatal_streak >= self.config.stop_after_fatal:
            raise ModelError(
                f"run stopped: {self._fatal_streak} calls in a row failed with "
                f"{self._fatal_message}",
                fatal=True,
            )
        if self._same_streak >= self.config.stop_after_identical:
            raise ModelError(
                f"run stopped: {self._same_streak} turns in a row failed the same way, every "
                f"turn would: {self._same_message}",
                fatal=True,
            )

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter (x0.5..1.5); a server's Retry-After wins if longer."""
        delay = min(self.config.backoff_max, self.config.backoff_base * 2.0 ** (attempt - 1))
        delay *= 0.5 + self._random.random()
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.config.backoff_max))
        return delay

    def _finish(
        self, conversation: Conversation, response: Response, *, cached: bool = False
    ) -> None:
        if self.sink is not None:
            self.sink.save_response(response, cached=cached)
        self.responses[response.conversation_id, response.turn] = response
        progress = self.progress
        progress.done += 1
        if cached:
            progress.cached += 1
        if response.error is not None:
            progress.failed += 1
        elif response.answer is Answer.INVALID:
            progress.invalid += 1
        if self.events.on_response is not None:
            self.events.on_response(response)
        if self.events.on_answer is not None:
            self.events.on_answer(conversation, response)
        self._emit_progress()

    def _count_failure(self, error: ModelError, message: str) -> None:
        """A call failed for good (its attempts spent): counted by class; a fatal one adds
        to the fatal streak; a retryable one to the streak of turns without an answer (the
        model may be unreachable), said once when it reaches `failing_after`."""
        self.progress.errors[classify_error(message)] += 1
        if error.fatal:
            self._fatal_streak += 1
            self._fatal_message = message
        self._count_same_failure(error, message)
        if not error.retryable:
            return
        self._failing += 1
        if self._failing == self.config.failing_after and not self._said_failing:
            self._said_failing = True
            if self.events.on_failing is not None:
                self.events.on_failing(self._failing, message)

    def _count_same_failure(self, error: ModelError, message: str) -> None:
        """A turn failed for good: one more in the streak of turns failed the same way when
        the server refused it (`rejected`) or asking again cannot mend it (not retryable);
        a failure of the transport (timeouts, refused connections: the model unreachable,
        said by `on_failing`) neither counts nor breaks the streak."""
        if error.retryable and not error.rejected:
            return
        key = _same_failure(message)
        if key == self._same_key:
            self._same_streak += 1
        else:
            self._same_key, self._same_streak = key, 1
        self._same_message = message

    def _count_answer(self) -> None:
        """The model answered: the streaks are over (one that was said, said to be over)."""
        self._fatal_streak = 0
        self._same_streak = 0
        self._failing = 0
        if self._said_failing:
            self._said_failing = False
            if self.events.on_failing is not None:
                self.events.on_failing(0, "")

    def _emit_progress(self) -> None:
        if self.events.on_progress is not None:
            self.events.on_progress(self.progress)


class _Pace:
    """When a worker next lets the event loop run: at its first turn, then every
    YIELD_EVERY_S (a yield per turn cost ~10% of a run with the in-process model)."""

    __slots__ = ("next",)

    def __init__(self) -> None:
        self.next = 0.0

    def due(self) -> bool:
        now = time.monotonic()
        if now < self.next:
            return False
        self.next = now + YIELD_EVERY_S
        return True


# Ids, request numbers and times in an error (8+ characters with a digit) that differ between
# two failures of the same kind.
_VARYING = re.compile(r"[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*")


def _same_failure(message: str) -> str:
    """An error message with what varies between identical rejections masked."""
    return _VARYING.sub(lambda m: "#" if len(m.group()) >= 8 else m.group(), message)


def _with_system(messages: Sequence[Message], options: ChatOptions) -> tuple[Message, ...]:
    if options.system_prompt:
        return (Message("system", options.system_prompt), *messages)
    return tuple(messages)
