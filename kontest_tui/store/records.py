"""The session database's rows as the store hands them out, and their conversions to records.

Rows read whole are TypedDicts (`SessionRow`, `SessionListing`, `ResponseRow`: dicts of their
columns, as sqlite-utils gives them, with their types named); the engine's records
(relations, conversations, responses, verdicts) are made from rows and turned into columns
here, apart from the repositories, so the exporter, the TUI and tests can convert rows
without a connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring as _quote  # what dump_json quotes strings with
from typing import Any, NotRequired, TypedDict

from kontest_tui.domain.extras import extras_from_json
from kontest_tui.domain.records import (
    Answer,
    Conversation,
    Query,
    Relation,
    Response,
    TestKind,
    Verdict,
)
from kontest_tui.generate.templates import Template, TemplateSet, parse_template_set

# A row as read: a dict, or an sqlite3.Row (read by column name without a dict per row).
# Column values are SQLite's (str, int, float, bytes, None): the converters below say which.
Row = Mapping[str, Any] | sqlite3.Row
# A JSON object as decoded from a column: its shape is its reader's (a KG snapshot:
# kg.io.graph_from_dict, a template set: parse_template_set, a report: the report's code).
JsonObject = dict[str, Any]


class SessionKinds(TypedDict):
    """A session's `kinds_json`: the test kinds it asks besides KONTEST paraphrases."""

    kinds: list[str]  # TestKind values; ["kontest"] for a session of paraphrases only
    options: NotRequired[JsonObject]  # kinds.options.KindOptions.to_json
    problems: NotRequired[list[str]]  # what the inputs lacked (one line each)
    sample: NotRequired[JsonObject]  # how a sampled session drew its relations


@dataclass(frozen=True, slots=True)
class NewSession:
    """What a new session asks, as `store.sessions.create` stores it on its row (its relations
    and conversations given beside it)."""

    kg_name: str  # the KG's source as the user named it (a sample, a file)
    # the KG snapshot (kg.io.graph_to_dict), or already written (SnapshotText.of): a large
    # graph's dict need not live while the session's rows are stored
    kg_json: Mapping[str, object] | SnapshotText
    templates_json: Mapping[str, object]  # the template set (template_set_to_dict)
    template_ids: Sequence[str]  # the templates asked
    model: str  # the model spec (redacted when stored)
    options: Mapping[str, object]  # the run's options (run.executor.options_to_dict)
    labels: Mapping[str, str]  # node id -> label, stored beside each relation
    seed: int = 0
    depth: int | None = None
    per_path: bool = False
    kinds: Mapping[str, object] | None = None  # SessionKinds; None: KONTEST paraphrases only
    fresh_conversations: bool = False  # every conversation asked from scratch
    session_id: str | None = None  # None: a new id (store.sessions.new_session_id)
    parent: str | None = None  # the session this one asks again (run.rerun), None: none


@dataclass(frozen=True, slots=True)
class SnapshotText:
    """A KG snapshot written as JSON text, with the name and counts its JSON gives
    (schema.kg_summary's, taken from the object it was written from: parsing the text again,
    in Python or in SQLite, cost ~300 MB at 1M relations)."""

    text: str
    name: str
    nodes: int
    edges: int

    @classmethod
    def of(cls, data: Mapping[str, object]) -> SnapshotText:
        return cls(dump_json(data), *summary_of(data))


def summary_of(data: Mapping[str, object]) -> tuple[str, int, int]:
    """(name, node count, edge count) of a KG snapshot object (blank where it has none)."""
    nodes, edges = data.get("nodes"), data.get("edges")
    return (
        str(data.get("name") or ""),
        len(nodes) if isinstance(nodes, list | tuple) else 0,
        len(edges) if isinstance(edges, list | tuple) else 0,
    )


