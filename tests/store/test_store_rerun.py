"""What the store does for a session asked again (run.rerun): another session's answers
reused and marked with their origin, and the errors one session has and the other has not
(an error known by the turns it compares; a variant's by its sentences)."""

from __future__ import annotations

from pathlib import Path

from kontest_tui.domain.extras import VariantExtras
from kontest_tui.domain.records import (
    Answer,
    Conversation,
    Query,
    Relation,
    Response,
    TestKind,
    Verdict,
)
from kontest_tui.store import Store
from kontest_tui.store.records import NewSession

RELATION = Relation("A>B", "A", "B", "contains", ("A", "B"))


def pair(first: str, second: str) -> list[Conversation]:
    return [
        Conversation("A>B/t1", "A>B", "atomic", "Q1", (Query("A>B", "t1", first),)),
        Conversation(
            "A>B/t1+t2",
            "A>B",
            "sequential",
            "A",
            (Query("A>B", "t1", first), Query("A>B", "t2", second)),
        ),
    ]


def variant(row: int, text: str) -> Conversation:
    return Conversation(
        f"A>B/t1~v{row}",
        "A>B",
        "atomic",
        f"t1 v{row}",
        (Query("A>B", "t1", text),),
        test_kind=TestKind.VARIANT,
        extras=VariantExtras(variant=row),
    )


def session(store: Store, conversations: list[Conversation], parent: str | None = None) -> str:
    return store.sessions.create(
        NewSession(
            kg_name="toy",
            kg_json={"name": "toy", "nodes": [], "edges": []},
            templates_json={"domain": "places"},
            template_ids=["t1", "t2"],
            model="sim",
            options={},
            labels={"A": "Aa", "B": "Bb"},
            parent=parent,
        ),
        relations=[RELATION],
        conversations=conversations,
    )


def test_reused_answers_are_marked_with_their_origin(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        first = session(store, pair("Q1?", "Q2?"))
        store.responses.save(first, Response("A>B/t1", 0, "Yes", Answer.YES, tokens=3))
        store.responses.save(first, Response("A>B/t1+t2", 0, "Yes", Answer.YES, attempts=2))
        store.responses.save(first, Response("A>B/t1+t2", 1, "", Answer.INVALID, "timed out"))
        # the second turn failed: only the first of A has an answer to reuse
        assert store.responses.answered_turns(first) == {"A>B/t1": 1, "A>B/t1+t2": 1}
        second = session(store, pair("Q1?", "Q2?"), parent=first)
        assert store.sessions.get(second)["parent"] == first
        stored = store.responses.reuse(first, second, [("A>B/t1+t2", "A>B/t1+t2", 2)])
        assert stored == 1  # the failed turn is not copied
        (row,) = store.responses.rows(second)
        assert (row["conversation"], row["turn"], row["raw"], row["answer"]) == (
            "A>B/t1+t2",
            0,
            "Yes",
            "yes",
        )
        assert row["origin"] == first and row["cached"] == 1 and row["attempts"] == 0
        assert store.responses.count_reused(second) == 1
        assert store.sessions.get(second)["answered"] == 1
        # a deleted parent leaves the link empty, never a dangling one
        store.sessions.delete(first)
        assert store.sessions.get(second)["parent"] is None


def test_errors_gone_new_and_kept(tmp_path: Path) -> None:
    """Before: the atomic error, a variant error on "X?" (row 1) and one on "Z?" (row 2).
    After: the same atomic error (kept); row 1 now asks "Y?" and its error is another one
    (gone and new); "Z?" moved to row 3, its error is the same one (kept); a new atomic
    error of t1+t2. So 3 before, 4 after: 1 gone, 2 new, 2 kept."""
    atomic = Verdict("atomic", "A>B", None, True, (("A>B/t1", 0), ("A>B/t1+t2", 0)), ())
    sequential = Verdict("sequential_intra", "A>B", None, True, (("A>B/t1+t2", 0),), ())

    def on(row: int) -> Verdict:
        return Verdict("variant", "A>B", "t1", True, (("A>B/t1", 0), (f"A>B/t1~v{row}", 0)), ())

    with Store(tmp_path / "s.db") as store:
        first = session(store, [*pair("Q1?", "Q2?"), variant(1, "X?"), variant(2, "Z?")])
        second = session(store, [*pair("Q1?", "Q2?"), variant(1, "Y?"), variant(3, "Z?")])
        store.verdicts.replace(first, [atomic, on(1), on(2)])
        store.verdicts.replace(second, [atomic, on(1), on(3), sequential])
        changes = store.verdicts.changes(first, second)
        assert (changes.before, changes.after) == (3, 4)
        assert (changes.gone, changes.new, changes.kept) == (1, 2, 2)
        assert [found.verdict for found in changes.first_gone] == [on(1)]
        assert [found.verdict for found in changes.first_new] == [on(1), sequential]
        assert (changes.first_new[1].parent_label, changes.first_new[1].child_label) == (
            "Aa",
            "Bb",
        )
        assert len(store.verdicts.changes(first, second, limit=1).first_new) == 1
