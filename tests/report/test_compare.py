"""`kontest compare`: two models' recorded answers replayed on one KG; every number of the
compare JSON checked against the per-session reports; Wilson intervals worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.report.compare import wilson

DATA = Path(__file__).resolve().parents[1] / "data"
KG = DATA / "kinawley_kg.json"
LOGIC = {  # the same logic questions for both models; model B differs on two of them
    "Is it true that Ulster is located in Ireland?": ("Yes.", "Yes."),
    "Is it true that Kinawley is located in Ulster?": ("No, it is in Connacht.", "Yes"),
    "Is it true that Ulster is not located in Ireland?": ("No.", "No."),
    "Does Ireland include Ulster?": ("Yes", "Yes"),
    "Is it true that Kinawley is not located in Ulster?": ("Yes, it is.", "Yes, it is."),
    "Does Ulster include Kinawley?": ("Maybe", "No"),
    "Is it true that Kinawley is located in Ireland?": ("I don't know.", "No"),
    "Does Ireland include Kinawley?": ("No", "No"),
    "Is it true that Ireland does not include Kinawley?": ("No", "No"),
}
# Model B answers Kinawley's KONTEST questions the other way round.
FLIP = {"Does Ireland have a Kinawley?": "Yes.", "Is there a Kinawley in Ireland?": "No."}


def kontest(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run_cli([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return code, out, err


def replay(tmp_path: Path, which: int) -> Path:
    lines = []
    for line in (DATA / "kinawley_replay.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if which == 1 and record["kind"] == "atomic" and record["messages"][-1] in FLIP:
            record["answer"] = FLIP[record["messages"][-1]]
        lines.append(json.dumps(record))
    lines += [json.dumps({"query": q, "answer": pair[which]}) for q, pair in LOGIC.items()]
    path = tmp_path / f"model{which}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def two_sessions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[str]]:
    db = tmp_path / "k.db"
    for which in (0, 1):
        code, _, err = kontest(
            capsys,
            "run",
            "--db",
            db,
            "--kg",
            KG,
            "--model",
            f"replay:{replay(tmp_path, which)}",
            "--kind",
            "kontest,logic",
            "-q",
        )
        assert code == 0, err
    code, out, _ = kontest(capsys, "sessions", "--db", db, "--json")
    return db, [row["id"] for row in json.loads(out)]


def test_every_number_of_compare_json_matches_the_session_reports(
    two_sessions: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ids = two_sessions
    code, out, err = kontest(capsys, "compare", "--db", db, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {"sessions", "overlap", "timing", "variant_table"}
    # Each REPORT is exactly what `kontest report --format json` prints for that session.
    reports = []
    for session_id, shown in zip(ids, data["sessions"], strict=True):
        code, out, err = kontest(capsys, "report", session_id, "--db", db, "--format", "json")
        assert code == 0, err
        reports.append(json.loads(out))
        assert shown == reports[-1]
    # Overlap: per error type, the subsets partition the distinct errors, and each session's
    # errors are those of the subsets that contain it.
    overlap = data["overlap"]
    assert set(overlap) == {
        o for r in reports for o, n in r["errors"].items() if n and o != "total"
    }
    for oracle, cell in overlap.items():
        assert cell["errors"] == sum(cell["by_subset"].values())
        assert cell["all"] == cell["by_subset"].get("+".join(ids), 0)
        for session_id, report in zip(ids, reports, strict=True):
            found = sum(
                n for subset, n in cell["by_subset"].items() if session_id in subset.split("+")
            )
            assert found == report["errors"][oracle], (oracle, session_id)
            assert cell["unique"][session_id] == cell["by_subset"].get(session_id, 0)
    # Worked by hand: model B says Ireland has Kinawley (t1) and denies it under t2, model A
    # the opposite; both contradict themselves on that relation, so the atomic error is
    # found by both; logic: both err on the negation of Kinawley in Ulster.
    assert overlap["atomic"]["by_subset"] == {"+".join(ids): 1}
    assert overlap["logic"]["all"] >= 1
    # Timing: every stored answer is one call of a replay model (no retries, no cache).
    for row, report in zip(data["timing"], reports, strict=True):
        assert row["session"] == report["session"] and row["model"] == report["model"]
        # 18 KONTEST turns + 9 logic questions (7 derived facts and 2 distinct premises)
        assert row["calls"] == row["answers"] == report["executions"] + 9 == 27
        assert row["cached"] == report["answers_from_cache"] == 0
        assert row["s_per_call"] == pytest.approx(row["wall_s"] / row["calls"], abs=1e-5)


def test_text_markdown_csv_and_html(two_sessions: tuple[Path, list[str]], capsys) -> None:
    db, ids = two_sessions
    code, text, err = kontest(capsys, "compare", *ids, "--db", db)
    assert code == 0, err
    assert "KONTEST errors / valid tests per oracle" in text
    assert "Logic hallucination rate" in text and "k = error-knowledge" in text
    _, markdown, _ = kontest(capsys, "compare", "--db", db, "--format", "markdown")
    assert markdown.startswith("# Comparison of 2 sessions") and "| model |" in markdown
    _, table, _ = kontest(capsys, "compare", "--db", db, "--format", "csv")
    assert table.splitlines()[0].startswith("table,model,atomic")
    html_path = Path(db).with_suffix(".html")
    code, _, err = kontest(capsys, "compare", "--db", db, "--format", "html", "--out", html_path)
    assert code == 0, err
    page = html_path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "class='bar'" in page
    assert "src=" not in page and "<link" not in page  # standalone: nothing to fetch


def test_sessions_on_different_kgs_are_refused(
    two_sessions: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ids = two_sessions
    code, _, err = kontest(
        capsys, "run", "--db", db, "--kg", "places", "--model", "sim", "--limit", "3", "-q"
    )
    assert code == 0, err
    _, out, _ = kontest(capsys, "sessions", "--db", db, "--json")
    other = json.loads(out)[-1]["id"]
    code, _, err = kontest(capsys, "compare", ids[0], other, "--db", db)
    assert code == 2 and err.count("\n") == 1
    assert "another KG or scope" in err
    # Without ids: the latest session's KG (places), one session.
    code, out, err = kontest(capsys, "compare", "--db", db, "--format", "json")
    assert code == 0, err
    assert [r["session"] for r in json.loads(out)["sessions"]] == [other]


def test_wilson_interval_by_hand() -> None:
    """p = 8/10: centre (0.8 + 1.92/10) / 1.384 = 0.7167, half width 0.2266 -> [0.4902, 0.9433]."""
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    low, high = wilson(0, 7)
    assert low == 0.0 and round(high, 4) == 0.3543
    assert wilson(0, 0) is None
