"""Hostile text on every way out: answers holding terminal escapes (ESC, BEL, NUL, 8-bit C1),
bidi overrides and zero-width characters are stored as the model sent them and escaped in
every export, report, card and printed line; the same characters in KG labels, templates,
probe files, synonyms and annotated questions are removed where they enter, so no question
sent to a model holds them."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import unicodedata
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.answers import clean_text, parse_answer
from kontest_tui.domain.records import Answer
from kontest_tui.errors import KontestError
from kontest_tui.generate.conversations import build_suite
from kontest_tui.kg.io import load_graph
from kontest_tui.safe_text import escape_unsafe, has_unsafe

# What a hostile model answers: a screen clear, an OSC 52 clipboard write ended by BEL, a
# window title, NUL, a one-byte C1 CSI, a right-to-left override and a zero-width space.
HOSTILE_YES = "\x1b[2J\x1b]52;c;ZXZpbA==\x07Yes\x00, \x1b]0;pwned\x07\x9b31m \u202edlrow\u200b"
HOSTILE_NO = "No\x07 \x9d8;;http://x\x9c \u2066\u200dnot\u2069 \U000e0041"
UNSAFE = ("\x1b", "\x07", "\x00", "\x9b", "\x9d", "\u202e", "\u200b", "\u2066", "\U000e0041")


def no_unsafe(text: str) -> None:
    found = [char for char in UNSAFE if char in text]
    assert not found and not has_unsafe(text), f"passed through: {found!r}"


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A places session of 2 relations replayed from hostile answers (t1 yes, t2 no: every
    relation is an atomic error), made once for the module; the database path."""
    folder = tmp_path_factory.mktemp("hostile")
    suite = build_suite(load_graph("places"), limit=2)
    lines = []
    for conversation in suite.conversations:
        texts = [query.text for query in conversation.turns]
        for turn, query in enumerate(conversation.turns):
            answer = HOSTILE_YES if query.template_id == "t1" else HOSTILE_NO
            line = {"messages": texts[: turn + 1], "answer": answer, "kind": conversation.kind}
            lines.append(json.dumps(line))
    replay = folder / "hostile.jsonl"
    replay.write_text("\n".join(dict.fromkeys(lines)) + "\n", encoding="utf-8")
    db = str(folder / "s.db")
    argv = ["run", "--kg", "places", "--limit", "2", "--model", f"replay:{replay}", "--db", db]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KONTEST_HOME", str(folder / "home"))
        assert run_cli([*argv, "-q"]) == 0
    return db


def hostile_session(tmp_path: Path, capsys: pytest.CaptureFixture[str], db: str) -> str:
    """A copy of the module's hostile session (a test may write to it); its path."""
    copy = tmp_path / "s.db"
    shutil.copyfile(db, copy)
    capsys.readouterr()
    return str(copy)


def printed(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    no_unsafe(err)
    return out


def test_answers_stay_raw_in_the_store_and_parse(tmp_path, capsys, hostile_db) -> None:
    db = hostile_session(tmp_path, capsys, hostile_db)
    with sqlite3.connect(db) as conn:
        raws = {row[0] for row in conn.execute("SELECT raw FROM responses")}
        answers = {row[0] for row in conn.execute("SELECT answer FROM responses")}
    assert raws == {HOSTILE_YES, HOSTILE_NO}
    assert answers == {"yes", "no"}
    assert parse_answer("\u200b\u202eYes") is Answer.YES  # read past invisible characters


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_escapes_every_unsafe_character(tmp_path, capsys, fmt, hostile_db) -> None:
    db = hostile_session(tmp_path, capsys, hostile_db)
    out = printed(capsys, ["export", "--db", db, "--format", fmt])
    no_unsafe(out)
    if fmt == "csv":
        assert "\\u001b[2J" in out and "\\u202e" in out and "\\u009b" in out
    else:  # the same JSON: a replay of the export reads the answers as they were sent
        rows = [json.loads(line) for line in out.splitlines()]
        assert {row["answer"] for row in rows} == {HOSTILE_YES, HOSTILE_NO}
    target = tmp_path / f"out.{fmt}"
    printed(capsys, ["export", "--db", db, "--format", fmt, "--out", str(target)])
    no_unsafe(target.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--format", "text"],
        ["report", "--format", "json"],
        ["report", "--format", "markdown"],
        ["report", "--format", "csv"],
        ["report", "--format", "html"],
        ["explain", "--format", "text"],
        ["explain", "--format", "markdown"],
        ["explain", "--format", "html"],
        ["explain", "--format", "svg"],
        ["sessions"],
        ["sessions", "--json"],
    ],
)
def test_reports_cards_and_lists_print_no_unsafe_character(
    tmp_path, capsys, argv, hostile_db
) -> None:
    db = hostile_session(tmp_path, capsys, hostile_db)
    no_unsafe(printed(capsys, [*argv, "--db", db]))


def test_card_svg_fetches_no_font_from_the_web(tmp_path, capsys, hostile_db) -> None:
    db = hostile_session(tmp_path, capsys, hostile_db)
    svg = printed(capsys, ["explain", "--format", "svg", "--db", db])
    assert "<svg" in svg and "@font-face" not in svg and "cdnjs" not in svg
    assert "url(http" not in svg.replace(" ", "")


