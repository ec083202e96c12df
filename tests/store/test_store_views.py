"""The explorer's store views (store.tree, store.error_list, store.gaps, store.details, kept
built by store.views over store.rollups) on a hand-made session.

The session: KG Alpha -> Be -> Ce, Alpha -> Delta, Alpha -> Echo; relations A>B, A>C, B>C,
A>D, A>E (positions 0-4), atomic questions under t1 and t2 answered

    A>B yes/yes   A>C no/yes   B>C yes/invalid   A>D no/no   A>E yes/yes

and seven hand-made verdicts, six of them errors (ids in this order):
v1 atomic A>C (no, yes); v2 ontological A>C t1 via the yes-path A -> B -> C; v3 atomic A>B
(no error); v4 variant A>D (invalid, yes); v5 sequential_intra B>C (yes, no); v6 atomic B>C
(yes, no); v7 atomic A>B (yes, invalid).

Worked out by hand:
- clearest first: v6 (atomic, valid, "Be"+"Ce" = 4 characters), v1 (atomic, valid, 7),
  v7 (atomic, an invalid answer), v5 (sequential intra), v2 (ontological), v4 (variant);
- graph order (node pre-order A B C D E, then relation position, then id): v7 (into B),
  v1 v2 (A>C), v5 v6 (B>C), v4 (into D);
- gap t1: A>C, A>D; gap t2: B>C (invalid), A>D; intersection: A>D;
- roll-ups: B's own 1 relation 1 error; C's own 2 relations, 4 errors (atomic 2, ontological
  1, sequential intra 1); A's subtree 5 relations, 6 errors; B's subtree 3 relations, 5
  errors (4 below it).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kontest_tui.domain.records import Answer, Conversation, Query, Relation, Response, Verdict
from kontest_tui.errors import StoreError
from kontest_tui.oracles.report_json import REQUIRED_KEYS
from kontest_tui.store import SCHEMA_VERSION, Store
from kontest_tui.store.records import NewSession
from kontest_tui.store.schema import apply_migrations
from kontest_tui.store.view_records import TREE

LABELS = {"A": "Alpha", "B": "Be", "C": "Ce", "D": "Delta", "E": "Echo"}
KG = {
    "name": "toy",
    "domain": "places",
    "nodes": [{"id": node, "label": label} for node, label in LABELS.items()],
    "edges": [
        {"parent": "A", "child": "B", "relation": "contains"},
        {"parent": "B", "child": "C", "relation": "contains"},
        {"parent": "A", "child": "D", "relation": "contains"},
        {"parent": "A", "child": "E", "relation": "contains"},
    ],
}
PATHS = {
    "A>B": ("A", "B"),
    "A>C": ("A", "B", "C"),
    "B>C": ("B", "C"),
    "A>D": ("A", "D"),
    "A>E": ("A", "E"),
}
ANSWERS = {
    "A>B": ("yes", "yes"),
    "A>C": ("no", "yes"),
    "B>C": ("yes", "invalid"),
    "A>D": ("no", "no"),
    "A>E": ("yes", "yes"),
}


def verdict(oracle: str, relation: str, answers: tuple[str, ...], error: bool = True) -> Verdict:
    detail = "missing edge A -> C (answered no); implied by yes-path A -> B -> C"
    return Verdict(
        oracle=oracle,
        relation_id=relation,
        template_id="t1" if oracle == "ontological" else None,
        error=error,
        refs=(),
        answers=tuple(Answer(answer) for answer in answers),
        detail=detail if oracle == "ontological" else "",
    )


VERDICTS = [
    verdict("atomic", "A>C", ("no", "yes")),
    verdict("ontological", "A>C", ("no",)),
    verdict("atomic", "A>B", ("yes", "yes"), error=False),
    verdict("variant", "A>D", ("invalid", "yes")),
    verdict("sequential_intra", "B>C", ("yes", "no")),
    verdict("atomic", "B>C", ("yes", "no")),
    verdict("atomic", "A>B", ("yes", "invalid")),
]


def store_session(store: Store, *, report: bool = True) -> str:
    relations = [
        Relation(relation_id, path[0], path[-1], "contains", path)
        for relation_id, path in PATHS.items()
    ]
    conversations = [
        Conversation(
            f"{relation_id}/{template}",
            relation_id,
            "atomic",
            label,
            (Query(relation_id, template, f"Does {relation_id} hold under {template}?"),),
        )
        for relation_id in PATHS
        for template, label in (("t1", "Q1"), ("t2", "Q2"))
    ]
    session_id = store.sessions.create(
        NewSession(
            kg_name="toy",
            kg_json=KG,
            templates_json={"domain": "places"},
            template_ids=["t1", "t2"],
            model="sim",
            options={},
            labels=LABELS,
            kinds={"kinds": ["kontest", "variants"]},
        ),
        relations=relations,
        conversations=conversations,
    )
    for relation_id, answers in ANSWERS.items():
        for template, answer in zip(("t1", "t2"), answers, strict=True):
            store.responses.save(
                session_id,
                Response(f"{relation_id}/{template}", 0, f"{answer.title()}.", Answer(answer)),
            )
    gap = {"per_template": {"t1": {"missing": 2}, "t2": {"missing": 2}}}
    # A report as the store reads it back (every key a Report JSON has): the views read its gap.
    store.verdicts.replace(
        session_id,
        VERDICTS,
        report={**dict.fromkeys(REQUIRED_KEYS, 0), "gap": gap} if report else None,
        engine="test",
        oracle_error_rate=0.25,
    )
    return session_id


@pytest.fixture
def session(tmp_path: Path) -> tuple[Store, str]:
    store = Store(tmp_path / "s.db")
    session_id = store_session(store)
    return store, session_id


def ids(rows: list) -> list[int]:  # noqa: ANN001
    return [row.verdict_id for row in rows]


def test_the_clearest_error_comes_first_and_the_order_pages(session) -> None:  # noqa: ANN001
    store, session_id = session
    assert store.error_list.count_errors(session_id) == 6
    assert ids(store.error_list.errors(session_id, limit=10)) == [6, 1, 7, 5, 2, 4]
    assert ids(store.error_list.errors(session_id, offset=2, limit=2)) == [7, 5]
    assert ids(store.error_list.errors(session_id, offset=4, limit=10)) == [2, 4]
    assert store.error_list.errors(session_id, offset=6, limit=10) == []
    first = store.error_list.error_at(session_id, 0)
    assert first is not None and first.verdict_id == 6
    assert (first.parent_name, first.child_name) == ("Be", "Ce")
    assert first.way == ("A", "B", "C")


def test_graph_order_and_oracle_filter(session) -> None:  # noqa: ANN001
    store, session_id = session
    assert ids(store.error_list.errors(session_id, limit=10, order=TREE)) == [7, 1, 2, 5, 6, 4]
    assert ids(store.error_list.errors(session_id, limit=10, oracle="atomic")) == [6, 1, 7]
    assert ids(
        store.error_list.errors(session_id, offset=1, limit=1, oracle="atomic", order=TREE)
    ) == [1]
    assert store.error_list.count_errors(session_id, "atomic") == 3
    assert store.error_list.error_oracles(session_id) == [
        "atomic",
        "sequential_intra",
        "ontological",
        "variant",
    ]
    ontological = store.error_list.errors(session_id, limit=1, oracle="ontological")[0]
    assert ontological.path_names == ("Alpha", "Be", "Ce")


def test_next_and_previous_error_wrap_around(session) -> None:  # noqa: ANN001
    store, session_id = session
    assert store.error_list.step_error(session_id, None, 1).verdict_id == 6
    assert store.error_list.step_error(session_id, None, -1).verdict_id == 4
    assert store.error_list.step_error(session_id, 5, 1).verdict_id == 6
    assert store.error_list.step_error(session_id, 0, -1).verdict_id == 4
    assert store.error_list.step_error(session_id, 2, 1, oracle="atomic").verdict_id == 6
    assert store.error_list.error_index(session_id, 2) == 4
    assert store.error_list.error_index(session_id, 2, order=TREE) == 2
    assert store.error_list.error_index(session_id, 2, oracle="atomic") is None
    assert store.error_list.error_index(session_id, 3) is None  # not an error


def test_tree_children_carry_their_rollups(session) -> None:  # noqa: ANN001
    store, session_id = session
    roots = store.tree.children(session_id, None)
    assert [node.node for node in roots] == ["A"]
    alpha = roots[0]
    assert (alpha.subtree.relations, alpha.subtree.error_total, alpha.errors_below) == (5, 6, 6)
    assert alpha.subtree.answers == {
        "t1": {"yes": 3, "no": 2},
        "t2": {"yes": 3, "invalid": 1, "no": 1},
    }
    children = store.tree.children(session_id, "A")
    assert [node.node for node in children] == ["B", "D", "E"]
    be = children[0]
    assert be.relation == "A>B" and be.answers == {"t1": Answer.YES, "t2": Answer.YES}
    assert (be.own.relations, be.own.errors) == (1, {"atomic": 1})
    assert (be.subtree.relations, be.subtree.error_total, be.errors_below) == (3, 5, 4)
    ce = store.tree.children(session_id, "B")[0]
    assert ce.own.errors == {"atomic": 2, "ontological": 1, "sequential_intra": 1}
    assert ce.own.relations == 2 and ce.children == 0
    assert [node.node for node in store.tree.children(session_id, "A", errors_only=True)] == [
        "B",
        "D",
    ]
    assert store.tree.way(session_id, "C") == ("A", "B", "C")


def test_gap_lists_page_per_template(session) -> None:  # noqa: ANN001
    store, session_id = session
    assert store.gaps.gap_groups(session_id) == [("t1", 2), ("t2", 2), ("intersection", 1)]
    assert [row.relation_id for row in store.gaps.gap_page(session_id, "t1")] == ["A>C", "A>D"]
    assert [row.relation_id for row in store.gaps.gap_page(session_id, "t2")] == ["B>C", "A>D"]
    assert [row.relation_id for row in store.gaps.gap_page(session_id, "t2", offset=1)] == ["A>D"]
    assert [row.relation_id for row in store.gaps.gap_page(session_id, "intersection")] == ["A>D"]
    assert store.gaps.gap_page(session_id, "t1", offset=2) == []


def test_relation_detail_reads_one_relation(session) -> None:  # noqa: ANN001
    store, session_id = session
    detail = store.details.relation_detail(session_id, "A>C")
    assert detail is not None
    assert detail.name == "Alpha ⊃ Ce" and detail.path_names == ("Alpha", "Be", "Ce")
    assert detail.answers == {"t1": Answer.NO, "t2": Answer.YES}
    assert [v.oracle for v in detail.errors] == ["atomic", "ontological"]
    assert [c.conversation.label for c in detail.conversations] == ["Q1", "Q2"]
    assert detail.conversations[0].turns[0].raw == "No."
    into = store.details.relations_into(session_id, "C")
    assert [d.relation.id for d in into] == ["A>C", "B>C"]
    assert store.details.relation_detail(session_id, "nope") is None


def test_summaries_come_from_stored_columns(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        first = store_session(store)
        store.conn.execute(
            "UPDATE sessions SET created = '2000-01-01T00:00:00' WHERE id = ?", (first,)
        )
        second = store_session(store)
        summaries = store.sessions.summaries()
    assert [s.id for s in summaries] == [second, first]
    assert summaries[1].date == "2000-01-01 00:00"
    assert summaries[0].error_rate == 0.25 and summaries[0].kinds == ("kontest", "variants")
    assert summaries[0].relations == 5 and summaries[0].kg == "toy"


def test_distinct_labels_come_before_shorter_ones(tmp_path: Path) -> None:
    """Garnich > Garnich (one label twice) after Garnich > Capellen Longer, though shorter."""
    labels = {"X": "Garnich", "Y": "Garnich", "Z": "Capellen Longer"}
    relations = [
        Relation("X>Y", "X", "Y", "contains", ("X", "Y")),
        Relation("X>Z", "X", "Z", "contains", ("X", "Z")),
    ]
    kg = {
        "name": "same",
        "domain": "places",
        "nodes": [{"id": node, "label": label} for node, label in labels.items()],
        "edges": [{"parent": "X", "child": child} for child in ("Y", "Z")],
    }
    with Store(tmp_path / "s.db") as store:
        session_id = store.sessions.create(
            NewSession(
                kg_name="same",
                kg_json=kg,
                templates_json={},
                template_ids=["t1", "t2"],
                model="sim",
                options={},
                labels=labels,
            ),
            relations=relations,
            conversations=[],
        )
        store.verdicts.replace(
            session_id,
            [verdict("atomic", "X>Y", ("yes", "no")), verdict("atomic", "X>Z", ("no", "yes"))],
            report={},
            engine="test",
        )
        rows = store.error_list.errors(session_id)
    assert [row.verdict.relation_id for row in rows] == ["X>Z", "X>Y"]


def test_views_follow_the_stored_report(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        session_id = store_session(store)
        assert store.views.ready(session_id)
        # An answer changed in place makes the report stale: the views go with it.
        store.conn.execute("UPDATE responses SET answer = 'no' WHERE conversation = 'A>E/t1'")
        assert not store.views.ready(session_id)
        assert store.error_list.count_errors(session_id) == 0
        with pytest.raises(Exception, match="no current stored report"):
            store.views.ensure(session_id, "test")
        store.verdicts.replace(session_id, VERDICTS, report={}, engine="test")
        assert store.views.ready(session_id)
        # A gap of A>E under t1 now (it was answered no); no report gap: templates from answers
        assert [row.relation_id for row in store.gaps.gap_page(session_id, "t1")] == [
            "A>C",
            "A>D",
            "A>E",
        ]


def test_migration_to_9_then_views_built_on_demand(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(path) as store:
        session_id = store_session(store)
    conn = sqlite3.connect(path, isolation_level=None)
    # Back to version 8: the tables of versions 9 to 13 dropped as a version-8 file never
    # had them (15's columns go with the derived tables).
    from kontest_tui.store.schema import _RESPONSE_DETAILS

    conn.execute("DROP TABLE confirmation_answers")
    conn.execute("DROP TABLE confirmations")
    conn.execute("DELETE FROM schema_version WHERE version = 16")
    conn.execute("DROP TABLE session_places")
    conn.execute("DELETE FROM schema_version WHERE version = 15")
    for statement in (
        "ALTER TABLE responses DROP COLUMN p_yes",
        "DELETE FROM schema_version WHERE version = 14",
        "DROP INDEX idx_sessions_parent",
        "ALTER TABLE sessions DROP COLUMN parent",
        "ALTER TABLE responses DROP COLUMN origin",
        "DELETE FROM schema_version WHERE version = 13",
    ):
        conn.execute(statement)
    for statement in (
        "ALTER TABLE sessions DROP COLUMN headline_measure",
        "ALTER TABLE sessions DROP COLUMN headline_rate",
        "ALTER TABLE sessions DROP COLUMN fresh_conversations",
        "DELETE FROM schema_version WHERE version = 12",
    ):
        conn.execute(statement)
    for statement in (
        "DROP INDEX idx_responses_failed",
        "DROP INDEX idx_responses_stopped",
        "DROP VIEW response_details",
        "ALTER TABLE responses DROP COLUMN stopped",
        _RESPONSE_DETAILS,
        "DELETE FROM schema_version WHERE version = 11",
    ):
        conn.execute(statement)
    conn.execute("DROP TABLE probes")
    conn.execute("DELETE FROM schema_version WHERE version = 10")
    conn.execute("DROP TRIGGER result_views_report_deleted")
    for table in ("result_views", "result_nodes", "result_edges", "result_errors", "result_gaps"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("DROP INDEX idx_relations_child")
    conn.execute("DELETE FROM schema_version WHERE version = 9")
    before = conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    conn.close()
    with Store(path) as store:
        assert store.version == SCHEMA_VERSION
        assert store.conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == before
        assert not store.views.ready(session_id)
        store.views.ensure(session_id, "test")
        assert store.views.ready(session_id)
        assert ids(store.error_list.errors(session_id, limit=3)) == [6, 1, 7]
        # Deleting the report by hand takes the views along (the trigger).
        store.conn.execute("DELETE FROM session_reports")
        assert store.conn.execute("SELECT COUNT(*) FROM result_errors").fetchone()[0] == 0
    conn = sqlite3.connect(":memory:")
    assert apply_migrations(conn) == SCHEMA_VERSION


def test_a_read_only_database_builds_missing_views_in_temp_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Views of another rollups version on a read-only file: built in the connection's TEMP
    tables (the file and its directory unchanged), as the writable store builds them; a
    stale report there is one line saying the file is read only."""
    from kontest_tui.store import database

    path = tmp_path / "s.db"
    with Store(path) as store:
        session_id = store_session(store)
        expected = ids(store.error_list.errors(session_id, limit=10))
        stale = store_session(store)
        store.conn.execute("UPDATE result_views SET version = 0")
        # An answer changed by hand: that session's report goes (stale).
        store.conn.execute("UPDATE responses SET answer = 'no' WHERE session = ?", (stale,))
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.conn.execute("PRAGMA journal_mode = DELETE")
    before = path.read_bytes()
    monkeypatch.setattr(database, "_writable", lambda path: False)  # as root: say so
    with Store(path, create=False) as store:
        assert store.read_only and not store.views.ready(session_id)
        store.views.ensure(session_id, "test")
        assert store.views.ready(session_id)
        assert ids(store.error_list.errors(session_id, limit=10)) == expected
        assert [node.node for node in store.tree.children(session_id, None)] == ["A"]
        with pytest.raises(StoreError, match="stale or missing and .* is read only"):
            store.views.ensure(stale, "test")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]
