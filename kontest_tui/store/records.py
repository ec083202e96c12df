"""Conversions between the engine's records and the session database's rows (JSON columns).

Kept apart from the Store so the exporter, the TUI and tests can turn rows back into records
without a connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from json.encoder import encode_basestring as _quote  # what dump_json quotes strings with
from typing import Any

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
Row = Mapping[str, Any] | sqlite3.Row

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dump_json(value: object) -> str:
    """Compact, deterministic JSON text (non-ASCII kept readable): json.dumps(value,
    ensure_ascii=False, separators=(",", ":")), with one encoder made once."""
    return _ENCODER.encode(value)


def relation_to_row(
    session: str, position: int, relation: Relation, labels: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "session": session,
        "id": relation.id,
        "position": position,
        "parent": relation.parent,
        "child": relation.child,
        "parent_label": labels.get(relation.parent, relation.parent),
        "child_label": labels.get(relation.child, relation.child),
        "type": relation.type,
        "path": dump_json(list(relation.path)),
    }


def row_to_relation(row: Row) -> Relation:
    return Relation(
        id=row["id"],
        parent=row["parent"],
        child=row["child"],
        type=row["type"],
        path=tuple(json.loads(row["path"])),
    )


def conversation_to_row(session: str, position: int, conversation: Conversation) -> dict[str, Any]:
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
) -> tuple[Any, ...]:
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
    shared = strings if strings is not None else {}
    turns = tuple(
        Query(
            shared.setdefault(t["relation"], t["relation"]),
            shared.setdefault(t["template"], t["template"]),
            t["text"],
        )
        for t in _decode(row["turns"])
    )
    expected = _expected_answers(row["expected"])
    kind = _TEST_KINDS.get(row["test_kind"])
    return Conversation(
        id=row["id"],
        relation_id=shared.setdefault(row["relation"], row["relation"]),
        kind=shared.setdefault(row["shape"], row["shape"]),
        label=shared.setdefault(row["label"], row["label"]),
        turns=turns,
        test_kind=kind if kind is not None else TestKind(row["test_kind"]),
        expected=expected,
        system_prompt=row["system_prompt"],
        extras=extras_from_json(row["test_kind"], _decode(row["meta"]))
        if row["meta"] is not None
        else None,
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
    )


def verdict_values(
    session: str, relation_keys: Mapping[str, int], verdict: Verdict
) -> tuple[Any, ...]:
    """The columns of a verdict row (session, oracle, relation, relation_key, template, error,
    refs, answers, detail); the relation's key when the relation is stored."""
    return (
        session,
        verdict.oracle,
        verdict.relation_id,
        relation_keys.get(verdict.relation_id),
        verdict.template_id,
        int(verdict.error),
        # dump_json's text, quoted by hand (an encoder call costs more than the quoting)
        "[" + ",".join(f"[{_quote(ref)},{int(turn)}]" for ref, turn in verdict.refs) + "]",
        "[" + ",".join(_quote(str(answer)) for answer in verdict.answers) + "]",
        verdict.detail,
    )


def row_to_verdict(row: Mapping[str, Any]) -> Verdict:
    return Verdict(
        oracle=row["oracle"],
        relation_id=row["relation"],
        template_id=row["template"],
        error=bool(row["error"]),
        refs=tuple((ref[0], int(ref[1])) for ref in json.loads(row["refs"])),
        answers=tuple(Answer(value) for value in json.loads(row["answers"])),
        detail=row["detail"],
    )


def template_set_to_dict(template_set: TemplateSet) -> dict[str, Any]:
    """The template set as the TOML file's structure (parse_template_set reads it back)."""
    return {
        "domain": template_set.domain,
        "default_type": template_set.default_type,
        "system_prompt": template_set.system_prompt,
        "temperature": template_set.temperature,
        "aliases": list(template_set.aliases),
        "templates": [_template_to_dict(template) for template in template_set.templates],
    }


def _template_to_dict(template: Template) -> dict[str, Any]:
    return {
        "id": template.id,
        "texts": dict(template.texts),
        "words": dict(template.pos),
        "fixed": list(template.fixed),
    }


def template_set_from_dict(data: dict[str, Any], source: str) -> TemplateSet:
    return parse_template_set(data, source)
