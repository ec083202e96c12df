"""Every input file is a regular file within a size limit: a device (`/dev/zero` read without
bound before, until the OOM killer came), a pipe or a file over the limit is one error line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.errors import InvalidInputError
from kontest_tui.validate_input import check_input_file, max_input_bytes, read_input_text


def fails_with_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], *words: str) -> str:
    """Run the CLI; assert a non-zero exit and exactly one error line holding `words`."""
    code = run_cli(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("kontest: error: ")]
    assert code != 0, err
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


DEVICE = "/dev/zero"


def fifo(tmp_path: Path) -> str:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)  # opening it to read would wait for a writer for ever
    return str(path)


def kg_argv(path: str) -> list[str]:
    return ["kg", "info", path]


def files_argv(tmp_path: Path, path: str) -> list[list[str]]:
    """Each way a file enters, with `path` as that file."""
    db = str(tmp_path / "s.db")
    return [
        ["kg", "info", path],
        ["kg", "import", path, "--out", str(tmp_path / "out.json")],
        ["generate", "--kg", "places", "--templates", path],
        ["generate", "--kg", "places", "--kind", "factcheck", "--probes", path],
        ["run", "--questions", path, "--db", db, "-q"],
        ["ca", "--ipm", path],
        ["kg", "build", "--domain", path, "--seed", "Q27", "--out", str(tmp_path / "b.json")],
    ]


@pytest.mark.parametrize("index", range(7))
@pytest.mark.parametrize("special", ["device", "fifo"])
def test_special_files_are_one_line(tmp_path, capsys, index, special) -> None:
    path = DEVICE if special == "device" else fifo(tmp_path)
    fails_with_one_line(capsys, files_argv(tmp_path, path)[index], "not a regular file")


def test_kg_json_pipe_is_refused_before_it_is_opened(tmp_path, capsys) -> None:
    fails_with_one_line(capsys, kg_argv(fifo(tmp_path)), "pipe.json", "not a regular file")


def test_device_kg_is_refused(capsys) -> None:
    fails_with_one_line(capsys, kg_argv(DEVICE), DEVICE, "not a regular file")


def test_replay_and_batch_files_from_a_device(tmp_path, capsys) -> None:
    db = str(tmp_path / "s.db")
    argv = ["run", "--kg", "places", "--limit", "1", "--db", db, "-q"]
    assert run_cli([*argv, "--batch-out", str(tmp_path / "batch")]) == 0
    capsys.readouterr()
    fails_with_one_line(
        capsys,
        ["run", "--resume", "--db", db, "-q", "--batch-in", DEVICE],
        "not a regular file",
    )


def test_size_limit(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("KONTEST_MAX_INPUT_MB", "1")
    assert max_input_bytes() == 2**20
    big = tmp_path / "big.json"
    big.write_text('{"nodes": [], "edges": [], "name": "' + "x" * 2**20 + '"}')
    line = fails_with_one_line(capsys, kg_argv(str(big)), "big.json", "more than the 1.0 MB")
    assert "KONTEST_MAX_INPUT_MB" in line
    with pytest.raises(InvalidInputError, match="more than"):
        read_input_text(big)
    small = tmp_path / "small.txt"
    small.write_text("fine")
    assert check_input_file(small) == 4 and read_input_text(small) == "fine"
    monkeypatch.setenv("KONTEST_MAX_INPUT_MB", "many")  # not a number: the default
    assert max_input_bytes() == 256 * 2**20