class SessionColumns(TypedDict):
    """The columns every read of a session row gives: what it is and how its run went (its
    counts, times, message and the rates stored with its last report)."""

    id: str
    created: str
    updated: str
    status: str  # one of store.sessions.STATUSES
    kg_name: str
    model: str  # redacted (store.text.redact_spec)
    seed: int
    relations: int
    conversations: int
    planned: int  # turns to ask
    answered: int
    failed: int
    retries: int
    started: str | None
    finished: str | None
    elapsed_s: float
    message: str | None
    oracle_errors: int | None
    oracle_error_rate: float | None
    headline_measure: str | None
    headline_rate: float | None
    fresh_conversations: int


class SessionRow(SessionColumns):
    """A session as `store.sessions.get` reads it: every column, JSON ones decoded (its KG
    snapshot apart: `store.sessions.kg_snapshot`)."""

    kg_snapshot: int
    templates_json: JsonObject  # the template set (store.records.template_set_to_dict)
    template_ids: list[str]
    options_json: JsonObject  # the run's options (run.executor.options_from_dict)
    depth: int | None
    per_path: int
    kinds_json: SessionKinds
    parent: str | None  # the session this one was asked again from (run.rerun)


class SessionListing(SessionColumns):
    """One session as `store.sessions.listing` reads it (no snapshot columns): its counts,
    true during a run too, and the answers the token limit and the timeout cut."""

    stopped_length: int
    stopped_timeout: int


class SessionUpdate(TypedDict, total=False):
    """The columns of a session row a caller sets (`store.sessions.update`)."""

    status: str
    started: str | None
    message: str | None


class ResponseRow(TypedDict):
    """A stored response as `store.responses.rows` reads it."""

    id: int
    conversation_key: int
    session: str
    conversation: str
    turn: int
    raw: str
    answer: str  # an Answer value
    error: str | None
    latency_ms: float
    tokens: int
    attempts: int
    created: str
    cached: int  # 1: reused (the run's memo, the cache or a shared call), not asked
    cut: int
    stopped: str | None  # "length" or "timeout" when the answer was cut
    origin: str | None  # the session the answer was taken from (run.rerun); None: asked here
    p_yes: float | None  # the answer's margin, P(yes | yes or no) (domain.margins)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dump_json(value: object) -> str:
    """Compact, deterministic JSON text (non-ASCII kept readable): json.dumps(value,
    ensure_ascii=False, separators=(",", ":")), with one encoder made once."""
    return _ENCODER.encode(value)


# The relation columns in the order of `relation_values`.
RELATION_COLUMNS = (
    "session",
    "id",
    "position",
    "parent",
    "child",
    "parent_label",
    "child_label",
    "type",
    "path",
)


def relation_values(
    session: str, position: int, relation: Relation, labels: Mapping[str, str]
) -> tuple[object, ...]:
    """The columns of a relation row (RELATION_COLUMNS), its labels from `labels`."""
    return (
        session,
        relation.id,
        position,
        relation.parent,
        relation.child,
        labels.get(relation.parent, relation.parent),
        labels.get(relation.child, relation.child),
        relation.type,
        dump_json(list(relation.path)),
    )


def row_to_relation(row: Row) -> Relation:
    return relation_from_columns(row["id"], row["parent"], row["child"], row["type"], row["path"])


# The relation columns `relation_from_columns` takes, in its order (a SELECT list).
RELATION_READ = "id, parent, child, type, path"


def relation_from_columns(id: str, parent: str, child: str, type: str, path: str) -> Relation:
    """A relation from its columns (RELATION_READ; what row_to_relation reads by name)."""
    return Relation(id=id, parent=parent, child=child, type=type, path=tuple(_decode(path)))


def conversation_to_row(
    session: str, position: int, conversation: Conversation
) -> dict[str, object]:
    return {
        "session": session,
        "id": conversation.id,
        "position": position,
        "relation": conversation.relation_id,
        "shape": conversation.kind,
        "label": conversation.label,
        "test_kind": str(conversation.test_kind),
        "turns": dump_json(
            [
                {"relation": q.relation_id, "template": q.template_id, "text": q.text}
                for q in conversation.turns
            ]
        ),
        "expected": dump_json(
            [answer.value if answer is not None else None for answer in conversation.expected]
        ),
        "system_prompt": conversation.system_prompt,
        "meta": dump_json(conversation.extras.to_json()) if conversation.extras else None,
    }


