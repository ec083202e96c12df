"""Each bad input gives one `kontest: error:` line and a
non-zero exit, never a traceback (run_cli would raise it). One test per case, CLI first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.resources import SAMPLE_KGS_DIR

DEEP = "[" * 100_000 + "]" * 100_000
TOO_BIG = str(2**63)


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


def places() -> dict:
    return json.loads((SAMPLE_KGS_DIR / "places.json").read_text(encoding="utf-8"))


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def run_args(tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "--kg", "places", "--limit", "2", "--db", str(tmp_path / "s.db"), "-q", *extra]


# -- nesting depth (RecursionError before) -----------------------------------------------------


def test_deeply_nested_kg(tmp_path, capsys) -> None:
    kg = write(tmp_path / "kg.json", '{"nodes": ' + DEEP + ', "edges": []}')
    fails_with_one_line(capsys, ["kg", "info", kg], "kg.json", "nested too deeply")


def test_deeply_nested_questions(tmp_path, capsys) -> None:
    questions = write(tmp_path / "q.jsonl", '{"question": ' + DEEP + "}\n")
    argv = ["run", "--questions", questions, "--db", str(tmp_path / "s.db"), "-q"]
    fails_with_one_line(capsys, argv, "nested too deeply")


def test_deeply_nested_replay(tmp_path, capsys) -> None:
    replay = write(tmp_path / "r.jsonl", '{"query": "x", "answer": ' + DEEP + "}\n")
    argv = run_args(tmp_path, "--model", f"replay:{replay}")
    fails_with_one_line(capsys, argv, "r.jsonl:1", "nested too deeply")


def test_deeply_nested_ipm(tmp_path, capsys) -> None:
    ipm = write(tmp_path / "ipm.json", '{"parameters": ' + DEEP + "}")
    fails_with_one_line(capsys, ["ca", "--ipm", ipm], "ipm.json", "nested too deeply")


# -- number size, lone surrogates ------------------------------------------------------------


def test_five_thousand_digit_number_in_kg(tmp_path, capsys) -> None:
    text = json.dumps(places()).replace('"nodes":', '"size": ' + "9" * 5000 + ', "nodes":', 1)
    kg = write(tmp_path / "kg.json", text)
    fails_with_one_line(capsys, ["kg", "info", kg], "5000 digits")


def surrogate_kg(tmp_path: Path) -> str:
    data = places()
    data["nodes"][3]["label"] = "Ulster \ud800"
    return write(tmp_path / "kg.json", json.dumps(data))  # ensure_ascii writes "\ud800"


def test_lone_surrogate_label_kg_info(tmp_path, capsys) -> None:
    argv = ["kg", "info", surrogate_kg(tmp_path), "--json"]
    fails_with_one_line(capsys, argv, "nodes[3].label", "lone surrogate")


def test_lone_surrogate_label_run(tmp_path, capsys) -> None:
    argv = ["run", "--kg", surrogate_kg(tmp_path), "--db", str(tmp_path / "s.db"), "-q"]
    fails_with_one_line(capsys, argv, "lone surrogate")


def test_lone_surrogate_in_replay_answer(tmp_path, capsys) -> None:
    replay = write(tmp_path / "r.jsonl", '{"query": "x", "answer": "yes \\udc80"}\n')
    fails_with_one_line(capsys, run_args(tmp_path, "--model", f"replay:{replay}"), "r.jsonl:1")


# -- CLI numbers and strings ---------------------------------------------------------------


def test_port_out_of_range(tmp_path, capsys) -> None:
    argv = run_args(tmp_path, "--model", "ollama:m@http://127.0.0.1:99999")
    fails_with_one_line(capsys, argv, "port 99999")


@pytest.mark.parametrize("option", ["--seed", "--depth", "--limit", "--concurrency"])
def test_integer_above_int64(tmp_path, capsys, option) -> None:
    fails_with_one_line(capsys, run_args(tmp_path, option, TOO_BIG), option, "out of range")


def test_depth_above_int64_kg_info(capsys) -> None:
    fails_with_one_line(capsys, ["kg", "info", "places", "--depth", TOO_BIG], "--depth")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--timeout", "nan"),
        ("--timeout", "inf"),
        ("--temperature", "nan"),
        ("--temperature", "-inf"),
        ("--rate-limit", "nan"),
    ],
)
def test_floats_must_be_finite(tmp_path, capsys, option, value) -> None:
    fails_with_one_line(capsys, run_args(tmp_path, option, value), option, "not a finite number")


def test_surrogate_escaped_argument(tmp_path, capsys) -> None:
    # What Python makes of non-UTF-8 bytes in argv (surrogateescape).
    argv = run_args(tmp_path, "--system-prompt", "Be brief \udcff\udcfe")
    fails_with_one_line(capsys, argv, "--system-prompt", "not valid UTF-8")


def test_non_utf8_bytes_in_system_prompt_subprocess(tmp_path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kontest_tui.cli",
            *run_args(tmp_path),
            "--system-prompt",
            b"Be brief \xff\xfe",
        ],
        capture_output=True,
        timeout=120,
    )
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, err
    assert err.strip().splitlines() == [
        "kontest: error: the value of --system-prompt is not valid UTF-8 text"
    ]


@pytest.mark.parametrize("argv", [["--model", ""], ["--model="]])
def test_empty_model_is_an_error(tmp_path, capsys, argv) -> None:
    fails_with_one_line(capsys, run_args(tmp_path, *argv), "empty model spec")
    assert not (tmp_path / "s.db").exists() or "sim" not in (tmp_path / "s.db").read_bytes().decode(
        "latin-1"
    )


def test_empty_model_on_the_group(tmp_path, capsys) -> None:
    fails_with_one_line(
        capsys, ["--model", "", "sessions", "--db", str(tmp_path / "s.db")], "empty model spec"
    )


# -- domains are names, never paths -------------------------------------------------------


def test_kg_domain_is_not_a_path(tmp_path, capsys) -> None:
    data = places()
    data["domain"] = "/proc/self/environ"
    kg = write(tmp_path / "kg.json", json.dumps(data))
    line = fails_with_one_line(
        capsys,
        ["run", "--kg", kg, "--db", str(tmp_path / "s.db"), "-q"],
        "'domain'",
        "/proc/self/environ",
    )
    assert "TOML" not in line  # the file was not read as a template file


def test_template_file_domain_must_be_a_name(tmp_path, capsys) -> None:
    toml = write(
        tmp_path / "t.toml",
        'domain = "../../evil"\n[[templates]]\nid = "t1"\n'
        '[templates.texts]\ncontains = "Does {parent} have {child}?"\n',
    )
    argv = run_args(tmp_path, "--templates", toml)
    fails_with_one_line(capsys, argv, "t.toml", "not a name")


def test_csv_import_domain_must_be_a_name(tmp_path, capsys) -> None:
    csv = write(tmp_path / "e.csv", "a,A,b,B\n")
    argv = ["kg", "import", csv, "--out", str(tmp_path / "kg.json"), "--domain", "../x"]
    fails_with_one_line(capsys, argv, "not a name")


# -- template TOML files -----------------------------------------------------------------------

GOOD_TEMPLATE = (
    '[[templates]]\nid = "t1"\n[templates.texts]\ncontains = "Does {parent} have {child}?"\n'
)


@pytest.mark.parametrize(
    ("head", "words"),
    [
        ('domain = "x"\ntemperature = nan\n', ("temperature",)),
        ('domain = "x"\ntemperature = inf\n', ("finite",)),
        ('domain = "x"\nseed = ' + "9" * 5000 + "\n", ("t.toml", "TOML")),
        ('domain = "x"\nseed = ' + "9" * 30 + "\n", ("seed", "64 bits")),
        ('domain = "x"\ndeep = ' + "[" * 50_000 + "]" * 50_000 + "\n", ("nested",)),
        ('domain = "x"\n' + "a." * 20_000 + "b = 1\n", ("nested",)),
    ],
)
def test_bad_template_toml(tmp_path, capsys, head, words) -> None:
    toml = write(tmp_path / "t.toml", head + GOOD_TEMPLATE)
    fails_with_one_line(capsys, ["generate", "--kg", "places", "--templates", toml], *words)


def test_non_utf8_template_file(tmp_path, capsys) -> None:
    path = tmp_path / "t.toml"
    path.write_bytes(b'domain = "x\xff"\n' + GOOD_TEMPLATE.encode())
    fails_with_one_line(capsys, ["generate", "--kg", "places", "--templates", str(path)], "t.toml")


def test_bad_domain_file(tmp_path, capsys) -> None:
    path = write(tmp_path / "d.toml", "levels = " + "[" * 50_000 + "]" * 50_000 + "\n")
    argv = ["kg", "build", "--domain", path, "--seed", "Q27", "--out", path + ".json"]
    fails_with_one_line(capsys, argv, "d.toml", "nested")


def test_bad_sim_profile(tmp_path, capsys) -> None:
    path = write(tmp_path / "p.toml", "know = nan\n")
    fails_with_one_line(capsys, run_args(tmp_path, "--model", f"sim:{path}"), "p.toml")


@pytest.mark.parametrize("value", ["-1", "2.5"])
def test_temperature_out_of_range_is_one_line(tmp_path, capsys, value) -> None:  # noqa: ANN001
    fails_with_one_line(capsys, run_args(tmp_path, "--temperature", value), "--temperature")
    assert not (tmp_path / "s.db").exists()  # refused before any file is made
