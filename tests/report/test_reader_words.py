"""report.words: every oracle's verdict in words worked out by hand, and no paper code (Q1,
A2, B1) or machine oracle name (sequential_intra) in any reader's view of a session with
every test kind: the text and Markdown reports, the session page (HTML and Markdown, its
picture's tooltips), `kontest explain` of each kind, `kontest compare`, `kontest sessions`.
"""

from __future__ import annotations

import re

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.extras import FactcheckExtras, LogicExtras, PremiseExtras, VariantExtras
from kontest_tui.domain.records import Answer, Conversation, Query, Relation, TestKind, Verdict
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.report.explain_store import render_named_report
from kontest_tui.report.picture import draw_picture
from kontest_tui.report.render import describe_error
from kontest_tui.report.session_page import build_session_document, document_html, document_markdown
from kontest_tui.report.words import (
    MappedNames,
    conversation_name,
    oracle_name,
    verdict_brief,
    verdict_sentence,
    verdict_template,
)
from kontest_tui.results.reports import session_report
from kontest_tui.store import Store
from tests.support.sessions import store_every_kind

Y, N = Answer.YES, Answer.NO
# The paper's codes of conversations and turns, and the oracles' JSON keys with underscores.
CODES = re.compile(r"\b[QAB][12]\b")
MACHINE = re.compile(r"sequential_intra|sequential_inter|multiple_choice|two_hop|yes_no")


def assert_reader_text(text: str, where: str) -> None:
    """No paper code and no machine oracle name in `text` (the offending line if any)."""
    for line in text.splitlines():
        assert not CODES.search(line), f"{where}: a paper code in {line!r}"
        assert not MACHINE.search(line), f"{where}: a machine name in {line!r}"


def verdict(oracle: str, answers: tuple[Answer, ...], template: str = "t1+t2", detail: str = ""):
    return Verdict(oracle, "ie>ki", template, True, (("c", 0),) * len(answers), answers, detail)


# -- words worked out by hand ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("made", "name", "sentence", "brief"),
    [
        (
            verdict("atomic", (N, Y), detail="Q1 said no, Q2 said yes"),
            "two phrasings alone",
            "asked the same thing in two phrasings, each alone, the model said no to one and "
            "yes to the other",
            "no to one phrasing, yes to the other",
        ),
        (
            verdict("sequential_intra", (Y, N), detail="A1 said yes, A2 said no"),
            "same conversation",
            "in one conversation the model said yes, then no to the same question in other words",
            "yes, then no in one conversation",
        ),
        (
            verdict("sequential_inter", (N, Y), "t2", "Q2 said no, A2 said yes"),
            "after its paraphrase",
            "asked alone, the question got no; asked again right after another phrasing of "
            "it, it got yes",
            "alone no, after its paraphrase yes",
        ),
        (
            verdict("stability", (Y, N), "t1", "Q1 said yes, A1 said no (the same question)"),
            "same question again",
            "the same question got yes asked alone and no as the first question of a conversation",
            "alone yes, as a conversation's first question no",
        ),
        (
            verdict(
                "variant",
                (Y, N),
                "t1",
                "have -> include, Ireland -> Éire: yes -> no; always flips with have -> "
                "include (2/2)",
            ),
            "reworded variants",
            "the question got yes; reworded (have → include, Ireland → Éire), it got no",
            "yes, reworded (have → include, Ireland → Éire) no",
        ),
        (
            verdict("factcheck", (Y,), "yes_no", "expected no"),
            "fact checks",
            "yes-or-no question: the right answer is no; the model said yes",
            "said yes, the right answer is no",
        ),
        (
            verdict("factcheck", (N,), "multiple_choice", "chose C, expected A"),
            "fact checks",
            "multiple-choice question: the model chose a wrong option",
            "a wrong answer",
        ),
        (
            verdict("factcheck", (N,), "wh", "matcher rules (fuzzy): similarity 40 to 'Ulster'"),
            "fact checks",
            "open question: the model's reply does not name the right entity",
            "a wrong answer",
        ),
        (
            verdict("logic", (Y,), "composite:inverse+negation", "expected no"),
            "logic rules",
            "the composite (inverse, then negation) rule gives the answer no; the model said yes",
            "said yes, the right answer is no",
        ),
        (
            verdict("annotation", (N,), "q", "original wording: expected yes, got no"),
            "annotated questions",
            "the annotation says yes; the model said no",
            "said no, the right answer is yes",
        ),
    ],
)
def test_each_oracles_verdict_in_words(made: Verdict, name, sentence, brief) -> None:
    assert oracle_name(made.oracle) == name
    assert verdict_sentence(made) == sentence
    assert verdict_brief(made) == brief
    # The stored detail (machine data, even an old one with codes) is never shown.
    for shown in (verdict_sentence(made), verdict_brief(made), describe_error(made)):
        assert_reader_text(shown, made.oracle)