# The conversation columns in the order of `conversation_values`.
CONVERSATION_COLUMNS = (
    "session",
    "id",
    "position",
    "relation",
    "relation_key",
    "shape",
    "label",
    "test_kind",
    "turns",
    "expected",
    "system_prompt",
    "meta",
)
_EXPECTED: dict[tuple[Answer | None, ...], str] = {}  # expected answers -> JSON text


def conversation_values(
    session: str, position: int, conversation: Conversation, relation_key: int | None
) -> tuple[object, ...]:
    """The columns of a conversation row (CONVERSATION_COLUMNS): the text of
    `conversation_to_row`, its JSON made from quoted strings (a dict and an encoder call per
    conversation were most of the cost of storing a large session)."""
    turns = ",".join(
        f'{{"relation":{_quote(q.relation_id)},"template":{_quote(q.template_id)},'
        f'"text":{_quote(q.text)}}}'
        for q in conversation.turns
    )
    expected = _EXPECTED.get(conversation.expected)
    if expected is None:
        expected = dump_json(
            [answer.value if answer is not None else None for answer in conversation.expected]
        )
        if len(_EXPECTED) < 1024:
            _EXPECTED[conversation.expected] = expected
    return (
        session,
        conversation.id,
        position,
        conversation.relation_id,
        relation_key,
        conversation.kind,
        conversation.label,
        str(conversation.test_kind),
        f"[{turns}]",
        expected,
        conversation.system_prompt,
        dump_json(conversation.extras.to_json()) if conversation.extras else None,
    )


_TEST_KINDS: dict[str, TestKind] = {kind.value: kind for kind in TestKind}
_ANSWERS: dict[str, Answer] = {answer.value: answer for answer in Answer}


def stored_answer(value: object) -> Answer | None:
    """An answer column's value as an Answer; None when it holds none (NULL, not an answer)."""
    return _ANSWERS.get(value) if isinstance(value, str) else None


def _answer(value: str) -> Answer:
    """Answer(value) by a dict lookup (an unknown value raises ValueError as Answer does)."""
    found = _ANSWERS.get(value)
    return found if found is not None else Answer(value)


_decode = json.JSONDecoder().decode  # json.loads without its per-call checks
_EXPECTED_READ: dict[str, tuple[Answer | None, ...]] = {}  # few distinct texts ("[]" mostly)


def _expected_answers(text: str) -> tuple[Answer | None, ...]:
    """A conversation row's `expected` column as the record's tuple (decoded once per text)."""
    found = _EXPECTED_READ.get(text)
    if found is None:
        found = tuple(_answer(value) if value is not None else None for value in _decode(text))
        if len(_EXPECTED_READ) < 1024:
            _EXPECTED_READ[text] = found
    return found


def row_to_conversation(row: Row, strings: dict[str, str] | None = None) -> Conversation:
    """A conversation row as the record; `strings` (kept by the caller across rows) shares
    one copy of each repeated relation and template id (a large session holds millions)."""
    return conversation_from_columns(
        row["id"],
        row["relation"],
        row["shape"],
        row["label"],
        row["test_kind"],
        row["turns"],
        row["expected"],
        row["system_prompt"],
        row["meta"],
        strings=strings,
    )


# The conversation columns `conversation_from_columns` takes, in its order (a SELECT list).
CONVERSATION_READ = "id, relation, shape, label, test_kind, turns, expected, system_prompt, meta"


