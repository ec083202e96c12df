"""Sessions with other test kinds: `kontest run --kind ... / --variants / --questions`.

Hand-made case on the Kinawley graph (Ireland -> Ulster -> Kinawley), KONTEST answers from
tests/data/kinawley_replay.jsonl (15 tests, 4 errors: see test_run_cli.py) plus these
logic-rule and FactChecker answers, worked out by hand:

logic (7 derived questions, 2 premises each asked once)  expected  answer          verdict
  premise    Ulster located in Ireland?               yes       "Yes."          (premise)
  premise    Kinawley located in Ulster?              yes       "No, ..."       (premise, wrong)
  negation   Ulster is not located in Ireland?        no        "No."           correct
  inverse    Ireland includes Ulster?                 yes       "Yes"           correct
  negation   Kinawley is not located in Ulster?       no        "Yes, it is."   error
  inverse    Ulster includes Kinawley?                yes       "Maybe"         invalid
  transitive Kinawley located in Ireland?             yes       "I don't know." refusal
  composite  Ireland includes Kinawley?               yes       "No"            error
  composite  Ireland does not include Kinawley?       no        "No"            correct
  -> asked 7, valid 5, correct 3, errors 2, refusals 1; hallucination rate 2/7 (a refusal
     is a normal response), error rate of valid answers 2/5.
factcheck (2 WH questions: the KG has no other object for a yes-no distractor)
  In which country is Ulster located?     "Ireland."           correct
  In which province is Kinawley located?  "It is in Connacht." error
  -> asked 2, valid 2, correct 1, errors 1.
All oracles: tests 15 + 5 + 2 = 22, errors 4 + 2 + 1 = 7.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kontest_tui.store import Store
from tests.run.run_toys import KINAWLEY_KG, KINAWLEY_REPLAY, PAPER
from tests.support.cli import kontest

# Hand-worked logic answers on Ireland > Ulster > Kinawley (HalluVault rules, seed 002):
# premises: Ulster in Ireland "Yes", Kinawley in Ulster "No" (the model lacks this fact);
# ie>ul: negation right, inverse right; ul>kw: negation wrong (error-knowledge), inverse
# unreadable; ie>kw: transitive refused, composite:inverse wrong (error-knowledge: a premise
# denied), composite:inverse+negation right. FactChecker WH: one right, one wrong.
PROBE_ANSWERS = {
    "Is it true that Ulster is located in Ireland?": "Yes.",
    "Is it true that Kinawley is located in Ulster?": "No, it is in Connacht.",
    "Is it true that Ulster is not located in Ireland?": "No.",
    "Does Ireland include Ulster?": "Yes",
    "Is it true that Kinawley is not located in Ulster?": "Yes, it is.",
    "Does Ulster include Kinawley?": "Maybe",
    "Is it true that Kinawley is located in Ireland?": "I don't know.",
    "Does Ireland include Kinawley?": "No",
    "Is it true that Ireland does not include Kinawley?": "No",
    "In which country is Ulster located?": "Ireland.",
    "In which province is Kinawley located?": "It is in Connacht.",
}


@pytest.fixture
def replay_file(tmp_path: Path) -> Path:
    lines = Path(KINAWLEY_REPLAY).read_text(encoding="utf-8").splitlines()
    lines += [json.dumps({"query": q, "answer": a}) for q, a in PROBE_ANSWERS.items()]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_run_with_logic_and_factcheck_kinds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, replay_file: Path
) -> None:
    db = tmp_path / "k.db"
    code, out, err = kontest(
        capsys,
        "run",
        "--db",
        db,
        "--kg",
        KINAWLEY_KG,
        "--model",
        f"replay:{replay_file}",
        *PAPER,
        "--kind",
        "kontest,logic",
        "--kind",
        "factcheck",
        "-q",
    )
    assert code == 0, err
    assert "Logic rules" in out and "FactChecker questions" in out

    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    # KONTEST figures are those of the KONTEST-only run: other kinds do not disturb them.
    assert report["executions"] == 18 and report["valid"] == 17
    assert report["kinds"] == ["kontest", "factcheck", "logic"]
    assert report["tests"] == {
        "atomic": 3,
        "sequential_intra": 5,
        "sequential_inter": 5,
        "ontological": 2,
        "factcheck": 2,
        "logic": 5,  # tests over valid answers only
    }
    assert report["errors"]["logic"] == 2 and report["errors"]["factcheck"] == 1
    # Consistency (KONTEST) and accuracy (FactChecker, logic) are reported apart.
    assert report["errors"]["total"] == 4
    assert report["error_rate"] == round(4 / 15, 6)
    assert report["consistency"] == {
        "kontest": {"tests": 15, "errors": 4, "rate": round(4 / 15, 6)}
    }
    assert report["accuracy"]["logic"] == {
        "asked": 7,
        "valid": 5,
        "correct": 3,
        "errors": 2,
        "refusals": 1,
        "invalid": 1,
        "accuracy": round(3 / 7, 6),
        "error_rate": round(2 / 5, 6),
        "hallucination_rate": round(2 / 7, 6),  # HalluVault: errors of all responses
    }
    logic = report["logic"]
    assert {k: logic[k] for k in ("asked", "valid", "correct", "errors", "refusals")} == {
        "asked": 7,
        "valid": 5,
        "correct": 3,
        "errors": 2,
        "refusals": 1,
    }
    # Neither wrong answer states its reasoning ("Yes, it is.", "No"): the answer oracle
    # has nothing to compare; both rest on the denied premise Kinawley-in-Ulster.
    assert (logic["error_knowledge"], logic["error_inference"], logic["error_unstated"]) == (
        0,
        0,
        2,
    )
    assert (logic["premise_knowledge"], logic["premise_inference"]) == (2, 0)
    assert logic["hallucination_rate"] == round(2 / 7, 6)
    assert logic["accuracy"] == 42.86
    assert logic["per_rule"]["transitive"]["refusals"] == 1
    assert logic["per_rule"]["inverse"] == {
        "asked": 2,
        "valid": 1,
        "correct": 1,
        "errors": 0,
        "refusals": 0,
        "invalid": 1,
        "accuracy": 50.0,
        "error_knowledge": 0,
        "error_inference": 0,
        "error_both": 0,
        "error_unstated": 0,
        "premise_knowledge": 0,
        "premise_inference": 0,
        "premise_unclassified": 0,
        "hallucination_rate": 0.0,
        "error_rate": 0.0,
    }
    # Each distinct premise asked once in the session (2 KG links), not once per use.
    assert logic["premises"]["asked"] == 2 and logic["premises"]["errors"] == 1
    factcheck = report["factcheck"]
    assert (factcheck["asked"], factcheck["correct"], factcheck["errors"]) == (2, 1, 1)
    assert factcheck["per_type"]["wh"]["accuracy"] == 50.0

    # The export carries the kind and the expected answer of every probe.
    code, out, err = kontest(capsys, "export", "--db", db, "--format", "jsonl")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert {row["test_kind"] for row in rows} == {"kontest", "logic", "factcheck"}
    by_question = {row["question"]: row for row in rows if row["test_kind"] == "logic"}
    refused = by_question["Is it true that Kinawley is located in Ireland?"]
    assert (refused["parsed"], refused["expected"]) == ("refusal", "yes")
    assert by_question["Does Ulster include Kinawley?"]["parsed"] == "invalid"
    assert all(row["expected"] is None for row in rows if row["test_kind"] == "kontest")
    wh = next(row for row in rows if row["question"] == "In which country is Ulster located?")
    assert (wh["expected"], wh["correct_option"]) == ("Ireland", "Ireland")

    with Store(db, create=False) as store:
        session = store.sessions.get(store.sessions.resolve(None))
        assert session["kinds_json"]["kinds"] == ["kontest", "factcheck", "logic"]
        assert session["planned"] == 18 + 2 + 9  # KONTEST, FactChecker WH, logic (7 + 2 premises)


def test_variants_with_json_postfix_are_parsed_as_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "k.db"
    code, out, err = kontest(
        capsys,
        "run",
        "--db",
        db,
        "--kg",
        "places",
        "--limit",
        "3",
        "--model",
        "sim",
        "--kind",
        "variant",
        "--postfix",
        "-q",
    )
    assert code == 0, err
    with Store(db, create=False) as store:
        session_id = store.sessions.resolve(None)
        conversations = {c.id: c for c in store.relations.load_conversations(session_id)}
        responses = list(store.responses.load(session_id).values())
    assert {str(c.test_kind) for c in conversations.values()} == {"variant"}
    assert all(c.turns[0].text.endswith("? Return a JSON Boolean.") for c in conversations.values())
    raw_to_parsed = {(r.raw.strip().lower(), r.answer.value) for r in responses}
    # The simulated model answers true/false to this postfix, read as JSON; only its unsure
    # replies (its unsure_rate, not JSON) are invalid.
    booleans = {pair for pair in raw_to_parsed if pair[0] in ("true", "false")}
    assert booleans == {("true", "yes"), ("false", "no")}
    assert all(parsed == "invalid" for raw, parsed in raw_to_parsed - booleans)
    answered = [r for r in responses if r.raw.strip().lower() in ("true", "false")]
    assert len(answered) > 0.8 * len(responses)
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    report = json.loads(out)
    assert report["relations"] == 3 and report["executions"] == 0  # no KONTEST questions
    assert report["variants"]["variants"] == len(conversations)
    assert report["tests"]["variant"] == report["variants"]["tests"] > 0


def test_run_questions_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"question": "is ireland part of the united kingdom", "answer": false, "passage": "p"}\n'
        '{"question": "does ulster have a coastline", "answer": true, "passage": "p"}\n'
        "not json\n"
        '{"question": "", "answer": true, "passage": "p"}\n',
        encoding="utf-8",
    )
    replay = tmp_path / "answers.jsonl"
    replay.write_text(
        '{"query": "is ireland part of the united kingdom", "answer": "No."}\n'
        '{"query": "does ulster have a coastline", "answer": "No, it does not."}\n',
        encoding="utf-8",
    )
    db = tmp_path / "k.db"
    code, out, err = kontest(
        capsys,
        "run",
        "--db",
        db,
        "--questions",
        questions,
        "--variant-limit",
        "1",
        "--model",
        f"replay:{replay}",
        "-q",
    )
    assert code == 0, err
    assert f"{questions}:3:" in err and f"{questions}:4:" in err  # skipped, said, not silent
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    annotation = json.loads(out)["annotation"]
    # Only the original wording was asked (--variant-limit 1): q1 right, q2 wrong.
    assert annotation["questions"] == 2 and annotation["executions"] == 2
    assert annotation["tests"]["annotation"] == 2 and annotation["errors"]["annotation"] == 1
    assert annotation["accuracy"] == 0.5
    assert len(annotation["problems"]) == 2
    # A questions-only session has no KG; resuming it (here: asking again what failed) works.
    with Store(db) as store:
        session_id = store.sessions.resolve(None)
        store.conn.execute("DELETE FROM responses WHERE session = ? AND id = 1", (session_id,))
        store.sessions.update(session_id, status="cancelled")
    code, out, err = kontest(capsys, "run", "--db", db, "--resume", session_id, "-q")
    assert code == 0, err
    with Store(db, create=False) as store:
        ids = [row["id"] for row in store.responses.rows(session_id)]
    assert sorted(ids) == [2, 3]  # the deleted answer was asked again
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    assert json.loads(out)["annotation"]["executions"] == 2


def test_annotation_kind_needs_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = kontest(
        capsys, "run", "--db", tmp_path / "k.db", "--kg", "places", "--kind", "annotation"
    )
    assert code == 2 and err.count("\n") == 1 and "--questions" in err


def test_prebuilt_conversations_are_stored_as_built(tmp_path: Path) -> None:
    """The explorer builds every kind before the run (run.prepare): the session stores the
    KONTEST conversations, then the other kinds' as they were built, none twice."""
    from kontest_tui.domain.records import TestKind
    from kontest_tui.generate.conversations import build_suite
    from kontest_tui.kg.io import load_graph
    from kontest_tui.kinds.registry import KindOptions, build_other_kinds
    from kontest_tui.run.api import SessionSpec, create_session

    kg = load_graph(KINAWLEY_KG)
    suite = build_suite(kg)
    options = KindOptions()
    prebuilt = build_other_kinds(
        kg, suite.relations, suite.template_set, suite.template_ids, [TestKind.LOGIC], options
    )
    spec = SessionSpec(
        kg, kinds=(TestKind.KONTEST, TestKind.LOGIC), kind_options=options, prebuilt=prebuilt
    )
    given = [*suite.conversations, *prebuilt.conversations]
    with Store(tmp_path / "k.db") as store:
        session_id = create_session(store, spec)
        stored = store.relations.load_conversations(session_id)
        assert [c.id for c in stored] == [c.id for c in given]  # none dropped, none twice
        assert store.sessions.get(session_id)["kinds_json"]["kinds"] == ["kontest", "logic"]
