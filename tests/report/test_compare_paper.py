"""`kontest compare` and `kontest ensemble` give what a researcher used to work out by hand:
the KONTEST paper's Table 3 with its metamorphic subtotal and Total row, Table 5 in its
column order, Fig. 4's totals across error types, Table 14's atomic / sequential split, the
stability rate with its interval, the weighted ensemble's spread over fold splits; and one
interval per rate (a rate the report has keeps the report's interval in the comparison).

The places recordings of the KONTEST prototype (tests/data/recordings) replayed per path with
the prototype's ontological rule give the paper's Table 3 places block exactly: every count
and percentage of its Falcon row and of its Total row is the paper's.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import median

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.report.compare_many import comparison_tables
from kontest_tui.store import Store
from tests.support.cli import kontest

RECORDINGS = Path(__file__).resolve().parents[1] / "data" / "recordings"
PLACES = ("falcon", "gemini", "gpt35", "llama2")


@pytest.fixture(scope="module")
def places_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The four places recordings replayed per path (the prototype's ontological rule)."""
    db = tmp_path_factory.mktemp("paper") / "paper.db"
    for model in PLACES:
        code = run_cli(
            [
                "run",
                "--db",
                str(db),
                "--kg",
                "places",
                "--per-path",
                "--templates",
                "paper",
                "--ontological-rule",
                "prototype",
                "--model",
                f"replay:{RECORDINGS / f'places-{model}.jsonl'}",
                "-q",
            ]
        )
        assert code == 0
    with Store(db) as store:
        ids = [str(row["id"]) for row in store.sessions.listing()]
    return db, ids


def table(text: str, title: str) -> list[list[str]]:
    """The rows of the text table whose title starts with `title`, cells split on 2+ spaces."""
    block = text[text.index(title) :].split("\n\n")[0].splitlines()
    return [[cell for cell in line.split("  ") if cell.strip()] for line in block[3:]]


