"""oracles.report_json and report.compare_json: the Report JSON a run prints holds exactly the
keys ReportJSON declares (every required one, no undeclared one) for every test kind and for a
sample, so does the compare JSON of two sessions with variants; a report of another shape read
back is one readable error."""

from __future__ import annotations

import json

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.errors import InvalidInputError
from kontest_tui.oracles.report_json import (
    DoubtfulJSON,
    FindingsJSON,
    GapJSON,
    HeadlineJSON,
    RateJSON,
    RatioJSON,
    ReportJSON,
    report_from_json,
    report_section,
)
from kontest_tui.report.compare_json import (
    CompareJSON,
    OverlapJSON,
    RateCellJSON,
    TimingJSON,
    VariantQuestionJSON,
    VariantTableJSON,
)


def declared(record: type) -> tuple[frozenset[str], frozenset[str]]:
    """(required keys, every key) of a TypedDict."""
    required: frozenset[str] = record.__required_keys__  # type: ignore[attr-defined]
    optional: frozenset[str] = record.__optional_keys__  # type: ignore[attr-defined]
    return required, required | optional


def assert_shape(data: dict[str, object], record: type) -> None:
    required, every = declared(record)
    assert required <= data.keys(), sorted(required - data.keys())
    assert data.keys() <= every, sorted(data.keys() - every)


def run_report(capsys: pytest.CaptureFixture[str], db: str, *options: str) -> dict[str, object]:
    assert run_cli(["run", "--db", db, "--kg", "places", "-q", *options]) == 0
    capsys.readouterr()
    assert run_cli(["report", "--db", db, "--format", "json"]) == 0
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


@pytest.mark.parametrize(
    "options",
    [
        ("--kind", "kontest,variant,factcheck,logic", "--limit", "4"),
        ("--sample", "6", "--fresh-conversations"),
    ],
    ids=["every-kind", "sample"],
)
def test_a_printed_report_has_the_declared_keys(
    tmp_path: object, capsys: pytest.CaptureFixture[str], options: tuple[str, ...]
) -> None:
    report = run_report(capsys, str(tmp_path) + "/k.db", *options)
    assert_shape(report, ReportJSON)
    assert_shape(report["gap"], GapJSON)  # type: ignore[arg-type]
    assert_shape(report["headline"], HeadlineJSON)  # type: ignore[arg-type]
    assert_shape(report["findings"], FindingsJSON)  # type: ignore[arg-type]
    assert_shape(report["findings"]["implied_doubtful"], DoubtfulJSON)  # type: ignore[index]
    for cell in report["rates"].values():  # type: ignore[attr-defined]
        assert_shape(cell, RateJSON)
    for cell in report["consistency"].values():  # type: ignore[attr-defined]
        assert_shape(cell, RatioJSON)
    typed = report_from_json(report)
    if "--sample" in options:
        assert report_section(typed, "sample") is not None
        assert report_section(typed, "logic") is None
    else:
        assert typed.get("kinds") == ["kontest", "variant", "factcheck", "logic"]
        assert report_section(typed, "logic") is not None


def test_a_report_of_another_shape_is_one_readable_error() -> None:
    with pytest.raises(InvalidInputError, match=r"not a JSON object"):
        report_from_json([1, 2], "x.json")  # type: ignore[arg-type]
    whole: dict[str, object] = {key: 0 for key in ReportJSON.__required_keys__}
    assert report_from_json(whole) == whole
    without_gap = {key: value for key, value in whole.items() if key != "gap"}
    with pytest.raises(InvalidInputError, match=r"^the report: not a session report \(no 'gap'\)"):
        report_from_json(without_gap, "the report")


def test_the_compare_json_has_the_declared_keys(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path) + "/c.db"
    asked = ("--kind", "kontest,variant", "--limit", "6", "--variant-limit", "2")
    for model in ("sim", "sim:forgetful"):
        assert run_cli(["run", "--db", db, "--kg", "places", "-q", "--model", model, *asked]) == 0
    capsys.readouterr()
    assert run_cli(["compare", "--db", db, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert_shape(data, CompareJSON)
    assert len(data["sessions"]) == 2
    for report in data["sessions"]:
        assert_shape(report, ReportJSON)
    assert data["overlap"], "the forgetful model makes errors the other does not"
    for cell in data["overlap"].values():
        assert_shape(cell, OverlapJSON)
    for timing in data["timing"]:
        assert_shape(timing, TimingJSON)
    assert_shape(data["variant_table"], VariantTableJSON)
    assert data["variant_table"]["questions"]
    for question in data["variant_table"]["questions"]:
        assert_shape(question, VariantQuestionJSON)
    for block in data["variant_table"]["oracles"].values():
        for cell in block["total"].values():
            assert_shape(cell, RateCellJSON)
