"""Test kinds from other packages (the `kontest.kinds` entry-point group).

The test plugin (tests/plugins/kontest_test_plugin, installed by `make setup-test`) adds the
kind `holds` (one question per relation; the KG says each holds, so a no is an error) and its
option `--holds-limit` without a line of kontest_tui naming it. A session of it runs end to
end through the CLI, is stored, judged and reported with its own section; hand-made entry
points that do not fit are left out in one line each.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from kontest_tui import plugins
from kontest_tui.kinds.registry import KINDS, all_kinds, plugin_problems, reload_plugins
from tests.support.cli import kontest

ROOT = Path(__file__).parents[2]
KINAWLEY_KG = ROOT / "tests" / "data" / "kinawley_kg.json"  # 3 relations


@pytest.fixture
def fresh_plugins() -> Iterator[None]:
    reload_plugins()
    yield
    reload_plugins()


def test_the_test_plugins_kind_is_installed() -> None:
    names = [entry.name for entry in entry_points(group=plugins.KINDS_GROUP)]
    assert "holds" in names, "the test plugin is not installed: run make setup-test"


@pytest.mark.usefixtures("fresh_plugins")
def test_a_session_of_a_plugins_kind_runs_and_reports_its_section(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`--kind holds --holds-limit 2` with a model answering no to everything: 2 questions
    (the limit, of 3 relations), both valid, both errors (worked out: every relation holds)."""
    db = tmp_path / "s.db"
    code, _out, err = kontest(
        capsys, "run", "--kg", KINAWLEY_KG, "--kind", "holds", "--holds-limit", "2",
        "--model", "fixed:no", "--db", db, "--quiet",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["kinds"] == ["holds"]
    assert report["holds"] == {"asked": 2, "valid": 2, "errors": 2}
    assert report["errors"]["holds"] == 2
    assert report["headline"] == {
        "measure": "holds",
        "title": "relations denied",
        "count": 2,
        "of": 2,
        "rate": 1.0,
    }
    code, text, err = kontest(capsys, "report", "--db", db)
    assert code == 0, err
    assert "Relations that hold (test plugin)" in text
    row = next(line for line in text.splitlines() if line.startswith("relations that hold "))
    assert row.split()[-4:] == ["2", "2", "2", "100.0%"]
    # its options are stored with the session under `extra`, the built-in ones as before
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "markdown")
    assert code == 0 and "Relations that hold (test plugin)" in out


@pytest.mark.usefixtures("fresh_plugins")
def test_kontest_generate_builds_a_plugins_kind(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = kontest(
        capsys, "generate", "--kg", KINAWLEY_KG, "--kind", "holds", "--holds-limit", "1"
    )
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["test_kind"] for line in lines] == ["holds"]
    code, out, err = kontest(capsys, "generate", "--kg", KINAWLEY_KG, "--kind", "kontest,holds")
    kinds = [json.loads(line)["test_kind"] for line in out.splitlines()]
    # 3 relations: 2 atomic and 2 sequential KONTEST conversations each, then one of holds each
    assert code == 0 and kinds == ["kontest"] * 12 + ["holds"] * 3


@pytest.fixture
def hand_made(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The `kontest.kinds` group as these entry points."""
    entries = [
        EntryPoint("ghost", "kontest_no_such_plugin.kinds:KIND", plugins.KINDS_GROUP),
        EntryPoint("words", "kontest_tui.plugins:KINDS_GROUP", plugins.KINDS_GROUP),
        EntryPoint("taken", "kontest_tui.kinds.variant:KIND", plugins.KINDS_GROUP),
        EntryPoint("holds", "kontest_test_plugin.kinds:KIND", plugins.KINDS_GROUP),
    ]

    def hand_made_entry_points(group: str) -> list[EntryPoint]:
        return entries if group == plugins.KINDS_GROUP else []

    monkeypatch.setattr(importlib.metadata, "entry_points", hand_made_entry_points)
    reload_plugins()
    yield
    reload_plugins()


@pytest.mark.usefixtures("hand_made")
def test_kinds_that_do_not_fit_are_left_out_in_one_line_each(
    capsys: pytest.CaptureFixture[str],
) -> None:
    problems = {line.split("'")[1]: line for line in plugin_problems()}
    assert sorted(problems) == ["ghost", "taken", "words"]
    assert "did not load: ModuleNotFoundError" in problems["ghost"]
    assert problems["words"].endswith("str is not a kontest_tui.kinds.base.KindInfo")
    assert problems["taken"].endswith("test kind 'variant' is taken")
    assert list(all_kinds()) == [*KINDS, "holds"]  # the built-in variant kept, first
    code, _out, err = kontest(capsys, "generate", "--kg", KINAWLEY_KG, "--kind", "ghost")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "unknown test kind 'ghost'" in err and "did not load" in err


@pytest.mark.usefixtures("fresh_plugins")
def test_a_plugins_option_is_a_flag_of_run_and_generate(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "generate"):
        code, out, _err = kontest(capsys, command, "--help")
        assert code == 0 and "--holds-limit" in out and "holds" in out
