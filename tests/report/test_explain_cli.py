"""`kontest explain` on the paper's Kinawley example, recorded (tests/data/kinawley_replay.jsonl).

By hand (see tests/run/test_run_cli.py): the relation Ireland > Kinawley has four errors:
atomic (t1 alone "No.", t2 alone "Yes."), sequential within A (no, then "Yes, in County
Fermanagh."), sequential between Q1 alone (no) and B's second turn (yes), and ontological
under t1 (yes to Ireland > Ulster and Ulster > Kinawley, "No." to Ireland > Kinawley).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.kg.names import NodeNames
from kontest_tui.report.explain import build_card, evidence_from_records
from kontest_tui.report.explain_store import stored_cards
from kontest_tui.run.api import load_session
from kontest_tui.store import Store
from tests.run.run_toys import KINAWLEY_KG, KINAWLEY_REPLAY, PAPER

RELATION = "Q27>Q6410645"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("explain") / "kinawley.db")
    code = run_cli(
        ["--db", path, "run", "--kg", str(KINAWLEY_KG), "--model", f"replay:{KINAWLEY_REPLAY}"]
        + list(PAPER)
    )
    assert code == 0
    return path


def explain(capsys, db: str, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run_cli(["--db", db, "explain", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_error_of_the_relation_in_plain_words(capsys, db) -> None:
    code, out, err = explain(capsys, db, "--relation", RELATION)
    assert code == 0, err
    assert out.count("Fact tested: Ireland contains Kinawley") == 4
    for title in (
        "Two phrasings, opposite answers",
        "A contradiction within one conversation",
        "The answer changed after a rephrasing",
        "Its yes-answers imply a fact it denied",
    ):
        assert title in out
    assert "Reply:    Yes, in County Fermanagh." in out
    assert "Template: Does {parent} have a {child}?" in out
    for code_word in (" Q1 ", " A2 ", " B2 ", " t1 ", "said yes, A2"):
        assert code_word not in out


@pytest.mark.parametrize("name", ["Ireland>Kinawley", " ireland > KINAWLEY ", "Q27>Kinawley"])
def test_a_relation_by_its_labels_is_the_one_by_its_id(capsys, db, name) -> None:
    by_id = explain(capsys, db, "--relation", RELATION)
    assert explain(capsys, db, "--relation", name) == by_id
    assert by_id[0] == 0


def test_kind_and_number_pick_one_card(capsys, db) -> None:
    code, out, _ = explain(capsys, db, "--kind", "ontological")
    assert code == 0
    assert out.startswith("Its yes-answers imply a fact it denied\n")
    assert "but no to “Ireland contains Kinawley”" in " ".join(out.split())  # wrapped
    code, out, _ = explain(capsys, db, "--kind", "atomic", "--error", "1", "--format", "markdown")
    assert code == 0
    assert out.startswith("## Two phrasings, opposite answers")


def test_html_and_svg_are_standalone(capsys, db, tmp_path) -> None:
    code, out, _ = explain(capsys, db, "--kind", "atomic", "--format", "html")
    assert code == 0
    assert out.startswith("<!DOCTYPE html>") and "<script" not in out and "http" not in out
    target = tmp_path / "card.svg"
    code, _, _ = explain(capsys, db, "--kind", "atomic", "--format", "svg", "--out", str(target))
    assert code == 0
    ET.fromstring(target.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--error", "9"], "has 4 errors: --error takes 1 to 4, not 9"),
        (
            ["--relation", "Ireland>Kinawley", "--kind", "atomic", "--error", "2"],
            "has 1 “two phrasings alone” error on Ireland > Kinawley: --error takes only 1, not 2",
        ),
        (["--error", "0"], "--error counts from 1"),
        (["--relation", "Q27>nowhere"], "has no relation 'Q27>nowhere'; closest: "),
        (["--relation", "Ireland>Kinawly"], "closest: Ireland > Kinawley (Q27>Q6410645)"),
        (["--kind", "logic"], "has no “logic rules” errors"),
        (["--relation", "Q27>Q189458"], "has no errors on Ireland > Ulster"),
        (["nosuchsession"], "no session 'nosuchsession'"),
        (["--format", "pdf"], "Invalid value for '--format'"),
    ],
)
def test_bad_input_is_one_line(capsys, db, args, message) -> None:
    code, out, err = explain(capsys, db, *args)
    assert code != 0 and out == ""
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_store_evidence_gives_the_cards_the_whole_session_gives(db) -> None:
    """Cards read row by row from the store equal cards made from the session in memory."""
    with Store(db) as store:
        paged = stored_cards(store, relation=RELATION)
        session = load_session(store)
    wrong = [v for v in session.evaluation.verdicts if v.error and v.relation_id == RELATION]
    evidence = evidence_from_records(
        wrong,
        session.conversations,
        session.responses,
        session.relations,
        NodeNames(session.kg),
        template_set=session.template_set,
        session=session.id,
        model=session.model,
        kg_name=session.kg_name,
        kg_source=session.kg.source,
    )
    assert paged == [build_card(verdict, evidence) for verdict in wrong]


def test_the_clearest_error_comes_first(capsys, db) -> None:
    """Clearest first (store.views): atomic, then within one conversation, then between
    conversations, then ontological: the four errors of the relation in that order."""
    titles = []
    for number in ("1", "2", "3", "4"):
        code, out, _ = explain(capsys, db, "--error", number)
        assert code == 0
        titles.append(out.splitlines()[0])
    code, out, _ = explain(capsys, db)
    assert code == 0 and out.splitlines()[0] == titles[0]
    assert titles == [
        "Two phrasings, opposite answers",
        "A contradiction within one conversation",
        "The answer changed after a rephrasing",
        "Its yes-answers imply a fact it denied",
    ]
