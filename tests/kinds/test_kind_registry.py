"""The kinds' registry: one module per kind, gathered in registry order, their options made
into flags, and the stored options read the same as before the kinds were modules."""

from __future__ import annotations

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.domain.records import TestKind
from kontest_tui.errors import InvalidInputError
from kontest_tui.kinds import annotation, factcheck, kontest, logic, variant
from kontest_tui.kinds.registry import (
    KINDS,
    KindOptions,
    array_kinds,
    builtin_oracles,
    fact_phrasing_kinds,
    kind_of,
    kind_options,
    parse_kinds,
)

STORED_KEYS = [  # a session's kinds_json "options", as sessions stored before
    "seed",
    "strength",
    "variant_limit",
    "postfix",
    "question_types",
    "rules",
    "probes",
    "ontological_rule",
]


def test_each_built_in_kind_is_its_modules_kind_in_registry_order() -> None:
    modules = (kontest, variant, factcheck, logic, annotation)
    assert list(KINDS.values()) == [module.KIND for module in modules]
    assert [str(kind) for kind in KINDS] == [
        "kontest",
        "variant",
        "factcheck",
        "logic",
        "annotation",
    ]
    assert all(isinstance(kind, TestKind) for kind in KINDS)  # the stored names
    assert kind_of("logic") is TestKind.LOGIC and kind_of("holds") == "holds"
    assert builtin_oracles()[4:] == ("variant", "factcheck", "logic", "annotation")
    assert array_kinds(KINDS) == {"variant", "annotation"}  # asked as covering arrays
    # the questions the curation evidence counts per template and word
    assert fact_phrasing_kinds() == {"kontest", "variant"}


def test_kind_names_aliases_and_the_kind_read_from_a_file() -> None:
    assert parse_kinds(["rules,facts", "variants"]) == ("variant", "factcheck", "logic")
    with pytest.raises(InvalidInputError, match="come from a file: use --questions"):
        parse_kinds(["annotation"])
    with pytest.raises(InvalidInputError, match="unknown test kind 'nope'"):
        parse_kinds(["nope"])


def test_stored_options_read_and_write_as_before() -> None:
    assert list(KindOptions().to_json()) == STORED_KEYS  # no "extra" for the built-in kinds
    stored = {"seed": 3, "strength": 3, "rules": ["negation"], "unknown": 1}
    options = KindOptions.from_json(stored)
    assert (options.seed, options.strength, options.rules) == (3, 3, ("negation",))
    plugin = KindOptions(extra=(("holds_limit", 2),))
    assert plugin.to_json()["extra"] == {"holds_limit": 2}
    assert KindOptions.from_json(plugin.to_json()) == plugin
    assert plugin.value("holds_limit") == 2 and plugin.value("strength") == 2


def test_shared_options_are_one_flag(capsys: pytest.CaptureFixture[str]) -> None:
    keys = [option.key for option in kind_options()]
    assert len(keys) == len(set(keys)) and "probes" in keys  # FactChecker's and logic's
    assert run_cli(["run", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in kind_options():
        assert shown.count(f"  {option.flag} ") + shown.count(f"  {option.flag}\n") == 1
    assert "--variants" in shown  # the variants kind's shortcut
