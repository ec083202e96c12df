"""`kontest compare`: two models' recorded answers replayed on one KG; every number of the
compare JSON checked against the per-session reports (read from the store, never written);
sessions with different settings refused or marked; a sample's unestimated rate left out;
Wilson intervals worked by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest

from kontest_tui.oracles.intervals import wilson_interval
from kontest_tui.oracles.report_json import ReportJSON
from kontest_tui.report.compare import compare_stored_sessions, find_comparable_sessions
from kontest_tui.report.compare_html import _measures
from kontest_tui.results.evaluate import evaluation_engine
from kontest_tui.store import Store
from tests.support.cli import kontest

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
            "--templates",
            "paper",  # the recording's texts
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
    assert data["differences"] == [] and data["left_out"] == []  # the same settings
    assert data["templates"] == {
        "t1": "Does {parent} have a {child}?",
        "t2": "Is there a {child} in {parent}?",
    }
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
    assert "KONTEST Table 3 (appendix Table 10), Errors (%)" in text
    assert "Logic hallucination rate" in text and "k/i/b/u" in text
    assert "Settings that differ" not in text
    _, markdown, _ = kontest(capsys, "compare", "--db", db, "--format", "markdown")
    assert markdown.startswith("# Comparison of 2 sessions") and "| model |" in markdown
    _, table, _ = kontest(capsys, "compare", "--db", db, "--format", "csv")
    assert table.splitlines()[0].startswith("table,model,atomic")
    html_path = Path(db).with_suffix(".html")
    code, _, err = kontest(capsys, "compare", "--db", db, "--format", "html", "--out", html_path)
    assert code == 0, err
    page = html_path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "class='bar'" in page
    assert "] deff " in page  # the bars' clustered intervals with their design effects
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
    lines = err.splitlines()
    assert code == 2 and len(lines) == 2, err
    assert lines[0].startswith("kontest: error: the sessions asked about other relations")
    # one line, both KGs by name (the graph's and relations' differences follow from it)
    assert lines[1] == f"kontest: error: KG: kinawley ({ids[0]}) vs places ({other})"
    # Without ids: the latest session's KG (places) has one session: nothing to compare.
    code, out, err = kontest(capsys, "compare", "--db", db, "--format", "json")
    assert code == 2 and out == ""
    assert err.startswith(f"kontest: error: nothing to compare: {other} (sim) is the only")
    assert "Comparison of 1 sessions" not in err
    assert "o on the explorer's results" in err


def test_compare_by_kg_leaves_out_other_scopes_and_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Five places sessions of 4 relations: sim and sim:careful alike, one of depth 1, one
    asking t1 and t3, one at temperature 0.7 with seed 3. `compare --kg places` compares the
    two alike and lists the three others, each with how it differs from them (both values);
    by id the scope is refused and the settings too, one line per difference."""
    db = tmp_path / "p.db"
    base = ["run", "--db", db, "--kg", "places", "--limit", "4", "-q", "--model"]
    runs = [
        ["sim"],
        ["sim:careful"],
        ["sim:forgetful", "--depth", "1"],
        ["sim:flaky", "--template-ids", "t1,t3"],
        ["sim:careful", "--temperature", "0.7", "--seed", "3"],
    ]
    for extra in runs:
        assert kontest(capsys, *base, *extra)[0] == 0
    _, out, _ = kontest(capsys, "sessions", "--db", db, "--json")
    ids = [row["id"] for row in json.loads(out)]
    code, out, err = kontest(capsys, "compare", "--db", db, "--kg", "places", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert [report["session"] for report in data["sessions"]] == ids[:2]
    left = {item["session"]: item["differences"] for item in data["left_out"]}
    assert left[ids[2]] == [{"setting": "depth", "values": {ids[1]: "all", ids[2]: 1}}]
    assert [d["setting"] for d in left[ids[3]]] == ["templates"]
    assert left[ids[3]][0]["values"][ids[3]] == {
        "t1": "Does {parent} contain {child}?",
        "t3": "Is {child} part of {parent}?",
    }
    assert left[ids[4]] == [
        {"setting": "temperature", "values": {ids[1]: 0.0, ids[4]: 0.7}},
        {"setting": "seed", "values": {ids[1]: 0, ids[4]: 3}},
    ]
    code, out, _ = kontest(capsys, "compare", "--db", db, "--kg", "places")
    assert out.startswith("Comparison of 2 sessions\n\nLeft out (")
    assert f"  {ids[2]} (sim:forgetful): depth: all ({ids[1]}) vs 1 ({ids[2]})" in out
    templates = (
        f"templates: t1 “Does {{parent}} contain {{child}}?”, t2 “Is {{child}} in "
        f"{{parent}}?” ({ids[1]}) vs t1 “Does {{parent}} contain {{child}}?”, t3 “Is "
        f"{{child}} part of {{parent}}?” ({ids[3]})"
    )
    assert templates in out
    code, _, err = kontest(capsys, "compare", "--db", db, ids[0], ids[2])
    assert code == 2
    assert err.splitlines()[1] == f"kontest: error: depth: all ({ids[0]}) vs 1 ({ids[2]})"
    code, _, err = kontest(capsys, "compare", "--db", db, ids[0], ids[4])
    assert err.splitlines()[1:] == [
        f"kontest: error: temperature: 0.0 ({ids[0]}) vs 0.7 ({ids[4]})",
        f"kontest: error: seed: 0 ({ids[0]}) vs 3 ({ids[4]})",
    ]
    code, _, err = kontest(capsys, "compare", "--db", db, ids[0])
    assert code == 2 and "nothing to compare: give two or more sessions" in err


def test_one_kg_file_under_two_paths_is_one_kg(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same file run as `evil.json` (from its folder) and by its full path: one KG (its
    name and content), compared by default, by --kg with either path or the KG's name."""
    folder = tmp_path / "qa"
    folder.mkdir()
    (folder / "evil.json").write_text(KG.read_text(encoding="utf-8"), encoding="utf-8")
    db = tmp_path / "e.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        assert kontest(capsys, "run", "--db", db, "--kg", "evil.json", "-q")[0] == 0
    full = str(folder / "evil.json")
    assert kontest(capsys, "run", "--db", db, "--kg", full, "--model", "sim:careful", "-q")[0] == 0
    _, out, _ = kontest(capsys, "sessions", "--db", db)
    assert "kinawley (evil.json)" in out and f"kinawley ({full})" in out  # the KG by its name
    for chosen in ((), ("--kg", "evil.json"), ("--kg", full), ("--kg", "kinawley")):
        code, out, err = kontest(capsys, "compare", "--db", db, *chosen)
        assert code == 0 and out.startswith("Comparison of 2 sessions\n"), (chosen, err)
    with Store(db) as store:  # the explorer offers the other session too
        ids = store.sessions.ids()
        names = store.sessions.header(ids[0]).kg_names
        found = find_comparable_sessions(store, names, store.relations.ids(ids[0]), ids[0])
    assert [choice.id for choice in found.offered] == [ids[1]] and found.left_out == []


def test_wilson_interval_by_hand() -> None:
    """p = 8/10: centre (0.8 + 1.92/10) / 1.384 = 0.7167, half width 0.2266 -> [0.4902, 0.9433]."""
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    low, high = wilson_interval(0, 7)
    assert low == 0.0 and round(high, 4) == 0.3543


def test_compare_reads_stored_reports_and_never_writes(
    two_sessions: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Each REPORT is the stored one (a hand edit shows); a stale one is evaluated in memory
    and left stale (reading never writes)."""
    db, ids = two_sessions
    with Store(db) as store, store.transaction() as conn:
        conn.execute(
            "UPDATE session_reports SET report = json_set(report, '$.relations', 99)"
            " WHERE session = ?",
            (ids[0],),
        )
    code, out, err = kontest(capsys, "compare", *ids, "--db", db, "--format", "json")
    assert code == 0, err
    assert [r["relations"] for r in json.loads(out)["sessions"]] == [99, 3]
    with Store(db) as store, store.transaction() as conn:  # an answer edited: stale
        conn.execute(
            "UPDATE responses SET raw = raw WHERE id = (SELECT MIN(id) FROM responses"
            " WHERE session = ?)",
            (ids[1],),
        )
    code, out, err = kontest(capsys, "compare", *ids, "--db", db, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["sessions"][1]["relations"] == 3  # evaluated again
    with Store(db, create=False) as store:
        assert store.reports.read(ids[1], engine=evaluation_engine()) is None  # still stale


def test_sessions_with_other_settings_are_refused_or_marked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two sessions differing in temperature and system prompt: refused, one line per
    difference (exit 2); with --allow-differences every format shows them."""
    db = tmp_path / "d.db"
    base = ["run", "--db", db, "--kg", KG, "--model", "sim", "-q"]
    assert kontest(capsys, *base)[0] == 0
    extra = ["--temperature", "0.7", "--system-prompt", "Answer yes or no."]
    assert kontest(capsys, *base, *extra)[0] == 0
    _, out, _ = kontest(capsys, "sessions", "--db", db, "--json")
    ids = [row["id"] for row in json.loads(out)]
    code, _, err = kontest(capsys, "compare", *ids, "--db", db)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 3, err
    assert lines[0].startswith("kontest: error: the sessions' settings differ in 2 ways")
    assert "--allow-differences" in lines[0]
    assert lines[1].startswith("kontest: error: system prompt: ")
    assert lines[2].startswith("kontest: error: temperature: 0.0 (") and " vs 0.7 (" in lines[2]
    # Without ids: nothing alike to compare, the other session's differences one per line.
    code, _, err = kontest(capsys, "compare", "--db", db)
    assert code == 2 and err.splitlines()[1:] == [
        f"kontest: error: {ids[0]} (sim):",
        f"kontest: error:   system prompt: Answer yes or no. ({ids[1]}) vs Be concise as "
        f"possible. Answer with a yes or no response. ({ids[0]})",
        f"kontest: error:   temperature: 0.7 ({ids[1]}) vs 0.0 ({ids[0]})",
    ]
    code, out, err = kontest(
        capsys, "compare", "--db", db, "--format", "json", "--allow-differences"
    )
    assert code == 0, err
    data = json.loads(out)
    ids = [report["session"] for report in data["sessions"]]
    assert data["differences"] == [
        {
            "setting": "system prompt",
            "values": {
                ids[0]: "Be concise as possible. Answer with a yes or no response.",
                ids[1]: "Answer yes or no.",
            },
        },
        {"setting": "temperature", "values": {ids[0]: 0.0, ids[1]: 0.7}},
    ]
    for fmt, above in (("text", "Settings that differ"), ("markdown", "## Settings that differ")):
        code, out, _ = kontest(
            capsys, "compare", "--db", db, "--format", fmt, "--allow-differences"
        )
        assert code == 0 and out.index(above) < out.index("KONTEST Table 3"), fmt
        assert "0.7" in out
    code, out, _ = kontest(capsys, "compare", "--db", db, "--format", "csv", "--allow-differences")
    assert out.splitlines()[0].startswith("table,setting,")
    code, out, _ = kontest(capsys, "compare", "--db", db, "--format", "html", "--allow-differences")
    assert "Settings that differ" in out and "0.7" in out
    # the explorer's pair view gets them too (it never refuses)
    with Store(db) as store:
        pair = compare_stored_sessions(store, ids[0], ids[1])
    assert [d.setting for d in pair.settings] == ["system prompt", "temperature"]


def test_a_samples_unestimated_rate_is_left_out_of_its_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    for model in ("sim", "sim:forgetful"):
        code, _, err = kontest(
            capsys, "run", "--db", db, "--kg", "places", "--model", model, "--sample", "20", "-q"
        )
        assert code == 0, err
    code, out, err = kontest(capsys, "compare", "--db", db, "--format", "json")
    assert code == 0, err
    for report in json.loads(out)["sessions"]:
        rates = report["rates"]
        assert rates["ontological"]["interval"] is None
        assert rates["total"]["oracles"] == ["atomic", "sequential_intra", "sequential_inter"]
        metamorphic = ("atomic", "sequential_intra", "sequential_inter")
        assert rates["total"]["tests"] == sum(report["tests"][o] for o in metamorphic)
    code, text, _ = kontest(capsys, "compare", "--db", db)
    table = text[text.index("KONTEST Table 3") :].split("\n\n")[0]
    rows = [line for line in table.splitlines() if line.startswith("sim")]
    assert len(rows) == 2
    for row in rows:
        assert "not estimated" in row and "(without ontological)" in row


def test_a_fresh_conversations_session_is_not_compared_with_a_default_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--fresh-conversations` is a setting of the questions (each sequential conversation
    asked from scratch, the stability test added): compare refuses it beside a default
    session and names it; --allow-differences lists it."""
    db = tmp_path / "f.db"
    base = ["run", "--db", db, "--kg", KG, "--model", "sim", "-q"]
    assert kontest(capsys, *base)[0] == 0
    assert kontest(capsys, *base, "--fresh-conversations")[0] == 0
    _, out, _ = kontest(capsys, "sessions", "--db", db, "--json")
    ids = [row["id"] for row in json.loads(out)]
    code, _, err = kontest(capsys, "compare", *ids, "--db", db)
    assert code == 2, err
    assert err.splitlines()[1] == (
        f"kontest: error: fresh conversations: no ({ids[0]}) vs yes ({ids[1]})"
    )
    code, out, err = kontest(
        capsys, "compare", *ids, "--db", db, "--format", "json", "--allow-differences"
    )
    assert code == 0, err
    assert json.loads(out)["differences"] == [
        {"setting": "fresh conversations", "values": {ids[0]: False, ids[1]: True}}
    ]


def test_sessions_with_other_ontological_rules_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ontological rule decides which tests count (oracles.ontological): a session
    counted by the prototype's rule is not compared with one counted by the paper's."""
    db = tmp_path / "o.db"
    base = ["run", "--db", db, "--kg", KG, "--model", "sim", "-q"]
    assert kontest(capsys, *base)[0] == 0
    assert kontest(capsys, *base, "--ontological-rule", "prototype")[0] == 0
    _, out, _ = kontest(capsys, "sessions", "--db", db, "--json")
    ids = [row["id"] for row in json.loads(out)]
    code, _, err = kontest(capsys, "compare", *ids, "--db", db)
    assert code == 2, err
    assert err.splitlines()[1:] == [
        f"kontest: error: ontological rule: paper ({ids[0]}) vs prototype ({ids[1]})"
    ]


def test_the_html_bars_are_kontests_and_each_declared_kind_headline() -> None:
    report = {
        "rates": {
            "total": {"errors": 3, "tests": 30, "interval": [0.02, 0.25], "design_effect": 1.2},
            "hallucination": {"interval": [0.1, 0.5], "design_effect": 1.4},
        },
        "logic": {"errors": 4, "asked": 16},
        "factcheck": {"correct": 8, "asked": 10},
        "variants": {"errors": 2, "tests": 9},
        "accuracy": {"logic": {"errors": 4, "asked": 16}, "factcheck": {"correct": 8, "asked": 10}},
        "consistency": {"variant": {"errors": 2, "tests": 9}},
    }
    # KONTEST's, then logic's and FactChecker's (their kinds declare a bar, in headline rank;
    # FactChecker has no report interval: Wilson's); the variants have none
    assert _measures(cast("ReportJSON", report)) == [
        ("KONTEST error rate", 3, 30, [0.02, 0.25], 1.2),
        ("hallucination rate", 4, 16, [0.1, 0.5], 1.4),
        ("FactChecker accuracy", 8, 10, None, None),
    ]
    del report["logic"]  # a kind whose section the report lacks gets no bar
    assert [name for name, *_ in _measures(cast("ReportJSON", report))][1:] == [
        "FactChecker accuracy"
    ]
