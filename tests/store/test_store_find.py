"""Finding nodes by name (store.search), the Errors tab's filters and orders
(store.error_list) and the last place in a session's results (store.places), on the
hand-made session of test_store_views (its docstring has the verdicts and the clearest-first
order v6, v1, v7, v5, v2, v4).

Here v1 compared t1+t2 and v6 t2+t1 (their template column); v2 asked t1, the others none.
Worked out by hand for the new filters and orders:
- template t1: v6, v1, v2; t2: v6, v1; no template: v7, v5, v4;
- compared answers all yes/no: v6, v1, v5, v2; an invalid one among them: v7, v4;
- relations with C at either end (A>C, B>C): v6, v1, v5, v2; with B: v6, v7, v5;
- by relation name (parent, then child; within one relation the clearest first):
  Alpha ⊃ Be v7, Alpha ⊃ Ce v1 v2, Alpha ⊃ Delta v4, Be ⊃ Ce v6 v5;
- by template ("" < "t1" < "t1+t2" < "t2+t1"), then the clearest first: v7, v5, v4, v2, v1,
  v6.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kontest_tui.store import Store
from kontest_tui.store.places import Place
from kontest_tui.store.search import EXACT, FUZZY, HOLDS, PREFIX
from kontest_tui.store.view_records import CLEAREST, RELATION, TEMPLATE, ErrorFilter
from tests.store import test_store_views as toy
from tests.store.test_store_views import ids, store_session

ALIASED = {
    **toy.KG,
    "nodes": [
        {"id": node, "label": label, "aliases": ["Éire"] if node == "E" else []}
        for node, label in toy.LABELS.items()
    ],
}


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Store, str]:
    monkeypatch.setattr(toy, "KG", ALIASED)
    templates = {0: "t1+t2", 5: "t2+t1"}  # v1 and v6
    monkeypatch.setattr(
        toy,
        "VERDICTS",
        [
            replace(verdict, template_id=templates.get(index, verdict.template_id))
            for index, verdict in enumerate(toy.VERDICTS)
        ],
    )
    store = Store(tmp_path / "s.db")
    return store, store_session(store)


def found(store: Store, session_id: str, text: str) -> list[tuple[str, int]]:
    return [(match.node, match.tier) for match in store.search.find_nodes(session_id, text)]


def test_find_ranks_exact_then_prefix_then_inside_then_fuzzy(session) -> None:  # noqa: ANN001
    store, session_id = session
    assert found(store, session_id, "Be") == [("B", EXACT)]
    assert found(store, session_id, "delt") == [("D", PREFIX)]
    assert found(store, session_id, "LPH") == [("A", HOLDS)]
    assert found(store, session_id, "Detla") == [("D", FUZZY)]  # a typo
    assert found(store, session_id, "nothing like it") == []
    # an alias, without its accent; an id, whatever its case
    (eire,) = store.search.find_nodes(session_id, "eire")
    assert (eire.node, eire.field, eire.matched, eire.tier) == ("E", "alias", "eire", EXACT)
    by_id = store.search.find_nodes(session_id, "c")
    assert (by_id[0].node, by_id[0].field, by_id[0].tier) == ("C", "id", EXACT)
    assert by_id[0].way == ("A", "B", "C") and by_id[0].name == "Ce"


def test_errors_filtered_by_template_answers_and_nodes(session) -> None:  # noqa: ANN001
    store, session_id = session
    errors = store.error_list

    def listed(where: ErrorFilter, **options: object) -> list[int]:
        assert errors.count_errors(session_id, where=where) == len(
            rows := errors.errors(session_id, limit=10, where=where, **options)
        )
        return ids(rows)

    assert listed(ErrorFilter(template="t1")) == [6, 1, 2]
    assert listed(ErrorFilter(template="t2")) == [6, 1]
    assert listed(ErrorFilter(template="")) == [7, 5, 4]
    assert listed(ErrorFilter(clear=True)) == [6, 1, 5, 2]
    assert listed(ErrorFilter(clear=False)) == [7, 4]
    assert listed(ErrorFilter(nodes=("C",))) == [6, 1, 5, 2]
    assert listed(ErrorFilter(nodes=("B",))) == [6, 7, 5]
    assert listed(ErrorFilter(oracle="atomic", nodes=("B",))) == [6, 7]
    # the index of a row is its place in the filtered list
    assert [row.index for row in errors.errors(session_id, where=ErrorFilter(clear=False))] == [
        0,
        1,
    ]


def test_errors_sorted_by_relation_and_template_page_and_step(session) -> None:  # noqa: ANN001
    store, session_id = session
    errors = store.error_list
    assert ids(errors.errors(session_id, limit=10, order=RELATION)) == [7, 1, 2, 4, 6, 5]
    assert ids(errors.errors(session_id, limit=10, order=TEMPLATE)) == [7, 5, 4, 2, 1, 6]
    page = errors.errors(session_id, offset=2, limit=2, order=RELATION)
    assert ids(page) == [2, 4] and [row.index for row in page] == [2, 3]
    clear = ErrorFilter(clear=True)
    assert ids(errors.errors(session_id, limit=10, order=RELATION, where=clear)) == [1, 2, 6, 5]
    near_c = ErrorFilter(nodes=("C",))
    assert errors.step_error(session_id, None, 1, where=near_c).verdict_id == 6
    assert errors.step_error(session_id, 3, 1, where=near_c).verdict_id == 6  # wraps
    assert errors.step_error(session_id, None, -1, where=near_c, order=RELATION).verdict_id == 5
    assert errors.error_of(session_id, 5).index == 3
    assert errors.error_of(session_id, 3) is None  # v3 is no error
    with pytest.raises(ValueError, match="unknown error order"):
        errors.errors(session_id, order="sideways")
    assert ids(errors.errors(session_id, limit=10, order=CLEAREST)) == [6, 1, 7, 5, 2, 4]


def test_a_place_is_kept_per_session_and_not_on_a_read_only_file(session) -> None:  # noqa: ANN001
    store, session_id = session
    assert store.places.get(session_id) is None
    assert store.places.save(session_id, Place("C", 5, errors_only=True))
    assert store.places.get(session_id) == Place("C", 5, True)
    assert store.places.save(session_id, Place("B", None))
    assert store.places.get(session_id) == Place("B", None, False)
    assert not store.places.save("no-such-session", Place("B"))
    store.read_only = True  # as a file this process may not write is opened
    assert not store.places.save(session_id, Place("C"))
    assert store.places.get(session_id) == Place("B", None, False)
