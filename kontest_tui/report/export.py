"""`kontest export`: every stored response of a session as JSONL or CSV rows (`--probes`:
the questions asked by hand about its relations instead).

Each row carries its question and all user turns so far, so a JSONL export (`messages`,
`kind`, `answer`) is also a replay file for `--model replay:FILE`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import TypedDict

from kontest_tui.domain.records import Conversation
from kontest_tui.errors import StoreError
from kontest_tui.probes.factcheck import correct_option, expected_answer
from kontest_tui.safe_text import escape_unsafe
from kontest_tui.store.database import Store

EXPORT_FORMATS = ("jsonl", "csv")


class ExportRow(TypedDict):
    """One stored response as exported: its question, the user turns so far, the raw and
    the parsed answer, what was expected and how the call went (the columns, in order)."""

    session: str
    conversation: str
    relation: str
    kind: str
    test_kind: str
    label: str
    turn: int
    template: str | None
    question: str
    messages: list[str]
    answer: str
    parsed: str
    expected: str | None
    correct_option: str | None
    error: str | None
    latency_ms: float
    tokens: int
    attempts: int
    cached: bool
    cut: int
    stopped: str | None
    p_yes: float | None  # the answer's margin, P(yes | yes or no) (None: none given)
    created: str


class ProbeRow(TypedDict):
    """One question asked by hand about a relation, as exported (the columns, in order)."""

    session: str
    probe: int
    relation: str
    model: str
    question: str
    template: str | None
    answer: str
    parsed: str
    error: str | None
    latency_ms: float
    promoted: str | None
    created: str


EXPORT_COLUMNS: tuple[str, ...] = tuple(ExportRow.__annotations__)
PROBE_COLUMNS: tuple[str, ...] = tuple(ProbeRow.__annotations__)


def iter_export_rows(store: Store, session_id: str) -> Iterator[ExportRow]:
    """One dict per stored response, with its question and all user turns so far.

    `messages` + `kind` + `answer` (the raw text) make each JSONL line a replay record, so an
    exported session can be replayed with `--model replay:FILE`.
    """
    conversations = {c.id: c for c in store.relations.load_conversations(session_id)}
    for row in store.responses.rows(session_id):
        conversation = conversations[row["conversation"]]
        turn = row["turn"]
        if not 0 <= turn < len(conversation.turns):
            raise StoreError(
                f"session {session_id} has a damaged row in responses "
                f"({conversation.id} has no turn {turn})"
            )
        query = conversation.turns[turn]
        yield ExportRow(
            session=session_id,
            conversation=conversation.id,
            relation=conversation.relation_id,
            kind=conversation.kind,
            test_kind=str(conversation.test_kind),
            label=conversation.label,
            turn=turn,
            template=query.template_id,
            question=query.text,
            messages=[q.text for q in conversation.turns[: turn + 1]],
            answer=row["raw"],
            parsed=row["answer"],
            expected=_expected(conversation, turn),
            correct_option=correct_option(conversation),
            error=row["error"],
            latency_ms=row["latency_ms"],
            tokens=row["tokens"],
            attempts=row["attempts"],
            cached=bool(row["cached"]),
            cut=row["cut"],
            stopped=row["stopped"],
            p_yes=row["p_yes"],
            created=row["created"],
        )


def _expected(conversation: Conversation, turn: int) -> str | None:
    """The answer a probe or annotated question expects (None for consistency tests): yes/no,
    the option letter of a multiple-choice question, the label a WH question asks for."""
    expected = conversation.expected[turn] if turn < len(conversation.expected) else None
    if expected is not None:
        return expected.value
    return expected_answer(conversation)


def render_export(
    rows: Iterable[ExportRow] | Iterable[ProbeRow],
    fmt: str,
    columns: Sequence[str] = EXPORT_COLUMNS,
) -> str:
    """JSONL (one object per line) or CSV (`messages` as a JSON list) of the export rows.

    The store keeps each answer as the model sent it; here its control and format characters
    (ESC, BEL, NUL, C1, bidi overrides, zero-width) are written as `\\uXXXX` escapes: in
    JSONL that is the same JSON string (a replay reads the same answer back), in CSV the
    escape shows what was there."""
    if fmt == "jsonl":
        return escape_unsafe("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        cells: dict[str, object] = dict(row)
        if "messages" in cells:
            cells["messages"] = json.dumps(cells["messages"], ensure_ascii=False)
        writer.writerow(cells)
    return escape_unsafe(buffer.getvalue())


PROBE_COLUMNS = (
    "session",
    "probe",
    "relation",
    "model",
    "question",
    "template",
    "answer",
    "parsed",
    "error",
    "latency_ms",
    "promoted",
    "created",
)


def iter_probe_rows(store: Store, session_id: str) -> Iterator[ProbeRow]:
    """One dict per question asked by hand about a relation of the session (probe mode).
    Apart from the responses: a probe is no turn of the session's plan."""
    for probe in store.probes.of_session(session_id):
        yield ProbeRow(
            session=probe.session,
            probe=probe.id,
            relation=probe.relation,
            model=probe.model,
            question=probe.question,
            template=probe.template,
            answer=probe.raw,
            parsed=probe.answer.value,
            error=probe.error,
            latency_ms=probe.latency_ms,
            promoted=probe.promoted,
            created=probe.created,
        )


def export_probes(store: Store, session_id: str | None, fmt: str) -> str:
    """A session's probes (the latest session when `session_id` is None) as `fmt` text."""
    rows = iter_probe_rows(store, store.sessions.resolve(session_id))
    return render_export(rows, fmt, PROBE_COLUMNS)


def export_session(store: Store, session_id: str | None, fmt: str) -> str:
    """A session's responses (the latest session when `session_id` is None) as `fmt` text."""
    return render_export(iter_export_rows(store, store.sessions.resolve(session_id)), fmt)
