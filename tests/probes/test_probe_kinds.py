"""The test-kind registry and `kontest generate --kind`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from kontest_tui.domain.records import TestKind
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import build_suite
from kontest_tui.kg.io import load_graph
from kontest_tui.kinds.registry import KINDS, build_kind_conversations, parse_kinds


def kontest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kontest_tui.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_parse_kinds_keeps_registry_order_and_rejects_unknown() -> None:
    assert parse_kinds(["logic,kontest", "factcheck"]) == (
        TestKind.KONTEST,
        TestKind.FACTCHECK,
        TestKind.LOGIC,
    )
    with pytest.raises(InvalidInputError, match="unknown test kind 'quiz'"):
        parse_kinds(["quiz"])
    assert parse_kinds(["variants"]) == (TestKind.VARIANT,)
    with pytest.raises(InvalidInputError, match="--questions"):
        parse_kinds(["annotation"])


def test_every_registered_kind_builds_conversations_of_its_kind() -> None:
    kg = load_graph("places")
    full = build_suite(kg)
    kept = full.relations[:12]
    ids = {relation.id for relation in kept}
    suite = replace(
        full, relations=kept, conversations=[c for c in full.conversations if c.relation_id in ids]
    )
    for kind, info in KINDS.items():
        if info.build is None:  # annotated questions come from a file
            assert kind is TestKind.ANNOTATION
            continue
        built = build_kind_conversations(suite, kg, [kind])
        assert built, info.title
        assert {c.test_kind for c in built} == {kind}


def test_generate_kind_cli() -> None:
    done = kontest("generate", "--kg", "music", "--kind", "logic", "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert {line["test_kind"] for line in lines} == {"logic"}
    # music: 48 album->song + 50 artist->album edges get their premise, negation and inverse;
    # 48 artist->song chains (two different predicates: no transitive rule) get their two
    # premises and two composite rules (inverse; inverse + negation).
    assert Counter(line["label"] for line in lines) == {
        "premise": 98,  # every edge once: each chain's links are edges asked already
        "negation": 98,
        "inverse": 98,
        "composite": 2 * 48,
    }
    assert all(line["expected"][0] in ("yes", "no") for line in lines)


def test_generate_unknown_kind_is_one_line() -> None:
    done = kontest("generate", "--kg", "places", "--kind", "quiz")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "unknown test kind" in done.stderr


def test_one_kind_for_relations_is_the_kind_over_their_suite() -> None:
    """What the explorer's Kinds step counts: KONTEST is the conversations themselves, another
    kind is built over the suite of the chosen templates (the same as from build_suite)."""
    from kontest_tui.kinds.registry import build_kind_for_relations

    kg = load_graph("places")
    full = build_suite(kg, template_ids=["t1", "t3"])
    kept = full.relations[:6]
    ids = {relation.id for relation in kept}
    suite = replace(
        full, relations=kept, conversations=[c for c in full.conversations if c.relation_id in ids]
    )
    kontest = build_kind_for_relations(kg, kept, full.template_set, ["t1", "t3"], TestKind.KONTEST)
    assert [c.id for c in kontest] == [c.id for c in suite.conversations]
    logic = build_kind_for_relations(kg, kept, full.template_set, ["t1", "t3"], TestKind.LOGIC)
    assert logic == build_kind_conversations(suite, kg, [TestKind.LOGIC])
    assert logic and {c.test_kind for c in logic} == {TestKind.LOGIC}


def test_probe_file_turns_the_symmetric_rule_on(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`--probes FILE`: the symmetric rule from a user's probe file, without editing the
    package; `--rules` picks it alone; the file is recorded with the session."""
    from kontest_tui.cli import run_cli
    from kontest_tui.resources import asset_path
    from kontest_tui.store import Store

    def cli(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = run_cli(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    text = asset_path("probes", "places.toml").read_text(encoding="utf-8")
    assert text.count("symmetric = false") == 1
    probes = tmp_path / "symmetric.toml"
    probes.write_text(text.replace("symmetric = false", "symmetric = true"), encoding="utf-8")
    db = str(tmp_path / "s.db")
    kg = str(Path(__file__).resolve().parents[1] / "data" / "kinawley_kg.json")
    args = ("--kg", kg, "--kind", "logic", "--probes", str(probes), "--rules", "symmetric")
    code, _, err = cli("run", *args, "--db", db, "-q")
    assert code == 0, err
    code, out, err = cli("report", "--db", db, "--format", "json")
    report = json.loads(out)
    # Ireland > Ulster > Kinawley: 2 edges, each asked swapped ("Ireland located in Ulster?").
    assert list(report["logic"]["per_rule"]) == ["symmetric"]
    assert report["logic"]["per_rule"]["symmetric"]["asked"] == 2
    with Store(db, create=False) as store:
        options = store.sessions.get(store.sessions.resolve(None))["kinds_json"]["options"]
    assert options["probes"] == str(probes.resolve()) and options["rules"] == ["symmetric"]
    code, out, err = cli("generate", *args, "--format", "text")
    assert code == 0 and "Is it true that Ireland is located in Ulster?" in out, err
    code, _, err = cli("run", *args[:-1], "mirror", "--db", db)
    assert code == 2 and err.count("\n") == 1 and "--rules" in err, err
