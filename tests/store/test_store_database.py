"""The session database: schema, migrations, WAL and foreign keys, readers, StoreError messages."""

from __future__ import annotations

import sqlite3

import pytest
import sqlite_utils

from kontest_tui.domain.extras import LogicExtras
from kontest_tui.domain.records import (
    Answer,
    Conversation,
    Query,
    Relation,
    Response,
    TestKind,
    Verdict,
)
from kontest_tui.errors import StoreError
from kontest_tui.store import SCHEMA_VERSION, Store, redact_spec
from kontest_tui.store.records import NewSession
from kontest_tui.store.schema import apply_migrations

RELATIONS = [
    Relation("A>B", "A", "B", "contains", ("A", "B")),
    Relation("A>C", "A", "C", "contains", ("A", "B", "C")),
]
Q1 = Query("A>B", "t1", 'Does "A" have a {child}?\nB')
Q2 = Query("A>B", "t2", "Is there a B in A?")
CONVERSATIONS = [
    Conversation("A>B/t1", "A>B", "atomic", "Q1", (Q1,), system_prompt="Be brief."),
    Conversation(
        "A>B/t1+t2",
        "A>B",
        "sequential",
        "A",
        (Q1, Q2),
        test_kind=TestKind.LOGIC,
        expected=(Answer.YES, None),
        extras=LogicExtras(
            rule="inverse", steps="inverse", expected_text="yes", form="f", premises=("x", "y")
        ),
    ),
]


def new_session(store: Store, model: str = "sim") -> str:
    return store.sessions.create(
        NewSession(
            kg_name="toy",
            kg_json={"name": "toy", "nodes": [{"id": "A", "label": "Ä"}], "edges": []},
            templates_json={"domain": "places"},
            template_ids=["t1", "t2"],
            model=model,
            options={"temperature": 0.0, "seed": 3},
            labels={"A": "Ä", "B": "Bee"},
            seed=3,
        ),
        relations=RELATIONS,
        conversations=CONVERSATIONS,
    )


def test_records_round_trip(tmp_path) -> None:  # noqa: ANN001
    with Store(tmp_path / "s.db") as store:
        session = new_session(store)
        assert store.relations.load(session) == RELATIONS
        loaded = store.relations.load_conversations(session)
        assert loaded == CONVERSATIONS
        assert loaded[1].extras == CONVERSATIONS[1].extras
        row = store.sessions.get(session)
        assert row["planned"] == 3 and row["relations"] == 2 and row["status"] == "created"
        assert store.sessions.kg_snapshot(session)["nodes"][0]["label"] == "Ä"
        labels = store.conn.execute(
            "SELECT parent_label, child_label FROM relations WHERE session = ? ORDER BY position",
            (session,),
        ).fetchall()
        assert labels == [("Ä", "Bee"), ("Ä", "C")]
        response = Response("A>B/t1+t2", 1, "Yes.", Answer.YES, None, 12.5, 2, 3)
        store.responses.save(session, response)
        store.responses.save(
            session, Response("A>B/t1", 0, "", Answer.INVALID, "HTTP 500", 1.0, 0, 4)
        )
        assert store.responses.load(session)[("A>B/t1+t2", 1)] == response
        assert store.responses.answers(session) == {
            ("A>B/t1", 0): Answer.INVALID,
            ("A>B/t1+t2", 1): Answer.YES,
        }
        assert [r["conversation"] for r in store.responses.rows(session)] == ["A>B/t1", "A>B/t1+t2"]
        assert store.sessions.refresh_counts(session) == {"answered": 1, "failed": 1, "retries": 5}
        verdict = Verdict(
            "atomic",
            "A>B",
            None,
            True,
            (("A>B/t1", 0), ("A>B/t2", 0)),
            (Answer.YES, Answer.NO),
            "x",
        )
        assert store.verdicts.replace(session, [verdict, verdict]) == 2
        assert store.verdicts.replace(session, [verdict]) == 1
        assert store.verdicts.load(session) == [verdict]


def test_one_response_per_turn(tmp_path) -> None:  # noqa: ANN001
    with Store(tmp_path / "s.db") as store:
        session = new_session(store)
        response = Response("A>B/t1", 0, "No", Answer.NO)
        store.responses.save(session, response)
        with pytest.raises(StoreError, match="A>B/t1 turn 0"):
            store.responses.save(session, response)
        # foreign keys are on: a response to an unknown conversation is refused
        with pytest.raises(StoreError, match="has no conversation 'nope'"):
            store.responses.save(session, Response("nope", 0, "No", Answer.NO))
        assert len(list(store.responses.rows(session))) == 1


