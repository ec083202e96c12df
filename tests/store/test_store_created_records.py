"""store.sessions.create keeps the records it stored, so a run in the same process does not
read them back: what it gives back equals what a fresh Store reads, and it never
hides rows that changed since."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kontest_tui.domain.records import Conversation, Relation, TestKind
from kontest_tui.generate.templates import template_set_for_domain
from kontest_tui.kg.io import load_graph
from kontest_tui.run import session as session_module
from kontest_tui.run.api import SessionSpec, create_session
from kontest_tui.store import Store


def read_back(db: Path, session: str) -> tuple[list[Relation], list[Conversation]]:
    """The session's relations and conversations as a Store that did not create it reads them."""
    with Store(db) as other:
        return list(other.relations.load(session)), list(
            other.relations.load_conversations(session)
        )


@pytest.mark.parametrize(
    "kinds", [(TestKind.KONTEST,), (TestKind.KONTEST, TestKind.LOGIC, TestKind.FACTCHECK)]
)
def test_kept_records_equal_the_stored_rows(tmp_path: Path, kinds: tuple[TestKind, ...]) -> None:
    kg = load_graph("places")
    db = tmp_path / "s.db"
    with Store(db) as store:
        session = create_session(store, SessionSpec(kg, seed=1, kinds=kinds))
        relations, conversations = (
            store.relations.load(session),
            store.relations.load_conversations(session),
        )
        stored_relations, stored_conversations = read_back(db, session)
        assert len(relations) == 265
        assert relations == stored_relations
        assert conversations == stored_conversations
        # extras are left out of Conversation's equality: compare them on their own
        assert [c.extras for c in conversations] == [c.extras for c in stored_conversations]
        assert {c.test_kind for c in conversations} == set(kinds)
        # given once: the next read is from the file (a long-lived Store does not hold them)
        with sqlite3.connect(db) as edit:
            edit.execute("UPDATE conversations SET label = 'edited' WHERE session = ?", (session,))
        assert {c.label for c in store.relations.load_conversations(session)} == {"edited"}


def test_rows_added_since_are_read_from_the_database(tmp_path: Path) -> None:
    kg = load_graph("places")
    templates = template_set_for_domain(kg.domain)
    db = tmp_path / "s.db"
    with Store(db) as store:
        session = create_session(store, SessionSpec(kg, limit=5))
        kept = store.relations.load_conversations(session)
        with Store(db) as other:  # another process adds the relations' conversations again
            renamed = [
                type(c)(f"{c.id}/again", c.relation_id, c.kind, c.label, c.turns) for c in kept
            ]
            other.relations.add_conversations(
                session,
                renamed,
                templates_json={"templates": []},
                template_ids=[t.id for t in templates.templates],
            )
        assert store.relations.load_conversations(session) == kept + renamed


def test_a_session_above_the_bound_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "STREAM_ABOVE", 3)
    kg = load_graph("places")
    db = tmp_path / "s.db"
    with Store(db) as store:
        session = create_session(store, SessionSpec(kg, limit=10))
        with sqlite3.connect(db) as edit:  # a hand edit that keeps the count of rows
            edit.execute("UPDATE conversations SET label = 'edited' WHERE session = ?", (session,))
        assert {c.label for c in store.relations.load_conversations(session)} == {"edited"}
