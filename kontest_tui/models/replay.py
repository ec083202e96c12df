"""The replay model (`replay:FILE.jsonl`): answers every question from recorded answers.

Each line is `{"messages": [user turns...], "answer": str, "kind": "atomic"|"sequential"}`
(kind optional) or `{"query": str}` (= one user turn, no kind). A line whose `"error"` is a
string is a turn that failed when it was recorded (a `kontest export` of a session with
failed turns writes them so, `"answer": ""`): replayed, that turn fails again with the
recorded error, never an empty answer. A turn is looked up after
whitespace normalisation, most specific first: a line of the turn's conversation kind with
exactly the user turns asked so far, then a line without a kind with those turns. Each line
answers one turn: a key recorded several times gives its answers in file order (`prepare()`
hands the n-th ask of a key, in generation order, the n-th line, so concurrency cannot
reorder them). A turn with no unused line is *not in the recording*: a non-retryable
ModelError that the executor stores as a failed turn (the report counts them), never an
answer taken from another line (the last turn alone, another conversation kind, a line
already used).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kontest_tui.domain.failures import NOT_ASKED
from kontest_tui.domain.records import AnswerKey, Conversation
from kontest_tui.errors import InvalidInputError, KontestError, ModelError, ModelSpecError
from kontest_tui.models.base import ChatRequest, ChatResult, TokenCallback
from kontest_tui.models.providers.replay import PREFIX, file_spec
from kontest_tui.validate_input import loads_json, read_input_text

KINDS = ("atomic", "sequential")
# The start of a replay failure's text (run.executor counts failed turns by it).
NOT_RECORDED = "not in the recording"
# The start of the error of a turn the recording holds as failed.
RECORDED_FAILURE = "failed in the recording"

Key = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RecordedFailure:
    """A line for a turn that failed when it was recorded: its error, no answer."""

    error: str


Recorded = str | RecordedFailure  # what one line holds: an answer or a failure


def normalise(text: str) -> str:
    """Whitespace-insensitive form of a question, used in every lookup key."""
    return " ".join(text.split())


def _key(kind: str | None, messages: Sequence[str]) -> Key:
    """The key of a line: its kind ("" for none) and its user turns."""
    return (kind or "", *messages)


@dataclass
class Recording:
    """The recorded answers of one file, by lookup key, in file order."""

    path: Path
    answers: dict[Key, list[Recorded]] = field(default_factory=lambda: defaultdict(list))
    lines: int = 0

    def keys_for(self, messages: Sequence[str], kind: str) -> tuple[Key, Key]:
        """The keys a turn may match, most specific first: its kind's, then no kind's."""
        normal = [normalise(message) for message in messages]
        return _key(kind, normal), _key(None, normal)

    def count(self, key: Key) -> int:
        """How many lines hold `key`."""
        return len(self.answers.get(key, ()))


def _bad_line(path: Path, number: int, message: str) -> InvalidInputError:
    return InvalidInputError(f"{path}:{number}: {message}")


def _read_messages(path: Path, number: int, raw: object) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise _bad_line(path, number, '"messages" must be a non-empty list of user turns')
    messages: list[str] = []
    for item in raw:
        if isinstance(item, dict) and item.get("role", "user") == "user":
            item = item.get("content")
        elif isinstance(item, dict):
            continue  # assistant/system turns are not part of a key
        if not isinstance(item, str):
            raise _bad_line(path, number, '"messages" items must be strings')
        messages.append(item)
    if not messages:
        raise _bad_line(path, number, '"messages" has no user turn')
    return messages


def load_recording(path: str | Path) -> Recording:
    """Read a replay JSONL file; InvalidInputError naming file and line for a malformed line."""
    path = Path(path)
    if not path.exists():
        raise ModelSpecError(f"replay file not found: {path}")
    text = read_input_text(path)
    recording = Recording(path=path)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = loads_json(line, f"{path}:{number}")
        if not isinstance(record, dict):
            raise _bad_line(path, number, "expected a JSON object")
        answer = record.get("answer")
        if not isinstance(answer, str):
            raise _bad_line(path, number, '"answer" must be a string')
        error = record.get("error")
        if error is not None and not isinstance(error, str):
            raise _bad_line(path, number, '"error" must be a string or null')
        recorded: Recorded = answer if error is None else RecordedFailure(error)
        if "messages" in record:
            messages = [normalise(m) for m in _read_messages(path, number, record["messages"])]
            kind = record.get("kind")
            if kind is not None and kind not in KINDS:
                raise _bad_line(path, number, f'"kind" must be atomic or sequential, not {kind!r}')
            recording.answers[_key(kind, messages)].append(recorded)
        elif "query" in record:
            query = record["query"]
            if not isinstance(query, str):
                raise _bad_line(path, number, '"query" must be a string')
            recording.answers[_key(None, [normalise(query)])].append(recorded)
        else:
            raise _bad_line(path, number, 'expected "messages" or "query"')
        recording.lines += 1
    recording.answers = dict(recording.answers)
    return recording


class ReplayModel:
    """A ChatModel answering from a recording; deterministic whatever the concurrency."""

    never_waits = True  # answers from memory: a call never awaits
    cacheable = False  # its answers depend on the order they are asked in, not on the chat

    def __init__(self, path: str | Path, spec: str | None = None) -> None:
        self.path = Path(path)
        self.spec = spec or file_spec(path)
        self.recording = load_recording(self.path)
        self._assigned: dict[tuple[str, int], Recorded | None] = {}
        self._used: dict[Key, int] = {}

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        """Assign a recorded answer (or None: not in the recording) to every turn, in
        generation order."""
        self._assigned.clear()
        self._used.clear()
        for conversation in conversations:
            questions = [query.text for query in conversation.turns]
            for turn in range(len(questions)):
                self._assigned[conversation.id, turn] = self._take(
                    questions[: turn + 1], conversation.kind
                )

    def _take(self, messages: Sequence[str], kind: str) -> Recorded | None:
        """The first unused line of the most specific key that has one (see the module
        docstring), marked used; None when no line is left for this turn."""
        for key in self.recording.keys_for(messages, kind):
            used = self._used.get(key, 0)
            if used < self.recording.count(key):
                self._used[key] = used + 1
                return self.recording.answers[key][used]
        return None

    def lookup(self, request: ChatRequest) -> Recorded | None:
        """The answer (or recorded failure) for a request: the prepared one, else the next
        one by its messages."""
        slot = (request.conversation_id, request.turn)
        if slot in self._assigned:
            return self._assigned[slot]
        messages = [message.content for message in request.messages if message.role == "user"]
        if not messages:
            return None
        return self._take(messages, request.kind)

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        answer = self.lookup(request)
        if answer is None:
            question = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
            raise ModelError(
                f"{NOT_RECORDED}: {request.conversation_id or 'request'} turn "
                f"{request.turn + 1}, {normalise(question)!r} ({self.path.name} has no unused "
                f"{request.kind} line with these questions)",
                retryable=False,
            )
        if isinstance(answer, RecordedFailure):
            raise ModelError(f"{RECORDED_FAILURE}: {answer.error}", retryable=False)
        if on_token is not None:
            on_token(answer)
        return ChatResult(text=answer, tokens=len(answer.split()), latency_ms=0.0)

    async def check(self) -> str:
        """One line saying how many answers the file holds; ModelError when it does not load."""
        try:
            recording = load_recording(self.path)
        except KontestError as error:
            raise ModelError(str(error)) from None
        return f"{PREFIX}: {recording.lines} recorded answers in {self.path}"

    async def aclose(self) -> None:
        return None


def recording_lines(
    conversations: Sequence[Conversation], answers: Mapping[tuple[str, int], str]
) -> Iterator[dict[str, object]]:
    """Replay lines for the answered turns of `conversations` (generation order), keyed by
    kind + messages, so that replaying them reproduces the same answers to the same turns."""
    for conversation in conversations:
        for turn in range(len(conversation.turns)):
            answer = answers.get((conversation.id, turn))
            if answer is None:
                continue
            yield {
                "kind": conversation.kind,
                "messages": [query.text for query in conversation.turns[: turn + 1]],
                "answer": answer,
            }


def write_recording(
    path: str | Path,
    conversations: Sequence[Conversation],
    answers: Mapping[tuple[str, int], str],
) -> int:
    """Write a replay JSONL file (see `recording_lines`); returns the number of lines."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as out:
        for line in recording_lines(conversations, answers):
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            count += 1
    return count


