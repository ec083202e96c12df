"""The self-explanatory session page (`kontest report --format html`, the explorer's `w`),
on the recorded Kinawley session (tests/data/kinawley_replay.jsonl).

By hand: Ireland > Kinawley has four errors (atomic, within A, across Q1/B2, ontological under
t1); Kinawley's node shows Ulster > Kinawley's answers and the marks `≠ ⚠1`; the subtree of Ulster holds only
Ulster > Kinawley, which has no error.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

import kontest_tui.results.reports as results_reports
from kontest_tui.cli import run_cli
from kontest_tui.report.session_page import (
    build_session_document,
    document_markdown,
    write_session_files,
)
from kontest_tui.store import Store
from tests.run.run_toys import KINAWLEY_KG, KINAWLEY_REPLAY, PAPER


class VisibleText(HTMLParser):
    """The text a browser shows: no tags, no attribute values (tooltips), no style."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs) -> None:
        if tag in ("style", "title"):
            self.hidden += 1

    def handle_endtag(self, tag) -> None:
        if tag in ("style", "title"):
            self.hidden -= 1

    def handle_data(self, data) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible(page: str) -> str:
    parser = VisibleText()
    parser.feed(page)
    return " ".join(" ".join(parser.parts).split())


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("page") / "kinawley.db")
    argv = ["--db", path, "run", "--kg", str(KINAWLEY_KG), "--model", f"replay:{KINAWLEY_REPLAY}"]
    argv += PAPER
    assert run_cli(argv) == 0
    return path


def page_of(capsys, db: str, *args: str) -> str:
    capsys.readouterr()
    assert run_cli(["--db", db, "report", "--format", "html", *args]) == 0
    return capsys.readouterr().out


def test_the_page_explains_itself(capsys, db, monkeypatch) -> None:
    def no_evaluation(*args, **kwargs):
        raise AssertionError("the page must be read from the store, not evaluated again")

    monkeypatch.setattr(results_reports, "evaluate_session", no_evaluation)
    page = page_of(capsys, db)
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    text = visible(page)
    # Each template by its text, a legend of every symbol.
    assert "t1 Does {parent} have a {child}?" in text
    assert "t2 Is there a {child} in {parent}?" in text
    for symbol in ("≠", "⚠N", "✗N", "▸N", "dashed edge", "idk"):
        assert f" {symbol} " in f" {text} "
    # Every error's questions and replies are visible text, not only tooltips.
    assert text.count("Fact tested: Ireland contains Kinawley") == 4
    assert "Reply: Yes, in County Fermanagh." in text
    assert "4 errors, clearest first." in text
    # The four errors come to one disagreement alone, its two repeats and one implied fact.
    assert "1 of 3 relations get opposite answers to two phrasings, each asked alone" in text
    assert "2 more errors repeat those disagreements" in text
    assert "1 implied fact denied, on 1 relation" in text
    # Kinawley's node shows the answers to Ulster > Kinawley (its tree parent's relation, all
    # yes) and the marks of every relation ending at it: Ireland > Kinawley's metamorphic
    # errors and its one ontological error, as the legend says.
    assert re.search(r">Kinawley<tspan[^>]*>t1:</tspan><tspan[^>]*>yes<", page)
    assert ">≠ ⚠1</tspan>" in page


def test_errors_only_and_a_subtree(capsys, db) -> None:
    page = page_of(capsys, db, "--errors-only")
    assert page.count("<circle") == 3  # Ireland, Ulster (the way down) and Kinawley
    assert "Only the nodes with errors" in visible(page)
    page = page_of(capsys, db, "--entity", "Ulster")
    text = visible(page)
    assert "Only the subtree of Ulster." in text
    assert page.count("<circle") == 2 and "No errors." in text
    capsys.readouterr()
    assert run_cli(["--db", db, "report", "--entity", "Ulster"]) == 2
    assert "go with --format html" in capsys.readouterr().err


def test_markdown_names_entities_by_label(db) -> None:
    with Store(db) as store:
        markdown = document_markdown(build_session_document(store))
    # the ids only where a card says what the knowledge graph holds (Wikidata's QIDs)
    by_label = markdown.replace("(Wikidata Q27 → Q6410645)", "")
    assert "Q27" not in by_label and "Q6410645" not in by_label
    assert markdown.count("**Fact tested:** Ireland contains Kinawley") == 4
    assert "| t1 | Does {parent} have a {child}? |" in markdown


def test_the_export_files(db, tmp_path) -> None:
    with Store(db) as store:
        session_id = store.sessions.resolve(None)
        paths = write_session_files(store, session_id, tmp_path)
    names = sorted(path.name for path in paths)
    assert names == sorted(
        f"kontest-{session_id}{suffix}"
        for suffix in (".json", ".md", ".csv", ".html", "-errors.html")
    )  # no probes in this session: no probes file
    errors_page = (tmp_path / f"kontest-{session_id}-errors.html").read_text(encoding="utf-8")
    assert errors_page.count("<circle") == 3


def test_probes_are_a_section_of_the_page(tmp_path) -> None:
    """Probes reach the page, not only the CSV export: the page (HTML and Markdown) lists each
    question asked by hand with its relation by labels, how it was asked, the reply and
    what it was read as; hostile text stays text; a session without probes has no section."""
    from kontest_tui.domain.records import Answer
    from kontest_tui.results.evaluate import session_graph

    db = str(tmp_path / "probed.db")
    argv = ["--db", db, "run", "--kg", str(KINAWLEY_KG), "--model", f"replay:{KINAWLEY_REPLAY}"]
    argv += PAPER
    assert run_cli(argv) == 0
    with Store(db) as store:
        session_id = store.sessions.resolve(None)
        before = build_session_document(store, session_id)
        kg = session_graph(store, session_id)
        (relation,) = [
            r
            for r in store.relations.load(session_id)
            if (kg.label(r.parent), kg.label(r.child)) == ("Ulster", "Kinawley")
        ]
        store.probes.save(
            session_id,
            relation.id,
            model="replay",
            question="<b>Is Kinawley really in Ulster?</b>",
            template=None,
            raw="No, it is in Connacht.",
            answer=Answer.NO,
        )
        store.probes.save(
            session_id,
            relation.id,
            model="replay",
            question="Does Ulster have a Kinawley?",
            template="Does {parent} have a {child}?",
            raw="",
            answer=Answer.INVALID,
            error="cannot reach the model",
        )
        document = build_session_document(store, session_id)
    from kontest_tui.report.session_page import document_html

    assert before.probes == [] and "Questions asked by hand" not in document_html(before)
    page = document_html(document)
    assert "<b>Is Kinawley" not in page  # escaped, shown as typed
    text = visible(page)
    assert "Questions asked by hand" in text
    assert "2 questions asked by hand about relations of this session" in text
    assert (
        "Ulster ⊃ Kinawley <b>Is Kinawley really in Ulster?</b> typed No, it is in Connacht. no -"
        in text
    )
    assert (
        "Ulster ⊃ Kinawley Does Ulster have a Kinawley? template Does {parent} have a {child}? "
        "failed: cannot reach the model - -" in text
    )
    markdown = document_markdown(document)
    assert "## Questions asked by hand" in markdown
    assert "| Ulster ⊃ Kinawley |" in markdown and "failed: cannot reach the model" in markdown
