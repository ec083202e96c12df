"""The streamed evaluation's map of atomic answers: two sorted arrays a template, read as the
dict it replaces; a pair asked twice in one scope, or a scope's relations apart, is not
streamable (the run then evaluates the session whole)."""

from __future__ import annotations

import pytest

from kontest_tui.domain.records import Answer, Conversation, Query, Relation
from kontest_tui.oracles.streamed import NotStreamable, StreamedEvaluation, _AtomicMap


def key(scope: int, parent: int, child: int) -> int:
    return (((scope << 32) | parent) << 32) | child


def test_the_map_reads_as_the_dict_it_replaces() -> None:
    added = {
        key(0, 5, 1): 41,
        key(0, 1, 5): 42,
        key(0, 2**32 - 1, 0): 43,
        key(2, 3, 4): 44,  # scope 1 has no answer under this template
        key(2, 0, 9): 45,
        key(3, 7, 7): 2**62,
    }
    found = _AtomicMap()
    for one, value in added.items():
        found.add(one, value)
    assert dict(found.items()) == added
    assert [k for k, _ in found.items()] == sorted(added)  # sorted within each scope
    for one, value in added.items():
        assert found.get(one) == found[one] == value
    for missing in (key(0, 5, 2), key(1, 3, 4), key(2, 5, 1), key(4, 0, 0), key(3, 7, 6)):
        assert found.get(missing) is None
        with pytest.raises(KeyError):
            found[missing]
    found.add(key(3, 8, 8), 46)  # added after a read: sorted again on the next
    assert found.get(key(3, 8, 8)) == 46 and found.get(key(0, 1, 5)) == 42


def test_a_pair_twice_in_a_scope_or_a_scope_apart_is_not_streamable() -> None:
    twice = _AtomicMap()
    twice.add(key(0, 1, 2), 1)
    twice.add(key(1, 1, 2), 2)  # the same pair in another scope is fine
    twice.add(key(1, 1, 2), 3)
    with pytest.raises(NotStreamable):
        twice.seal()
    apart = _AtomicMap()
    apart.add(key(0, 1, 2), 1)
    apart.add(key(1, 1, 3), 1)
    with pytest.raises(NotStreamable):
        apart.add(key(0, 1, 4), 1)


def conversations_of(rel: Relation) -> list[Conversation]:
    return [
        Conversation(f"{rel.id}/{t}", rel.id, "atomic", t, (Query(rel.id, t, f"{t} {rel.id}?"),))
        for t in ("t1", "t2")
    ]


def test_a_relation_asked_twice_is_found_when_the_chunks_are_sealed() -> None:
    first = Relation("A>C", "A", "C", "contains", ("A", "B", "C"))
    again = Relation("A>C#2", "A", "C", "contains", ("A", "B", "C"))
    totals = StreamedEvaluation(session="s", model="m")
    keys: dict[str, int] = {}
    for chunk in ([first], [again]):
        conversations = [c for rel in chunk for c in conversations_of(rel)]
        keys.update((c.id, len(keys) + 1) for c in conversations)
        answers = {(c.id, t): Answer.YES for c in conversations for t in range(len(c.turns))}
        totals.add_chunk(chunk, conversations, answers, keys)
    with pytest.raises(NotStreamable):
        totals.seal()