def test_plain_sqlite_file_in_wal_mode(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "s.db"
    with Store(path) as store:
        session = new_session(store)
        store.responses.save(session, Response("A>B/t1", 0, "No", Answer.NO))
    db = sqlite_utils.Database(path)
    assert db.journal_mode == "wal"
    assert {
        "sessions",
        "relations",
        "conversations",
        "responses",
        "verdicts",
        "response_cache",
        "schema_version",
    } <= set(db.table_names())
    # every foreign key is one column pointing at a one-column key (what Datasette follows)
    keys = {
        (fk.column, fk.other_table, fk.other_column) for fk in db.table("responses").foreign_keys
    }
    assert keys == {("conversation_key", "conversations", "pk"), ("session", "sessions", "id")}
    assert {
        (fk.column, fk.other_table, fk.other_column)
        for fk in db.table("conversations").foreign_keys
    } == {("relation_key", "relations", "pk"), ("session", "sessions", "id")}
    assert {(fk.column, fk.other_table) for fk in db.table("verdicts").foreign_keys} == {
        ("session", "sessions"),
        ("relation_key", "relations"),
    }
    assert sorted((fk.column, fk.other_table) for fk in db.table("sessions").foreign_keys) == [
        ("kg_snapshot", "kg_snapshots"),
        ("parent", "sessions"),  # a session asked again from another (run.rerun)
    ]
    assert db.table("relations").pks == ["pk"] and db.table("conversations").pks == ["pk"]
    assert db.table("responses").pks == ["id"]
    assert {"response_details", "verdict_details"} <= set(db.view_names())
    assert db["responses"].count == 1
    assert any(index.unique for index in db.table("responses").indexes)
    assert [row["version"] for row in db["schema_version"].rows] == list(
        range(1, SCHEMA_VERSION + 1)
    )


def test_migrates_from_version_1(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=1)
    conn.execute(
        "INSERT INTO sessions (id, created, updated, status, kg_name, kg_json, templates_json,"
        " template_ids, model, options_json) VALUES ('old', '2026-01-01', '2026-01-01', 'done',"
        " 'toy', '{}', '{}', '[]', 'sim', '{}')"
    )
    conn.execute(
        "INSERT INTO conversations (session, id, position, relation, kind, label, test_kind,"
        " turns, expected) VALUES ('old', 'A>B/t1', 0, 'A>B', 'atomic', 'Q1', 'kontest',"
        ' \'[{"relation": "A>B", "template": "t1", "text": "Q?"}]\', \'[]\')'
    )
    conn.execute(
        "INSERT INTO responses (session, conversation, turn, raw, answer, created)"
        " VALUES ('old', 'A>B/t1', 0, 'Yes', 'yes', '2026-01-01')"
    )
    columns = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    assert "cached" not in columns
    conn.close()
    with Store(path) as store:
        assert store.version == SCHEMA_VERSION == 16
        rows = list(store.responses.rows("old"))
        assert rows[0]["raw"] == "Yes" and rows[0]["cached"] == 0
        store.cache.put("k", "sim", "Yes", 1)
        assert store.cache.get("k") == ("Yes", 1)
        assert store.relations.load_conversations("old")[0].turns[0].text == "Q?"
        assert next(store.sessions.listing())["oracle_error_rate"] is None


def test_store_errors(tmp_path) -> None:  # noqa: ANN001
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all\n" * 50)
    with pytest.raises(StoreError, match="is not a kontest session database"):
        Store(text)
    other = tmp_path / "other.db"
    sqlite_utils.Database(other).table("things").insert({"a": 1})
    with pytest.raises(StoreError, match="holds other tables"):
        Store(other)
    with pytest.raises(StoreError, match="no session database at"):
        Store(tmp_path / "missing.db", create=False)
    with pytest.raises(StoreError, match="is a directory"):
        Store(tmp_path)
    newer = tmp_path / "newer.db"
    with Store(newer) as store:
        store.conn.execute("INSERT INTO schema_version VALUES (99, 'future')")
    with pytest.raises(StoreError, match="schema version 99, newer"):
        Store(newer)
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(StoreError, match=r"no session 'x' in .*\(sessions: none yet\)"):
            store.sessions.get("x")
        first = new_session(store)
        with pytest.raises(StoreError, match=rf"\(sessions: {first}\)"):
            store.sessions.resolve("y")
        with pytest.raises(StoreError, match="unknown session status"):
            store.sessions.update(first, status="exploded")


def test_latest_and_unfinished(tmp_path) -> None:  # noqa: ANN001
    with Store(tmp_path / "s.db") as store:
        assert store.sessions.latest() is None
        one = new_session(store)
        two = new_session(store)
        assert store.sessions.latest() == two
        store.sessions.update(two, status="done")
        assert store.sessions.latest(unfinished=True) == one
        assert store.sessions.resolve(None) == two
        assert [row["id"] for row in store.sessions.listing()] == [one, two]
        store.sessions.delete(one)
        assert store.sessions.ids() == [two]


def test_default_path_is_in_the_data_dir(isolated_home) -> None:  # noqa: ANN001
    with Store() as store:
        assert store.path == isolated_home / "data" / "sessions.db"


def test_secrets_are_not_stored(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-123456")
    spec = "openai:gpt@https://bob:hunter2@example.org/v1?key=sk-test-SECRET-123456"
    assert redact_spec(spec) == "openai:gpt@https://example.org/v1?key=***"
    path = tmp_path / "s.db"
    with Store(path) as store:
        session = new_session(store, model=spec)
        store.cache.put("k", spec, "Yes", 1)
        assert "hunter2" not in store.sessions.get(session)["model"]
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("s.db"))
    assert b"sk-test-SECRET-123456" not in data and b"hunter2" not in data


def test_hostile_text_is_stored(tmp_path) -> None:  # noqa: ANN001
    hostile = "\x1b[31m[bold red]Yes[/bold red]\x1b[0m\x00 " + "y" * 1_000_000
    with Store(tmp_path / "s.db") as store:
        session = new_session(store)
        store.responses.save(session, Response("A>B/t1", 0, hostile, Answer.INVALID))
        # a lone surrogate (what a lenient decoder may leave) cannot be UTF-8: U+FFFD instead
        store.responses.save(session, Response("A>B/t1+t2", 0, "Yes \udcff!", Answer.YES))
        rows = {r["conversation"]: r["raw"] for r in store.responses.rows(session)}
        assert rows["A>B/t1"] == hostile
        assert rows["A>B/t1+t2"] == "Yes \ufffd!"
        store.cache.put("k", "sim", "No \udc80", 1)
        assert store.cache.get("k") == ("No \ufffd", 1)
