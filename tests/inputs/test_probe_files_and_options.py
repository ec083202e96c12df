"""Probe files of the wrong shape (a text where a table goes, a number where a text goes) are
one error line, not a traceback; `--retry-errors` without `--resume` is an error, not a flag
silently ignored."""

from __future__ import annotations

import pytest

from kontest_tui.cli import run_cli


def fails_with_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], *words: str) -> str:
    code = run_cli(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("kontest: error: ")]
    assert code != 0, err
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('prompts = "x"', ("prompts", "expected a table")),
        ("logic = 5", ("logic", "expected a table")),
        ("[factcheck]\ncontains = 5", ("factcheck.contains", "table of question texts")),
        ("factcheck = []", ("factcheck", "expected a table")),
        ("domain = 5", ("domain", "expected a text")),
        ("topic = [1]", ("topic", "expected a text")),
        ("[prompts]\nyes_no = 5", ("prompts.yes_no", "expected a text")),
        ('[logic]\ncontains = {words = "in"}', ("logic.contains.words",)),
        ('[factcheck.contains]\nyes_no = ["x"]', ("factcheck.contains.yes_no",)),
    ],
)
def test_probe_file_of_the_wrong_shape(tmp_path, capsys, body, words) -> None:
    probes = tmp_path / "p.toml"
    probes.write_text(body + "\n", encoding="utf-8")
    argv = ["generate", "--kg", "places", "--kind", "factcheck,logic", "--probes", str(probes)]
    fails_with_one_line(capsys, [*argv, "--limit", "1"], "p.toml", *words)


def test_retry_errors_needs_resume(tmp_path, capsys) -> None:
    db = tmp_path / "s.db"
    argv = ["run", "--kg", "places", "--limit", "1", "--db", str(db), "-q", "--retry-errors"]
    fails_with_one_line(capsys, argv, "--retry-errors", "--resume")
    assert not db.exists()  # refused before anything is stored
    assert run_cli(["run", "--kg", "places", "--limit", "1", "--db", str(db), "-q"]) == 0
    capsys.readouterr()
    # with --resume the flag is taken: the done session is found (nothing failed to ask)
    fails_with_one_line(capsys, ["run", "--resume", "--retry-errors", "--db", str(db)], "done")