def test_an_ontological_error_by_its_yes_path() -> None:
    made = Verdict(
        "ontological",
        "ie>ki",
        "t1",
        True,
        (("ie>ki/t1", 0), ("ie>ul/t1", 0), ("ul>ki/t1", 0)),
        (N, Y, Y),
        "missing edge ie -> ki (answered no); implied by yes-path ie -> ul -> ki",
    )
    names = MappedNames({"ie": "Ireland", "ul": "Ulster", "ki": "Kinawley"})
    relation = Relation("ie>ki", "ie", "ki", "contains", ("ie", "ul", "ki"))
    assert describe_error(made, relation, names) == (
        "Ireland > Kinawley · implied facts: its yes-answers chain Ireland → Ulster → "
        "Kinawley, yet it said no to “Ireland contains Kinawley”"
    )
    # Without names: the node ids, the same words.
    assert verdict_brief(made) == "no, though its yes-answers chain ie → ul → ki"
    assert verdict_template(made) == "t1"


def test_templates_and_conversations_in_words() -> None:
    assert verdict_template(verdict("factcheck", (Y,), "two_hop")) == "two-step yes-or-no question"
    assert verdict_template(verdict("logic", (Y,), "negation")) == "negation"
    assert verdict_template(verdict("atomic", (Y, N))) == "t1+t2"
    q = Query("ie>ki", "t1", "Does Ireland have a Kinawley?")
    q2 = Query("ie>ki", "t2", "Is there a Kinawley in Ireland?")
    named = {
        Conversation("a", "ie>ki", "atomic", "Q1", (q,)): "asked alone",
        Conversation("b", "ie>ki", "sequential", "B", (q2, q)): "one conversation",
        Conversation(
            "c", "ie>ki", "atomic", "t1 v3", (q,), TestKind.VARIANT, extras=VariantExtras(variant=3)
        ): "variant 3",
        Conversation(
            "d",
            "ie>ki",
            "atomic",
            "yes_no:distractor",
            (q,),
            TestKind.FACTCHECK,
            extras=FactcheckExtras(question_type="yes_no", distractor="x"),
        ): "fact check: yes-or-no question (a wrong name)",
        Conversation(
            "e",
            "ie>ki",
            "atomic",
            "negation",
            (q,),
            TestKind.LOGIC,
            extras=LogicExtras(rule="negation", steps="negation", expected_text="no", form=""),
        ): "logic rule: negation",
        Conversation(
            "f",
            "ie>ki",
            "atomic",
            "premise",
            (q,),
            TestKind.LOGIC,
            extras=PremiseExtras(fact=("ie", "ki")),
        ): "a rule's premise",
    }
    for conversation, name in named.items():
        assert conversation_name(conversation) == name


# -- every reader's view of a session with every kind -------------------------------------


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    folder = tmp_path_factory.mktemp("words")
    db = str(folder / "every.db")
    return db, store_every_kind(db, folder, ("sim:forgetful", "sim:flaky"))


def cli_out(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    code = run_cli(list(args))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def test_reports_pages_and_cards_speak_words(capsys, every_kind) -> None:
    db, (first, second, annotated) = every_kind
    with Store(db) as store:
        report = session_report(store, first, errors=10_000)
        oracles = {made.oracle for made in report.errors}
        # The scope makes errors of every kind (what the scan below must cover).
        assert {
            "atomic",
            "sequential_intra",
            "sequential_inter",
            "ontological",
            "variant",
            "factcheck",
            "logic",
        } <= oracles
        for fmt in ("text", "markdown"):
            text = render_named_report(store, first, report, fmt, max_errors=10_000)
            # every error listed, in words (a repeat under the disagreement it repeats)
            assert text.count(" · ") + text.count("repeated: ") >= len(report.errors)
            assert_reader_text(text, f"report {fmt}")
        document = build_session_document(store, first)
        assert_reader_text(document_html(document), "session page")
        assert_reader_text(document_markdown(document), "session page markdown")
        whole = build_session_document(store, annotated)
        assert_reader_text(document_html(whole), "annotation page")
    for session in (first, annotated):
        for fmt in ("text", "markdown"):
            assert_reader_text(
                cli_out(capsys, "--db", db, "report", session, "--format", fmt), "kontest report"
            )
    for kind in sorted(oracles):
        out = cli_out(capsys, "--db", db, "explain", first, "--kind", kind)
        assert_reader_text(out, f"kontest explain --kind {kind}")
    for fmt in ("text", "markdown", "html"):
        out = cli_out(capsys, "--db", db, "compare", first, second, "--format", fmt)
        assert "same conversation" in out
        assert_reader_text(out, f"kontest compare {fmt}")
    assert_reader_text(cli_out(capsys, "--db", db, "sessions"), "kontest sessions")
    # The machine keys stay in JSON and CSV (contracts).
    assert '"sequential_intra"' in cli_out(capsys, "--db", db, "report", first, "--format", "json")
    assert "tests.sequential_intra" in cli_out(
        capsys, "--db", db, "report", first, "--format", "csv"
    )


def test_picture_tooltips_speak_words() -> None:
    nodes = {node: Node(node, label) for node, label in (("ul", "Ulster"), ("ki", "Kinawley"))}
    kg = KnowledgeGraph("k", "places", nodes, [Edge("ul", "ki")])
    relation = Relation("ul>ki", "ul", "ki", "contains", ("ul", "ki"))
    old = Verdict("atomic", "ul>ki", "t1+t2", True, (), (Y, N), "Q1 said yes, Q2 said no")
    picture = draw_picture(kg, [relation], {}, [old])
    assert "Ulster &gt; Kinawley · two phrasings alone: asked the same thing" in picture.svg
    assert_reader_text(picture.svg, "picture")
