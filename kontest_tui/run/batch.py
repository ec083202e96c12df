"""Batch mode: a session's pending turns as OpenAI Batch API JSONL, and the results read back.

For bulk runs on the batch engines providers already run (OpenAI's Batch API, vLLM's
`run-batch`): `write_batch` writes one request line per distinct pending chat
(`{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body": {...}}`, the body
the OpenAI client would send; `/v1/completions` lines with the few-shot prompt, its stop and
max tokens for a completions-mode session, which OpenAI's Batch API runs and vLLM's
`run-batch` does not (the phase's `note` says so); Ollama, replay and local sessions are
refused in one line) into a file no earlier phase used; a turn is pending when it has no stored response and every
earlier turn of its conversation has an answer, so the first phase holds every first turn and
the next the second turns of sequential conversations (they need the first answers as
context). `ingest_results` reads the engine's output lines (`{"custom_id", "response":
{"status_code", "body"}, "error"}`) and stores each answer as the response of every turn
asking that chat (the first as asked, the others as cached, like the executor's single
flight); a line with an error or a non-200 status is a failed turn whose error text
(OpenAI's and vLLM's shapes) is kept, scrubbed of secrets; a custom_id given twice is refused;
lines for chats no longer pending (an older phase, another session) are ignored and counted. `batch_phase` is one step:
ingest, then write the next phase or evaluate the finished session. models/sim/batch.py is the
simulated model as a batch engine (`kontest sim batch`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Response
from kontest_tui.domain.seeds import draw_seed
from kontest_tui.errors import InvalidInputError
from kontest_tui.kinds.registry import answer_format, parse_reply
from kontest_tui.models.base import ChatOptions, Message
from kontest_tui.models.completion_prompt import load_completion_prompt, render_completion_prompt
from kontest_tui.models.http_common import DEFAULT_CHAT_MAX_TOKENS
from kontest_tui.models.provider import CHAT, COMPLETIONS
from kontest_tui.models.providers.openai import max_tokens_field
from kontest_tui.models.registry import all_providers
from kontest_tui.models.specs import parse_model_spec
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.redact import scrub, scrub_values
from kontest_tui.results.evaluate import evaluate_session, evaluation_engine
from kontest_tui.run.executor import cache_key, request_identity, samples
from kontest_tui.run.session import options_from_dict
from kontest_tui.store.database import Store
from kontest_tui.store.text import storable_text
from kontest_tui.validate_input import read_jsonl

BATCH_URL = "/v1/chat/completions"
COMPLETIONS_URL = "/v1/completions"
# Said when a completions-mode session's requests are written.
COMPLETIONS_NOTE = (
    "these are /v1/completions lines (completions mode): OpenAI's Batch API runs them, vLLM's "
    "run-batch does not (it takes chat, embeddings, score and rerank lines only); for a base "
    "model on vLLM, run the session live against `vllm serve` instead"
)


def check_batch_model(spec: str) -> None:
    """One line refusing a session whose model no batch engine runs (Ollama, replay, local):
    the providers that say `batch` (OpenAI's Batch API takes chat and completions lines,
    vLLM's run-batch chat lines; `kontest sim batch` is the simulated model as one)."""
    kind = parse_model_spec(spec).kind
    engines = [provider.prefix for provider in all_providers() if provider.batch]
    if kind not in engines:
        raise InvalidInputError(
            f"batch mode writes OpenAI Batch API files ({', '.join(f'{p}:' for p in engines)}); "
            f"{kind}: models have no batch engine: run the session without --batch-out"
        )


@dataclass(frozen=True, slots=True)
class PendingTurn:
    """A turn whose context is complete: its chat and the chat's cache key (its custom_id)."""

    conversation: Conversation
    turn: int
    messages: tuple[Message, ...]  # the system prompt first when there is one
    options: ChatOptions  # the session's, with the conversation's system prompt
    key: str


def _options_for(options: ChatOptions, conversation: Conversation) -> ChatOptions:
    """The executor's rule: a conversation's own system prompt when the session sets none."""
    if conversation.system_prompt is not None and options.system_prompt is None:
        return replace(options, system_prompt=conversation.system_prompt)
    return options


def _key(
    spec: str,
    options: ChatOptions,
    conversation: Conversation,
    turn: int,
    chat: tuple[Message, ...],
) -> str:
    """A pending turn's custom_id: its request's key as the executor knows it
    (run.executor.request_identity: with the call's seed when the model samples), so that
    one line asks what the executor would ask once. A sample sent no seed is a draw of its
    own: its key names the conversation and turn too, and no other turn shares it."""
    seed = options.seed
    call = options if seed is None else replace(options, seed=draw_seed(seed, conversation.id))
    identity = request_identity(options, call)
    if identity is None:
        return cache_key(spec, options, (Message(f"{conversation.id}#{turn}", ""), *chat))
    return cache_key(spec, identity, chat)


def _unshared(options: ChatOptions) -> bool:
    """A sample sent no seed: its answer is no other request's (nor cached)."""
    return samples(options) and options.seed is None


def pending_turns(
    conversations: Sequence[Conversation],
    done: Mapping[AnswerKey, str],
    options: ChatOptions,
    spec: str,
    failed: Collection[AnswerKey] = (),
) -> Iterator[PendingTurn]:
    """The next unanswered turn of every conversation whose earlier turns are all answered
    (a conversation with a `failed` turn has none: its context does not exist)."""
    for conversation in conversations:
        chosen = _options_for(options, conversation)
        messages: list[Message] = []
        if chosen.system_prompt:
            messages.append(Message("system", chosen.system_prompt))
        for turn, query in enumerate(conversation.turns):
            messages.append(Message("user", query.text))
            if (conversation.id, turn) in failed:
                break
            answer = done.get((conversation.id, turn))
            if answer is None:
                chat = tuple(messages)
                yield PendingTurn(
                    conversation, turn, chat, chosen, _key(spec, chosen, conversation, turn, chat)
                )
                break
            messages.append(Message("assistant", answer))


def request_line(
    pending: PendingTurn, model: str, max_tokens_field: str, completions: bool = False
) -> dict[str, Any]:
    """One OpenAI Batch API request line: the body models/openai.py would POST (chat, or
    completions mode's few-shot prompt with its stop and max tokens)."""
    options = pending.options
    body: dict[str, Any] = {"model": model}
    if completions:
        prompt = load_completion_prompt(answer_format(pending.conversation))
        body["prompt"] = render_completion_prompt(pending.messages, prompt)
        body["max_tokens"] = options.max_tokens or prompt.max_tokens
        if prompt.stop:
            body["stop"] = list(prompt.stop)
    else:
        body["messages"] = [{"role": m.role, "content": m.content} for m in pending.messages]
        body[max_tokens_field] = options.max_tokens or DEFAULT_CHAT_MAX_TOKENS
    if options.temperature is not None:  # None: the engine's default
        body["temperature"] = options.temperature
    if options.seed is not None:  # the conversation's own seed, as the executor sends it
        body["seed"] = draw_seed(options.seed, pending.conversation.id)
    url = COMPLETIONS_URL if completions else BATCH_URL
    return {"custom_id": pending.key, "method": "POST", "url": url, "body": body}


def write_batch(path: Path, pending: Sequence[PendingTurn], spec: str) -> int:
    """Write one request line per distinct pending chat into a new file `path` (never over
    another phase's); return how many lines."""
    check_batch_model(spec)
    parsed = parse_model_spec(spec)
    completions = parsed.mode == COMPLETIONS
    field = max_tokens_field(parsed.url) if parsed.mode == CHAT and parsed.url else "max_tokens"
    seen: set[str] = set()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as out:
            for turn in pending:
                if turn.key not in seen:
                    seen.add(turn.key)
                    line = request_line(turn, parsed.name, field, completions)
                    out.write(json.dumps(line) + "\n")
    except OSError as error:
        raise InvalidInputError(
            f"cannot write batch file {path}: {error.strerror or error}"
        ) from None
    return len(seen)


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One output line: the answer text and tokens, or the error that replaced it."""

    text: str | None
    tokens: int
    error: str | None


def read_results(path: Path) -> dict[str, BatchResult]:
    """custom_id -> result of a batch engine's output JSONL; InvalidInputError (naming the
    line) on a line that is not a result, and on a custom_id given twice (which answer
    would be the model's?)."""
    results: dict[str, BatchResult] = {}
    lines = read_jsonl(
        path,
        _keyed_result,
        what="batch results",
        line_is="a batch result line (a JSON object with custom_id, response and error)",
    )
    for number, (custom_id, result) in enumerate(lines, 1):
        if custom_id in results:
            raise InvalidInputError(
                f"{path}: result {number} repeats custom_id {custom_id[:16]}... (each request "
                "has one result; was the file joined from two runs?)"
            )
        results[custom_id] = result
    return results


def _keyed_result(data: Any) -> tuple[str, BatchResult]:
    custom_id = data["custom_id"]
    if not isinstance(custom_id, str):
        raise TypeError
    return custom_id, _read_result(data)


def error_text(error: object) -> str | None:
    """The message of an error object as batch engines write them: OpenAI's `{"code",
    "message"}` or `{"error": {"message", ...}}`, vLLM's ErrorResponse `{"object": "error",
    "message", "type", "code"}`, or a plain string; None when there is none."""
    while isinstance(error, dict) and isinstance(error.get("error"), dict | str):
        error = error["error"]
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail")
        if not message:
            return json.dumps(error, ensure_ascii=False)[:300] if error else None
        code = error.get("code") or error.get("type")
        return f"{code}: {message}" if code and str(code) not in str(message) else str(message)
    return str(error) if error else None


def _batch_error(text: str) -> BatchResult:
    """A failed result: its text one line, secrets scrubbed (it is stored and exported)."""
    return BatchResult(None, 0, scrub(f"batch error: {' '.join(text.split())}"[:1000]))


def _read_result(data: Mapping[str, Any]) -> BatchResult:
    response = data.get("response") or {}
    if not isinstance(response, dict):
        raise TypeError
    if "choices" in response and "body" not in response:  # the completion itself, no envelope
        response = {"status_code": 200, "body": response}
    status = response.get("status_code")
    body = response.get("body") or {}
    said = error_text(data.get("error"))
    if said is not None or status != 200:
        said = said or error_text(body.get("error") if isinstance(body, dict) else body)
        http = f"HTTP {status}" if status not in (None, 200) else ""
        return _batch_error(": ".join(part for part in (http, said) if part) or "no answer")
    try:
        choice = body["choices"][0]
        text = choice["message"]["content"] if "message" in choice else choice["text"]
    except (KeyError, IndexError, TypeError):
        return _batch_error("no message in the response body")
    if not isinstance(text, str | None):
        return _batch_error("the response's content is not text")
    # An engine echoing the key in an answer: masked as the streaming clients mask it.
    text = scrub_values(text or "")
    usage = body.get("usage")
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else 0
    # stored as the store keeps it, so the next turn's chat (and key) is the stored one
    return BatchResult(
        storable_text(text),
        tokens if isinstance(tokens, int) and tokens > 0 else 0,
        None,
    )


@dataclass(frozen=True, slots=True)
class Ingested:
    """What a results file gave: answered and failed turns, lines for no pending turn."""

    answered: int
    failed: int
    ignored: int


def ingest_results(
    store: Store,
    session_id: str,
    pending: Sequence[PendingTurn],
    results: Mapping[str, BatchResult],
    spec: str,
) -> Ingested:
    """Store the results of the pending turns in one transaction (see the module docstring)."""
    used: set[str] = set()
    answered = failed = 0
    with store.transaction():
        for turn in pending:
            result = results.get(turn.key)
            if result is None:
                continue
            conversation = turn.conversation
            first = turn.key not in used
            used.add(turn.key)
            if result.text is None:
                response = Response(
                    conversation.id, turn.turn, "", Answer.INVALID, result.error, 0.0, 0, 1
                )
                failed += 1
            else:
                answer = parse_reply(conversation, result.text)
                attempts = 1 if first else 0
                response = Response(
                    conversation.id,
                    turn.turn,
                    result.text,
                    answer,
                    None,
                    0.0,
                    result.tokens,
                    attempts,
                )
                answered += 1
                if first and not _unshared(turn.options):
                    store.cache.put(turn.key, spec, result.text, result.tokens)
            store.responses.save(session_id, response, cached=not first and result.text is not None)
    return Ingested(answered, failed, len(set(results) - used))


def next_turns(
    pending: Sequence[PendingTurn], results: Mapping[str, BatchResult], spec: str
) -> Iterator[PendingTurn]:
    """The pending turns after `results` are stored, without reading the store again: a turn
    with no result line stays pending, an answered one is followed by its conversation's next
    turn (with the answer as context), a failed one by nothing."""
    for turn in pending:
        result = results.get(turn.key)
        if result is None:
            yield turn
            continue
        conversation, following = turn.conversation, turn.turn + 1
        if result.text is None or following >= len(conversation.turns):
            continue
        chat = (
            *turn.messages,
            Message("assistant", result.text),
            Message("user", conversation.turns[following].text),
        )
        yield PendingTurn(
            conversation,
            following,
            chat,
            turn.options,
            _key(spec, turn.options, conversation, following, chat),
        )


@dataclass(frozen=True, slots=True)
class BatchPhase:
    """One step of batch mode: what was stored, and the next requests or the evaluation."""

    session_id: str
    ingested: Ingested | None
    written: Path | None  # the next phase's request file
    requests: int  # its lines (distinct chats)
    turns: int  # the turns they answer
    evaluation: Evaluation | None  # when no turn is left
    note: str | None = None  # what to know about the requests written (COMPLETIONS_NOTE)


def _pending(
    store: Store, session_id: str, conversations: Sequence[Conversation]
) -> list[PendingTurn]:
    row = store.sessions.get(session_id)
    responses = store.responses.load(session_id)
    done = {key: response.raw for key, response in responses.items() if response.error is None}
    failed = {key for key, response in responses.items() if response.error is not None}
    options = options_from_dict(row["options_json"])
    return list(pending_turns(conversations, done, options, row["model"], failed))


def _phase_path(folder: Path, stem: str) -> Path:
    """A request file name no earlier phase used (`STEM.jsonl`, then `STEM-2.jsonl`, ...): a
    phase asking failed turns again never overwrites the file whose results are awaited."""
    path, number = folder / f"{stem}.jsonl", 1
    while path.exists():
        number += 1
        path = folder / f"{stem}-{number}.jsonl"
    return path


def batch_phase(
    store: Store, session_id: str, batch_in: Path | None, batch_out: Path | None
) -> BatchPhase:
    """Store the results file `batch_in` (when given), then write the next phase's requests
    under `batch_out` (default: the results file's folder; the session waits, `paused`) or,
    when no turn is left, evaluate the session and store its verdicts (`done`, or `failed`
    when turns failed: a phase without results, `--resume ID --batch-out DIR`, requests
    them again)."""
    started = time.monotonic()
    lease = store.leases.acquire(session_id)
    try:
        row = store.sessions.get(session_id)
        spec = row["model"]
        check_batch_model(spec)
        conversations = store.relations.load_conversations(session_id)
        ingested = None
        if batch_in is None:
            store.responses.delete_failed(session_id)  # failed turns are requested again
            left = _pending(store, session_id, conversations)
        else:
            results = read_results(batch_in)
            pending = _pending(store, session_id, conversations)
            ingested = ingest_results(store, session_id, pending, results, spec)
            left = list(next_turns(pending, results, spec))
        elapsed = (row["elapsed_s"] or 0.0) + time.monotonic() - started
        if left:
            folder = batch_out if batch_out is not None else (batch_in or Path(".")).parent
            path = _phase_path(folder, f"{session_id}-turn{min(t.turn for t in left) + 1}")
            lines = write_batch(path, left, spec)
            store.sessions.finish_run(
                session_id,
                lease=lease,
                status="paused",
                elapsed_s=elapsed,
                message=f"waiting for batch results of {path}",
            )
            completions = parse_model_spec(spec).mode == COMPLETIONS
            note = COMPLETIONS_NOTE if completions else None
            return BatchPhase(session_id, ingested, path, lines, len(left), None, note)
        evaluation = evaluate_session(store, session_id)
        status = "failed" if evaluation.failed else "done"
        store.sessions.finish_run(
            session_id,
            lease=lease,
            status=status,
            message=f"{evaluation.failed} turns failed in batch mode"
            if evaluation.failed
            else None,
            elapsed_s=elapsed,
            verdicts=evaluation.verdicts,
            oracle_error_rate=evaluation.listed_error_rate,
            oracle_errors=evaluation.error_total,
            report=evaluation.to_json(),  # what `kontest report` reads (store.reports)
            engine=evaluation_engine(),
        )
        return BatchPhase(session_id, ingested, None, 0, 0, evaluation)
    except BaseException:
        store.leases.release(lease)
        raise