@dataclass(frozen=True, slots=True)
class ReplayFailures:
    """Why a replay's turns failed: the lines its recording lacks (`{"kind", "messages"}`
    each, in generation order; a later turn not asked is listed when the file has no line
    with its questions either), turns the recording holds as failed, and the other failures."""

    lacking: list[dict[str, object]]
    recorded: int
    other: int


def replay_failures(
    recording: Recording, conversations: Sequence[Conversation], errors: Mapping[AnswerKey, str]
) -> ReplayFailures:
    """Sort a replayed session's failed turns (`errors`: (conversation id, turn) -> the
    stored error) by why they failed; a resume fails the same way for all of them."""
    lacking: list[dict[str, object]] = []
    recorded = other = 0
    listed: set[Key] = set()
    for conversation in conversations:
        for turn in range(len(conversation.turns)):
            error = errors.get((conversation.id, turn))
            if error is None:
                continue
            messages = [normalise(query.text) for query in conversation.turns[: turn + 1]]
            keys = recording.keys_for(messages, conversation.kind)
            if error.startswith(RECORDED_FAILURE):
                recorded += 1
            elif error.startswith(NOT_RECORDED) or (
                error.startswith(NOT_ASKED) and not any(recording.count(k) for k in keys)
            ):
                if keys[0] not in listed:
                    listed.add(keys[0])
                    lacking.append({"kind": conversation.kind, "messages": messages})
            elif not error.startswith(NOT_ASKED):
                other += 1
    return ReplayFailures(lacking, recorded, other)