def test_table_3_of_the_paper_with_its_metamorphic_subtotal_and_total_row(
    places_db: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ids = places_db
    code, text, err = kontest(capsys, "compare", "--db", db)
    assert code == 0, err
    valid = table(text, "KONTEST Table 3 (appendix Table 10), Valid Test Executions (%)")
    header = text[text.index("Valid Test Executions (%)") :].splitlines()[1]
    assert header.split("  ")[0] == "LLM (Subject)"
    for name in ("atomic", "sequential-intra", "sequential-inter", "Metamorphic All Types"):
        assert name in header
    # The paper's Table 3 (places): Falcon and Total rows, every count and percentage.
    falcon = next(row for row in valid if "places-falcon" in row[0])
    assert [cell.strip() for cell in falcon[1:]] == [
        "254 (86.4)",
        "530 (90.1)",
        "538 (91.5)",
        "1322 (89.9)",
        "267 (91.4)",
        "1589 (90.2)",
    ]
    assert [cell.strip() for cell in valid[-1]] == [
        "Total",
        "1107 (94.1)",
        "2249 (95.6)",
        "2255 (95.9)",
        "5611 (95.4)",
        "1119 (95.8)",
        "6730 (95.5)",
    ]
    errors = table(text, "KONTEST Table 3 (appendix Table 10), Errors (%)")
    falcon = next(row for row in errors if "places-falcon" in row[0])
    starts = ["50/254 19.7%", "24/530 4.5%", "152/538 28.3%", "226/1322 17.1%", "25/267 9.4%"]
    for cell, start in zip(falcon[1:], [*starts, "251/1589 15.8%"], strict=True):
        assert cell.strip().startswith(start + " [") and " deff " in cell, cell
    assert [cell.strip() for cell in errors[-1]] == [
        "Total",
        "256/1107 23.1%",
        "283/2249 12.6%",
        "603/2255 26.7%",
        "1142/5611 20.4%",
        "109/1119 9.7%",
        "1251/6730 18.6%",
    ]
    # The metamorphic subtotal is a rate of the report, with its own clustered interval.
    _, out, _ = kontest(capsys, "report", ids[0], "--db", db, "--format", "json")
    rate = json.loads(out)["rates"]["metamorphic"]
    assert (rate["errors"], rate["tests"]) == (226, 1322)
    low, high = (100 * bound for bound in rate["interval"])
    assert f"[{low:.1f}-{high:.1f}] deff {rate['design_effect']:.2f}" in falcon[4]


def test_table_5_in_the_papers_column_order(
    places_db: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """The paper's Template 1 is the prototype's "Is there ..." template (our t2): Falcon's
    row reads 294, 12 (4.1), 93 (31.6), 9 (3.1), 285 (96.9) as the paper's."""
    db, _ = places_db
    _, text, _ = kontest(capsys, "compare", "--db", db)
    title = "KONTEST Table 5, Knowledge Gap (%) and Overall Coverage (%)"
    assert "Template 1 = t2 “Is there a {child} in {parent}?”" in text[text.index(title) :]
    header = text[text.index(title) :].splitlines()[1].split()
    assert header[:4] == ["LLM", "(Subject)", "Relations", "Template"]
    falcon = next(row for row in table(text, title) if "places-falcon" in row[0])
    starts = ["294", "12/294 4.1%", "93/294 31.6%", "9/294 3.1%", "285/294 96.9%"]
    for cell, start in zip(falcon[1:], starts, strict=True):
        assert cell.strip().startswith(start), cell


def test_fig_4_totals_across_error_types(
    places_db: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ids = places_db
    _, out, _ = kontest(capsys, "compare", "--db", db, "--format", "json")
    data = json.loads(out)
    overlap, total = data["overlap"], data["overlap_total"]
    oracles = ["atomic", "sequential_intra", "sequential_inter", "ontological"]
    assert total["oracles"] == oracles
    assert total["errors"] == sum(overlap[o]["errors"] for o in oracles)
    assert total["all"] == sum(overlap[o]["all"] for o in oracles)
    for session in ids:
        assert total["unique"][session] == sum(overlap[o]["unique"][session] for o in oracles)
    assert total["one_model_only"] == sum(total["unique"].values())
    # every distinct error is found by one, two, three or all four models
    by_size = [0, 0, 0, 0, 0]
    for oracle in oracles:
        for subset, count in overlap[oracle]["by_subset"].items():
            by_size[len(subset.split("+"))] += count
    assert by_size[1] == total["one_model_only"] and by_size[4] == total["all"]
    assert sum(by_size) == total["errors"]
    _, text, _ = kontest(capsys, "compare", "--db", db)
    row = next(line for line in text.splitlines() if line.startswith("KONTEST total "))
    share = f"{total['one_model_only']} ({100 * total['one_model_only'] / total['errors']:.1f}%)"
    assert share in row and row.split()[2] == str(total["errors"])


def test_table_14_splits_the_answer_time_into_atomic_and_sequential_queries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two simulated sessions: each Table 14 cell is the sum of the answer latencies of the
    calls made, over the atomic or the sequential conversations, read from the store."""
    db = tmp_path / "t.db"
    for model in ("sim:slow", "sim"):
        run = ["run", "--db", db, "--kg", "places", "--limit", "3", "--model", model, "-q"]
        assert kontest(capsys, *run)[0] == 0
    _, out, _ = kontest(capsys, "compare", "--db", db, "--format", "json")
    data = json.loads(out)
    with Store(db) as store:
        for timing in data["timing"]:
            session = timing["session"]
            shapes = {c.id: c.kind for c in store.relations.load_conversations(session)}
            sums = {"atomic": 0.0, "sequential": 0.0}
            for row in store.responses.rows(session):
                if not row["cached"]:
                    sums[shapes[row["conversation"]]] += row["latency_ms"] / 1000
            assert timing["atomic_s"] == pytest.approx(sums["atomic"], abs=1e-3)
            assert timing["sequential_s"] == pytest.approx(sums["sequential"], abs=1e-3)
    slow = data["timing"][0]
    assert slow["atomic_s"] > 0 and slow["sequential_s"] > 0
    _, text, _ = kontest(capsys, "compare", "--db", db)
    rows = table(text, "KONTEST Table 14, Time taken to query each SUT in seconds")
    assert [row[0].strip() for row in rows] == [
        "Atomic Queries",
        "Sequential Queries",
        "Total Time",
    ]
    assert rows[0][1].strip() == f"{slow['atomic_s']:.1f}"
    assert rows[2][1].strip() == f"{slow['atomic_s'] + slow['sequential_s']:.1f}"


def test_the_stability_rate_keeps_the_reports_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One interval per rate: compare shows the stability rate (sessions asked from scratch)
    with the interval and design effect of each session's report."""
    db = tmp_path / "s.db"
    for model in ("sim", "sim:forgetful"):
        run = ["run", "--db", db, "--kg", "places", "--limit", "30", "--model", model, "-q"]
        code, _, err = kontest(capsys, *run, "--fresh-conversations")
        assert code == 0, err
    _, out, _ = kontest(capsys, "compare", "--db", db, "--format", "json")
    data = json.loads(out)
    _, text, _ = kontest(capsys, "compare", "--db", db)
    rows = table(text, "Stability, every conversation asked from scratch")
    for row, report in zip(rows, data["sessions"], strict=True):
        rate = report["rates"]["stability"]
        assert rate["tests"] > 0
        low, high = (100 * bound for bound in rate["interval"])
        assert row[1].strip() == (
            f"{rate['errors']}/{rate['tests']} {100 * rate['errors'] / rate['tests']:.1f}% "
            f"[{low:.1f}-{high:.1f}] deff {rate['design_effect']:.2f}"
        )


def test_the_weighted_ensembles_spread_over_fold_splits(
    places_db: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """The cross-validated gap depends on the fold split: over the splits of seeds 0-7 the
    weighted ensemble's gap of the paper's Template 1 (our t2) ranges 24-35 on the places
    recordings, the paper's 28 inside; seed 0's is the main table's."""
    db, ids = places_db
    code, out, err = kontest(capsys, "ensemble", *ids, "--db", db, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    spread = data["spread"]
    assert spread["seeds"] == list(range(8))
    assert spread["weighted"]["t2"][0] == data["per_template"]["t2"]["weighted"]["missing"]
    assert (min(spread["weighted"]["t2"]), max(spread["weighted"]["t2"])) == (24, 35)
    assert spread["all"] == [
        sum(spread["weighted"][t][i] for t in data["templates"]) for i in range(8)
    ]
    _, text, _ = kontest(capsys, "ensemble", *ids, "--db", db)
    block = text[text.index("Weighted ensemble's gap over 8 fold splits (seeds 0-7)") :]
    row = next(line for line in block.splitlines() if line.startswith("t2 "))
    middle = f"{median(spread['weighted']['t2']):g}"
    assert row.split()[1:5] == ["24-35", middle, str(spread["weighted"]["t2"][0]), "38"]
    _, one, _ = kontest(capsys, "ensemble", *ids, "--db", db, "--splits", "1", "--format", "json")
    assert "spread" not in json.loads(one)


def test_the_variant_flip_rate_keeps_the_reports_interval() -> None:
    """The variant flips of a session are its report's `variant` rate: the comparison shows
    the report's interval and design effect (before: Wilson's on the pooled tests, 36/306
    [8.6-15.9] beside the report's [6.8-19.6])."""
    rate = {
        "errors": 36,
        "tests": 306,
        "rate": round(36 / 306, 6),
        "interval": [0.068, 0.196],
        "interval_method": "korn-graubard-cluster",
        "design_effect": 3.1,
    }
    reports = [
        {
            "session": session,
            "model": "sim",
            "consistency": {"variant": {"tests": 306, "errors": 36, "rate": rate["rate"]}},
            "rates": {"variant": rate},
        }
        for session in ("S1", "S2")
    ]
    data = {
        "sessions": reports,
        "overlap": {},
        "overlap_total": {},
        "timing": [],
        "variant_table": {"oracles": {}, "questions": []},
        "differences": [],
        "left_out": [],
        "templates": {},
    }
    tables = comparison_tables(data)  # type: ignore[arg-type]
    title, _, rows = next(t for t in tables if t[0].startswith("Covering-array variants"))
    assert rows[0] == (
        "variant flips / tests",
        "36/306 11.8% [6.8-19.6] deff 3.10",
        "36/306 11.8% [6.8-19.6] deff 3.10",
    )
