"""The thesis's Table 4 across models in `kontest compare`: two replayed models answer the
covering-array variants of two annotated questions; the variant x model matrix (failure rate
per covering-array row per model, 95% Wilson interval) worked out by hand (seed 004,
Sec. 1.3.4, Tabelle 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import kontest

POSTFIX = " Return a JSON Boolean."
DRINK = "can you drink {} in {} in {}?" + POSTFIX
# The first four covering-array rows (--variant-limit 4, strength 2, seed 0) of the thesis's
# question, q1 the original; the second question has no word with synonyms: one row.
QUESTIONS = [
    DRINK.format("alcohol", "public", "denmark"),
    DRINK.format("intoxicant", "populace", "denmark"),
    DRINK.format("inebriant", "world", "denmark"),
    DRINK.format("alcohol", "populace", "danmark"),
    "is the sun a planet?" + POSTFIX,
]
# Model A is consistent but once answers with an object (undefined, as DeepSeek's q3 in the
# thesis); model B answers the original wrongly and flips under two variants.
ANSWERS_A = ["true", "true", '{"response": true}', "true", "false"]
ANSWERS_B = ["false", "true", "true", "false", "true"]


@pytest.fixture
def compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[str]]:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"question": "can you drink alcohol in public in denmark", "answer": True})
        + "\n"
        + json.dumps({"question": "is the sun a planet", "answer": False})
        + "\n",
        encoding="utf-8",
    )
    db = tmp_path / "t.db"
    for name, answers in (("a", ANSWERS_A), ("b", ANSWERS_B)):
        replay = tmp_path / f"{name}.jsonl"
        replay.write_text(
            "".join(
                json.dumps({"query": q, "answer": a}) + "\n"
                for q, a in zip(QUESTIONS, answers, strict=True)
            ),
            encoding="utf-8",
        )
        code, _, err = kontest(
            capsys,
            "run",
            "--db",
            db,
            "--questions",
            questions,
            "--postfix",
            "--variant-limit",
            "4",
            "--model",
            f"replay:{replay}",
            "-q",
        )
        assert code == 0, err
    _, out, _ = kontest(capsys, "sessions", "--db", db, "--json")
    return db, [row["id"] for row in json.loads(out)]


def cells(block: dict, ids: list[str]) -> dict[str, list[tuple[int, int]]]:
    """row label -> [(failed, tests) per session], the total last."""
    rows = [*block["rows"], {"label": "total", "sessions": block["total"]}]
    return {
        row["label"]: [(row["sessions"][i]["count"], row["sessions"][i]["of"]) for i in ids]
        for row in rows
    }


def test_variant_x_model_matrix_worked_by_hand(
    compared: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ids = compared
    code, out, err = kontest(capsys, "compare", "--db", db, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {
        "sessions",
        "overlap",
        "overlap_total",
        "timing",
        "variant_table",
        "differences",
        "left_out",
        "templates",
    }
    table = data["variant_table"]
    # Annotation oracle (the thesis's): a row fails when the answer's class is not the
    # annotation. q1 (the originals of both questions): A right twice, B wrong twice (false
    # to the Denmark question, true to the sun one). q3: A's object is undefined and fails.
    # q4: B says false. Totals A 1/5, B 3/5.
    assert cells(table["oracles"]["annotation"], ids) == {
        "q1": [(0, 2), (2, 2)],
        "q2": [(0, 1), (0, 1)],
        "q3": [(1, 1), (0, 1)],
        "q4": [(0, 1), (1, 1)],
        "total": [(1, 5), (3, 5)],
    }
    # Variant oracle: valid answers against the original's (A: true, B: false); A's undefined
    # q3 is not a test; B flips to true in q2 and q3. The sun question has one row: no test.
    assert cells(table["oracles"]["variant"], ids) == {
        "q2": [(0, 1), (1, 1)],
        "q3": [(0, 0), (1, 1)],
        "q4": [(0, 1), (0, 1)],
        "total": [(0, 2), (2, 3)],
    }
    # Wilson 95% by hand per row: 0/2 -> [0, 0.6576]; 1/1 -> [0.2065, 1]; no test -> no
    # rate, no interval. The totals are the reports' rates: their interval (clustered by
    # question: two clusters, so wide) and design effect, one interval per rate.
    annotation = table["oracles"]["annotation"]
    q1, q3 = annotation["rows"][0]["sessions"], annotation["rows"][2]["sessions"]
    assert [round(x, 4) for x in q1[ids[0]]["ci95"]] == [0.0, 0.6576]
    assert [round(x, 4) for x in q3[ids[0]]["ci95"]] == [0.2065, 1.0]
    for report in data["sessions"]:
        rate = report["rates"]["annotation"]
        total = annotation["total"][report["session"]]
        assert total["ci95"] == rate["interval"]
        assert total["design_effect"] == rate["design_effect"]
    assert table["oracles"]["variant"]["rows"][1]["sessions"][ids[0]] == {
        "count": 0,
        "of": 0,
        "rate": None,
        "ci95": None,
    }
    # Each total is that oracle's tests and errors in the session's own report.
    for report in data["sessions"]:
        section = report["annotation"]
        for oracle in ("annotation", "variant"):
            total = table["oracles"][oracle]["total"][report["session"]]
            assert (total["count"], total["of"]) == (
                section["errors"][oracle],
                section["tests"][oracle],
            )
    # The Table itself: one line per variant, each model's class and what failed.
    lines = table["questions"]
    assert [line["label"] for line in lines] == ["q1", "q2", "q3", "q4", "q1"]
    assert [line["question"] for line in lines] == QUESTIONS
    assert [line["expected"] for line in lines] == ["yes"] * 4 + ["no"]
    assert [line["answers"][ids[0]] for line in lines] == ["yes", "yes", "invalid", "yes", "no"]
    assert [line["answers"][ids[1]] for line in lines] == ["no", "yes", "yes", "no", "yes"]
    assert [line["failed"]["annotation"][ids[1]] for line in lines] == [
        True,
        False,
        False,
        True,
        True,
    ]
    assert [line["failed"]["variant"][ids[1]] for line in lines] == [None, True, True, False, None]


def test_text_markdown_csv_show_the_matrix(compared: tuple[Path, list[str]], capsys) -> None:
    db, ids = compared
    _, text, _ = kontest(capsys, "compare", "--db", db)
    assert "Variant x model, annotated questions (" in text and "thesis Table 4" in text
    row = next(line for line in text.splitlines() if line.startswith("q3 "))
    assert "1/1 100.0% [20.7-100.0]" in row and "0/1 0.0% [0.0-79.3]" in row
    assert "invalid *" in text and "yes ~" in text
    _, markdown, _ = kontest(capsys, "compare", "--db", db, "--format", "markdown")
    total = next(line for line in markdown.splitlines() if line.startswith("| total | 1/5 20.0% ["))
    assert "deff" in total and "| 3/5 60.0% [" in total
    _, table, _ = kontest(capsys, "compare", "--db", db, "--format", "csv")
    assert any(
        line.startswith('"Variant x model, variant oracle') and ",q3,0/0 -," in line
        for line in table.splitlines()
    )
    _, page, _ = kontest(capsys, "compare", "--db", db, "--format", "html")
    assert "Variant x model, annotated questions (" in page