def conversation_from_columns(
    id: str,
    relation: str,
    shape: str,
    label: str,
    test_kind: str,
    turns: str,
    expected: str,
    system_prompt: str | None,
    meta: str | None,
    *,
    strings: dict[str, str] | None = None,
) -> Conversation:
    """A conversation from its columns (CONVERSATION_READ; what row_to_conversation reads
    by name: a chunk of a session is read as plain tuples, ~2x faster than by name)."""
    shared = strings if strings is not None else {}
    setdefault = shared.setdefault
    kind = _TEST_KINDS.get(test_kind)
    return Conversation(
        id=id,
        relation_id=setdefault(relation, relation),
        kind=setdefault(shape, shape),
        label=setdefault(label, label),
        turns=tuple(
            [
                Query(
                    setdefault(t["relation"], t["relation"]),
                    setdefault(t["template"], t["template"]),
                    t["text"],
                )
                for t in _decode(turns)
            ]
        ),
        test_kind=kind if kind is not None else str(test_kind),  # a plugin kind's name
        expected=_expected_answers(expected),
        system_prompt=system_prompt,
        extras=extras_from_json(test_kind, _decode(meta)) if meta is not None else None,
    )


def row_to_response(row: Row) -> Response:
    return Response(
        conversation_id=row["conversation"],
        turn=row["turn"],
        raw=row["raw"],
        answer=_answer(row["answer"]),
        error=row["error"],
        latency_ms=row["latency_ms"],
        tokens=row["tokens"],
        attempts=row["attempts"],
        cut=row["cut"] or 0,
        stopped=row["stopped"],
        p_yes=row["p_yes"],
    )


def verdict_values(
    session: str, relation_keys: Mapping[str, int], verdict: Verdict
) -> tuple[object, ...]:
    """The columns of a verdict row (session, oracle, relation, relation_key, template, error,
    refs, answers, detail); the relation's key when the relation is stored."""
    return (
        session,
        verdict.oracle,
        verdict.relation_id,
        relation_keys.get(verdict.relation_id),
        verdict.template_id,
        int(verdict.error),
        refs_text(verdict.refs),
        _answers_text(verdict.answers),
        verdict.detail,
    )


_ANSWERS_TEXT: dict[tuple[Answer, ...], str] = {}  # a verdict's answers -> JSON text


def _answers_text(answers: tuple[Answer, ...]) -> str:
    """A verdict's compared answers as `verdicts.answers` holds them (made once per
    combination: a few kinds of answers in twos and threes)."""
    text = _ANSWERS_TEXT.get(answers)
    if text is None:
        text = "[" + ",".join(_quote(str(answer)) for answer in answers) + "]"
        if len(_ANSWERS_TEXT) < 1024:
            _ANSWERS_TEXT[answers] = text
    return text


def refs_text(refs: Sequence[tuple[str, int]]) -> str:
    """A verdict's compared answers as `verdicts.refs` holds them (what also names an error
    asked again: store.confirmations): dump_json's text, quoted by hand (an encoder call
    costs more than the quoting)."""
    return "[" + ",".join([f"[{_quote(ref)},{int(turn)}]" for ref, turn in refs]) + "]"


def row_to_verdict(row: Row) -> Verdict:
    return Verdict(
        oracle=row["oracle"],
        relation_id=row["relation"],
        template_id=row["template"],
        error=bool(row["error"]),
        refs=tuple((ref[0], int(ref[1])) for ref in json.loads(row["refs"])),
        answers=tuple(Answer(value) for value in json.loads(row["answers"])),
        detail=row["detail"],
    )


def template_set_to_dict(template_set: TemplateSet) -> JsonObject:
    """The template set as the TOML file's structure (parse_template_set reads it back). A
    snapshot stored before sets had names and realisation has neither key: it reads back
    as a set filled literally, as its questions were."""
    return {
        "domain": template_set.domain,
        "name": template_set.name,
        "realise": template_set.realise,
        "default_type": template_set.default_type,
        "system_prompt": template_set.system_prompt,
        "temperature": template_set.temperature,
        "aliases": list(template_set.aliases),
        "templates": [_template_to_dict(template) for template in template_set.templates],
    }


def _template_to_dict(template: Template) -> JsonObject:
    return {
        "id": template.id,
        "texts": dict(template.texts),
        "words": dict(template.pos),
        "fixed": list(template.fixed),
    }


def template_set_from_dict(data: JsonObject, source: str) -> TemplateSet:
    return parse_template_set(data, source)