def test_probe_prints_replies_escaped(tmp_path, capsys) -> None:
    replay = tmp_path / "r.jsonl"
    replay.write_text(json.dumps({"query": "Is Kinawley in Ulster?", "answer": HOSTILE_YES}))
    argv = ["probe", "--kg", "places", "--relation", "Ulster>Kinawley", "--model"]
    argv += [f"replay:{replay}", "--question", "Is Kinawley in Ulster?"]
    for fmt in ("text", "json"):
        out = printed(capsys, [*argv, "--format", fmt])
        assert "Yes" in out
        no_unsafe(out)


def test_error_messages_escape_control_characters() -> None:
    message = str(KontestError(f"server said: {HOSTILE_YES}"))
    no_unsafe(message)
    assert "\\u001b[2J" in message


def test_clean_text_removes_every_format_character() -> None:
    format_characters = [
        chr(code) for code in range(sys.maxunicode + 1) if unicodedata.category(chr(code)) == "Cf"
    ]
    assert "\u202e" in format_characters and "\u200b" in format_characters
    assert clean_text("a" + "".join(format_characters) + "b") == "ab"
    assert not has_unsafe(escape_unsafe("".join(format_characters)))


def test_escape_keeps_json_the_same() -> None:
    value = {"answer": HOSTILE_YES + HOSTILE_NO + "\x7f\u2028\u0085", "plain": "Ulster\n\ttab"}
    text = escape_unsafe(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value
    no_unsafe(text)
    assert escape_unsafe("Ulster\n\ttab") == "Ulster\n\ttab"


# -- where text enters: KG files, CSV, templates, probe files, synonyms, questions ---------


def write_kg(path: Path) -> str:
    kg = {
        "name": "bidi\u202e",
        "domain": "places",
        "nodes": [
            {"id": "A", "label": "Ire\u202eland", "aliases": ["Ei\u200bre"], "type": ""},
            {"id": "B", "label": "Ul\u2066ster\u2069", "aliases": [], "type": ""},
            {"id": "C", "label": "Kin\x1b[2Jawley\U000e0041", "aliases": [], "type": ""},
        ],
        "edges": [{"parent": "A", "child": "B"}, {"parent": "B", "child": "C"}],
    }
    path.write_text(json.dumps(kg, ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_kg_labels_lose_bidi_and_zero_width_characters(tmp_path, capsys) -> None:
    from kontest_tui.kg.graph import printable

    assert printable("Ire\u202eland\u200b") == "Ireland"  # what the Wikidata builder applies
    kg = load_graph(write_kg(tmp_path / "kg.json"))
    assert kg.label("A") == "Ireland" and kg.nodes["A"].aliases == ("Eire",)
    assert kg.label("B") == "Ulster" and kg.label("C") == "Kinawley" and kg.name == "bidi"
    out = printed(capsys, ["generate", "--kg", str(tmp_path / "kg.json"), "--format", "jsonl"])
    assert "Does Ireland contain Kinawley?" in out
    no_unsafe(out)


def test_csv_import_cleans_labels(tmp_path, capsys) -> None:
    edges = tmp_path / "edges.csv"
    edges.write_text("A,Ire\u202eland,B,Ul\u200bster\n", encoding="utf-8")
    printed(capsys, ["kg", "import", str(edges), "--out", str(tmp_path / "kg.json")])
    kg = load_graph(str(tmp_path / "kg.json"))
    assert kg.label("A") == "Ireland" and kg.label("B") == "Ulster"


def test_template_and_probe_texts_are_cleaned(tmp_path, capsys) -> None:
    templates = tmp_path / "t.toml"
    templates.write_text(
        'domain = "places"\nsystem_prompt = "Be brief.\u202e"\n'
        '[[templates]]\nid = "t1"\ntexts = {contains = "Does {parent}\u202e have a {child}?"}\n'
        '[[templates]]\nid = "t2"\ntexts = {contains = "Is there\u200b a {child} in {parent}?"}\n',
        encoding="utf-8",
    )
    out = printed(
        capsys, ["generate", "--kg", "places", "--templates", str(templates), "--limit", "3"]
    )
    assert "Does Luxembourg have a Canton of Capellen?" in out
    no_unsafe(out)
    probes = tmp_path / "p.toml"
    probes.write_text(
        'domain = "places"\ntopic = "geo\u202e"\n[prompts]\nyes_no = "Answer\u200b yes or no."\n'
        '[factcheck.contains]\nyes_no = "Is {child}\u202e in {parent}?"\n',
        encoding="utf-8",
    )
    argv = ["generate", "--kg", "places", "--kind", "factcheck", "--probes", str(probes)]
    out = printed(capsys, [*argv, "--limit", "2"])
    assert "Is Canton of Capellen in Luxembourg?" in out
    no_unsafe(out)


def test_annotated_questions_and_synonyms_are_cleaned(tmp_path) -> None:
    from kontest_tui.generate.annotated import load_annotations
    from kontest_tui.generate.synonyms import load_synonym_lists

    questions = tmp_path / "q.jsonl"
    line = {"question": "is \u202eireland\u200b green", "answer": True, "passage": "p\x1b[2J"}
    questions.write_text(json.dumps(line), encoding="utf-8")
    loaded, problems = load_annotations(questions)
    assert not problems and loaded[0].question == "is ireland green"
    assert loaded[0].passage == "p"
    synonyms = tmp_path / "s.toml"
    synonyms.write_text('[synonyms]\nhave = ["ow\u202ens", "\u200b"]\n', encoding="utf-8")
    lists = load_synonym_lists("places", synonyms)
    assert lists.synonyms["have"][-1] == "owns" and "" not in lists.synonyms["have"]
