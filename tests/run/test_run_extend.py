"""Adding a template to a stored session (run.api.add_template / extend_session).

The explorer's template editor runs a new or edited template against a session; its answers
must be stored in that session, so the report, the gap and the ensemble include it, while the
answers already received stay as they were.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kontest_tui.domain.records import Answer
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.templates import Template
from kontest_tui.kg.io import load_graph
from kontest_tui.run.api import (
    SessionSpec,
    add_template,
    extend_session,
    load_session,
    start_session,
)
from kontest_tui.store.database import Store

KINAWLEY_KG = Path(__file__).resolve().parent.parent / "data" / "kinawley_kg.json"
PART_OF = Template(id="t4", texts={"contains": "Is {child} part of {parent}?"})


@pytest.fixture
def store(tmp_path: Path):  # noqa: ANN201
    opened = Store(tmp_path / "k.db")
    yield opened
    opened.close()


def test_a_template_added_after_the_run_is_asked_stored_and_reported(store: Store) -> None:
    first = asyncio.run(
        start_session(store, SessionSpec(load_graph(str(KINAWLEY_KG)), model="sim"))
    )
    before = load_session(store, first.session_id)
    assert before.template_ids == ["t1", "t2"]
    # 3 relations x (2 atomic + 2 sequential of 2 turns) = 18 answers
    assert len(before.responses) == 18

    outcome = asyncio.run(extend_session(store, first.session_id, PART_OF))

    after = load_session(store, first.session_id)
    assert outcome.session_id == first.session_id and after.status == "done"
    assert after.template_ids == ["t1", "t2", "t4"]
    assert after.template_set is not None and "t4" in after.template_set.ids
    added = [c for c in after.conversations if c.turns[0].template_id == "t4"]
    # one atomic question per relation, labelled as the third template's
    assert [c.kind for c in added] == ["atomic"] * 3 and {c.label for c in added} == {"Q3"}
    assert (
        added[0]
        .turns[0]
        .text.endswith("part of " + after.kg.label(after.relations[0].parent) + "?")
    )
    # the 18 earlier answers are untouched, and 3 new ones are stored
    assert len(after.responses) == 21
    assert all(
        after.responses[key].raw == response.raw for key, response in before.responses.items()
    )
    report = after.evaluation.to_json()
    assert "t4" in report["gap"]["per_template"]
    # t4's gap: the relations whose t4 question the model answered no
    denied = sum(after.answers[(c.id, 0)] is Answer.NO for c in added)
    assert report["gap"]["per_template"]["t4"]["missing"] == denied


def test_a_template_id_the_session_has_is_refused_and_nothing_changes(store: Store) -> None:
    first = asyncio.run(
        start_session(store, SessionSpec(load_graph(str(KINAWLEY_KG)), model="sim"))
    )
    edited_t1 = Template(id="t1", texts={"contains": "Does {parent} include {child}?"})
    with pytest.raises(InvalidInputError, match="already has a template t1"):
        add_template(store, first.session_id, edited_t1)
    assert load_session(store, first.session_id).template_ids == ["t1", "t2"]
    assert store.sessions.get(first.session_id)["status"] == "done"


def test_the_cli_adds_a_template_to_a_session_and_prints_its_gap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kontest_tui.cli import run_cli
    from kontest_tui.generate.templates import load_template_set, save_template_set, with_template

    db = str(tmp_path / "k.db")
    assert run_cli(["run", "--kg", str(KINAWLEY_KG), "--model", "sim", "--db", db, "-q"]) == 0
    with Store(db) as store:
        session_id = load_session(store).id
    templates = tmp_path / "mine.toml"
    save_template_set(with_template(load_template_set("places"), PART_OF), templates)
    capsys.readouterr()

    argv = ["run", "--resume", session_id, "--templates", str(templates), "--add-template", "t4"]
    assert run_cli([*argv, "--db", db, "-q"]) == 0
    assert "t4" in capsys.readouterr().out
    with Store(db) as store:
        assert load_session(store, session_id).template_ids == ["t1", "t2", "t4"]

    # the same id again, or without a session: one line each, nothing changed
    assert run_cli([*argv, "--db", db, "-q"]) == 2
    assert "already has a template t4" in capsys.readouterr().err
    assert run_cli(["run", "--add-template", "t4", "--db", db]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--add-template needs --resume SESSION" in err
