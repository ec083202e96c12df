"""Probe mode (run.probe, store.probes, `kontest probe`): one relation asked now, by hand.

The simulated model answers a question from its text alone (models/sim), so a template's
phrasing probed now must get the reply the session's run stored for the same question; a
probe is stored with its session, changes no metric, is exported with `--probes` and goes
when its session is deleted.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import Answer
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.templates import template_set_for_domain
from kontest_tui.kg.io import load_graph
from kontest_tui.results.relation_names import resolve_relation
from kontest_tui.run.probe import (
    Phrasing,
    find_relation,
    probe_context,
    probe_phrasings,
    probe_relation,
    store_probe_answers,
    synonym_from_question,
    template_from_question,
)
from kontest_tui.store import SCHEMA_VERSION, Store
from kontest_tui.store.schema import apply_migrations
from tests.run.run_toys import KINAWLEY_KG, KINAWLEY_REPLAY

PLACES = load_graph("places")
TEMPLATES = template_set_for_domain("places")
PAPER = template_set_for_domain("places", "paper")  # the texts of tests/data/kinawley_replay.jsonl
CAPELLEN = "luxembourg>luxembourg.canton-of-capellen"


def test_a_relation_by_labels_or_ids_must_go_down_the_graph() -> None:
    kg = load_graph(str(KINAWLEY_KG))
    relation = find_relation(kg, "Ireland>Kinawley")
    assert relation.id == "Q27>Q6410645"
    assert relation.path == ("Q27", "Q189458", "Q6410645")  # through Ulster
    assert find_relation(kg, "Q189458>Q6410645").path == ("Q189458", "Q6410645")
    with pytest.raises(InvalidInputError, match="is not below"):
        find_relation(kg, "Kinawley>Ireland")
    with pytest.raises(InvalidInputError, match="PARENT>CHILD"):
        find_relation(kg, "Ireland")
    with pytest.raises(InvalidInputError, match="not in kinawley"):
        find_relation(kg, "Ireland>Atlantis")


def test_every_template_phrasing_then_the_questions_typed() -> None:
    kg = load_graph(str(KINAWLEY_KG))
    relation = find_relation(kg, "Ulster>Kinawley")
    phrasings = probe_phrasings(
        kg,
        relation,
        TEMPLATES,
        ["Is Kinawley in Ulster?", "  Does Ulster have a Kinawley? ", "Is Kinawley in Ulster?"],
    )
    assert phrasings == [
        Phrasing("Does Ulster contain Kinawley?", "Does {parent} contain {child}?"),
        Phrasing("Is Kinawley in Ulster?", "Is {child} in {parent}?"),
        Phrasing("Is Kinawley part of Ulster?", "Is {child} part of {parent}?"),
        Phrasing("Does Ulster have a Kinawley?"),  # typed; the repeats are asked once
    ]
    assert [p.question for p in probe_phrasings(kg, relation, PAPER)] == [
        "Does Ulster have a Kinawley?",
        "Is there a Kinawley in Ulster?",
        "Is there a Kinawley located in Ulster?",
    ]
    with pytest.raises(InvalidInputError, match="empty question"):
        probe_phrasings(kg, relation, TEMPLATES, ["   "])


def test_recorded_answers_come_back_for_the_recorded_questions() -> None:
    kg = load_graph(str(KINAWLEY_KG))
    relation = find_relation(kg, "Ireland>Kinawley")
    phrasings = probe_phrasings(kg, relation, PAPER)[:2]
    tokens: dict[int, list[str]] = {}
    answers = asyncio.run(
        probe_relation(
            f"replay:{KINAWLEY_REPLAY}",
            kg,
            phrasings,
            on_token=lambda index, token: tokens.setdefault(index, []).append(token),
        )
    )
    # tests/data/kinawley_replay.jsonl: t1 alone "No.", t2 alone "Yes."
    assert [(a.raw, a.answer) for a in answers] == [("No.", Answer.NO), ("Yes.", Answer.YES)]
    assert all(a.error is None for a in answers)


@pytest.fixture
def session_db(tmp_path) -> tuple[str, str]:
    db = str(tmp_path / "probe.db")
    assert run_cli(["--db", db, "run", "--kg", "places", "--model", "sim", "--limit", "12"]) == 0
    with Store(db) as store:
        return db, store.sessions.resolve(None)


def test_probes_of_a_session_match_its_answers_and_change_no_metric(session_db, capsys) -> None:
    db, session_id = session_db
    capsys.readouterr()
    assert run_cli(["--db", db, "report", "--format", "json"]) == 0
    before = capsys.readouterr().out
    with Store(db) as store:
        context = probe_context(store, session_id, CAPELLEN)
        stored = {
            context.conversations[i].turns[0].text: context.responses[(c.id, 0)].raw
            for i, c in enumerate(context.conversations)
            if c.kind == "atomic" and (c.id, 0) in context.responses
        }
        phrasings = context.phrasings(["Is Capellen a canton of Luxembourg?"])
        answers = asyncio.run(
            probe_relation(
                context.model, context.kg, phrasings, options=context.options, seed=context.seed
            )
        )
        saved = store_probe_answers(store, context, answers)
    assert len(stored) == 2  # the session asked t1 and t2 alone
    for answer in answers:
        if answer.phrasing.question in stored:  # the same question: the same reply
            assert answer.raw == stored[answer.phrasing.question]
    assert [p.question for p in saved] == [p.question for p in phrasings]
    assert run_cli(["--db", db, "report", "--format", "json"]) == 0
    assert capsys.readouterr().out == before  # no metric changed
    assert run_cli(["--db", db, "export", "--probes", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["question"] for row in rows] == [p.question for p in phrasings]
    assert rows[-1]["template"] is None and rows[0]["template"] == "Does {parent} contain {child}?"
    with Store(db) as store:
        store.probes.mark_promoted(saved[-1].id, "template")
        assert [p.promoted for p in store.probes.of_session(session_id)][-1] == "template"
        store.sessions.delete(session_id)
        assert list(store.probes.of_session(session_id)) == []


def test_kontest_probe_prints_every_phrasing_side_by_side(session_db, capsys) -> None:
    db, session_id = session_db
    capsys.readouterr()
    code = run_cli(
        [
            "--db",
            db,
            "probe",
            "--session",
            session_id,
            "--relation",
            CAPELLEN,
            "--question",
            "Is Capellen in Luxembourg?",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Luxembourg > Canton of Capellen  (model sim)"
    assert lines[2].split() == ["question", "phrasing", "read", "as", "reply"]
    asked = [line for line in lines[4:] if line.strip()]
    assert len(asked) == 4  # three templates and one question
    assert "template Does {parent} contain {child}?" in asked[0]
    assert asked[0].startswith("Does Luxembourg contain the Canton of Capellen?")
    assert "your own" in asked[3]
    with Store(db) as store:
        assert len(list(store.probes.of_session(session_id, CAPELLEN))) == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--relation", "a>b"], "give --kg KG or --session ID"),
        (["--kg", "places", "--relation", "Junglinster>Luxembourg"], "is not below"),
        (
            ["--kg", "places", "--relation", "Luxembourg>Junglinster", "--model", "sim:nope"],
            "unknown simulated-model profile",
        ),
        (
            ["--kg", "places", "--relation", "Luxembourg>Junglinster", "--question", " "],
            "empty question",
        ),
    ],
)
def test_bad_probe_input_is_one_line(capsys, args, message) -> None:
    capsys.readouterr()
    assert run_cli(["probe", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_rephrasing_becomes_a_template_text() -> None:
    assert (
        template_from_question("Is Kinawley a parish of Ulster?", "Ulster", "Kinawley")
        == "Is {child} a parish of {parent}?"
    )
    # One label inside the other: the longer is found first.
    assert (
        template_from_question("Is Cavan in County Cavan?", "County Cavan", "Cavan")
        == "Is {child} in {parent}?"
    )
    assert template_from_question("Is {weird} Kinawley in Ulster?", "Ulster", "Kinawley") == (
        "Is {{weird}} {child} in {parent}?"
    )
    assert template_from_question("Is Kinawley in Ireland?", "Ulster", "Kinawley") is None


def test_a_changed_word_becomes_a_synonym() -> None:
    template = "Does {parent} have a {child}?"
    filled = "Does Ulster have a Kinawley?"

    def found(question: str) -> tuple[str, str] | None:
        return synonym_from_question(template, filled, question)

    assert found("Does Ulster include a Kinawley?") == ("have", "include")
    assert found("Does Ulster include a Kinawley") == ("have", "include")
    assert found("Does Ulster include any Kinawley?") is None  # two words
    assert found("Does Ulster have a Kinawley?") is None  # none
    assert found("Does Ulaidh have a Kinawley?") is None  # a label, not a template word


def test_schema_10_adds_probes_to_a_version_9_file(tmp_path) -> None:
    path = tmp_path / "v9.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=9)
    conn.executescript(
        """
        INSERT INTO kg_snapshots (id, sha256, name, json) VALUES (1, 'x', 'toy', '{}');
        INSERT INTO sessions (id, created, updated, status, kg_name, kg_snapshot, templates_json,
            template_ids, model, options_json) VALUES ('s', 'a', 'a', 'done', 'toy', 1, '{}',
            '[]', 'sim', '{}');
        """
    )
    conn.close()
    with Store(path) as store:
        assert store.version == SCHEMA_VERSION >= 10
        assert store.sessions.get("s")["model"] == "sim"
        assert list(store.probes.of_session("s")) == []
        with pytest.raises(InvalidInputError):
            store.probes.mark_promoted(1, "ensemble")


def test_a_session_relation_by_labels_shown_names_or_id(session_db) -> None:
    """Labels in any case, the explorer's names ("Garnich (locality in Garnich)" where two
    nodes share a label) and ids name the same relation; a label two relations share, or a typo, is
    refused with the relations it could mean, each with its id."""
    db, session_id = session_db
    with Store(db) as store:
        for name in (CAPELLEN, "Luxembourg>Canton of Capellen", "luxembourg >  canton of capellen"):
            assert resolve_relation(store, session_id, name).id == CAPELLEN
        inner = resolve_relation(store, session_id, "Luxembourg>Garnich (locality in Garnich)")
        assert inner.id == "luxembourg>luxembourg.canton-of-capellen.garnich.garnich"
        assert inner.child_label == "Garnich (locality in Garnich)"
        with pytest.raises(InvalidInputError) as shared:
            resolve_relation(store, session_id, "Luxembourg>Garnich")
        assert str(shared.value).count("luxembourg>luxembourg.canton-of-capellen.garnich") == 2
        assert "names 2 relations" in str(shared.value)
        with pytest.raises(InvalidInputError) as typo:
            resolve_relation(store, session_id, "Luxembourg>Canton of Capelen")
        assert f"closest: Luxembourg > Canton of Capellen ({CAPELLEN})" in str(typo.value)


def test_kontest_probe_of_a_session_takes_labels(session_db, capsys) -> None:
    db, session_id = session_db
    capsys.readouterr()
    args = ["--db", db, "probe", "--session", session_id, "--relation"]
    assert run_cli([*args, "Luxembourg>Canton of Capellen"]) == 0
    assert capsys.readouterr().out.startswith("Luxembourg > Canton of Capellen  (model sim)")
    assert run_cli([*args, "Luxembourg>Garnich"]) == 2
    err = capsys.readouterr().err
    assert "names 2 relations" in err and err.count("\n") == 1
