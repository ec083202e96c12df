"""The paper's numbers from the models' own recorded answers (tests/data/recordings).

Each recording of the KONTEST prototype is replayed on the bundled sample KG in per-path mode
(the paper's counting: 294 places relations, 146 music ones) with the papers' template set
(`paper`: the texts the prototype asked) and its report is held to the
paper's Table 10 (valid tests and errors per oracle) and Table 5 (gap per template,
intersection, coverage). The paper's "Template 1" column of Table 5 is the prototype's "Is
there ..." template, our t2 (and "Template 2" our t1). Exact where the recording is complete;
music Llama2's recording has only one of the two sequential orders, and the turns it does
not hold fail ("not in the recording") instead of being answered from another line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest

from kontest_tui.kg.io import load_graph
from kontest_tui.kinds.registry import KindOptions
from kontest_tui.run.api import SessionSpec, start_session
from kontest_tui.run.executor import ExecutorConfig
from kontest_tui.store import Store

RECORDINGS = Path(__file__).resolve().parents[1] / "data" / "recordings"
ORACLES = ("atomic", "sequential_intra", "sequential_inter", "ontological")

# (domain, model): Table 10 valid tests and errors per oracle; Table 5 gaps (paper's
# Template 1 = our t2, Template 2 = our t1), intersection, coverage.
TABLE_10 = {
    ("places", "gemini"): ((294, 588, 588, 292), (51, 6, 104, 40)),
    ("places", "gpt35"): ((293, 588, 587, 292), (61, 201, 138, 17)),
    ("places", "llama2"): ((266, 543, 542, 268), (94, 52, 209, 27)),
    ("music", "gemini"): ((146, 292, 292, 96), (39, 8, 77, 7)),
    ("music", "gpt35"): ((146, 292, 292, 96), (40, 85, 56, 5)),
}
TABLE_5 = {
    ("places", "falcon"): (12, 93, 9, 285),
    ("places", "gemini"): (60, 71, 40, 254),
    ("places", "gpt35"): (129, 107, 87, 207),
    ("places", "llama2"): (38, 139, 37, 257),
    ("music", "gemini"): (60, 45, 33, 113),
    ("music", "gpt35"): (63, 27, 25, 121),
    ("music", "llama2"): (76, 84, 56, 90),
}


def replay(
    tmp_path: Path, domain: str, model: str, fresh: bool = False, rule: str = "paper"
) -> Mapping[str, object]:
    """The report of the recording replayed per path on the domain's sample (`rule`: the
    ontological rule, oracles.ontological)."""
    spec = SessionSpec(
        load_graph(domain),
        model=f"replay:{RECORDINGS / f'{domain}-{model}.jsonl'}",
        per_path=True,
        template_set="paper",
        config=ExecutorConfig(concurrency=8),
        fresh_conversations=fresh,
        kind_options=KindOptions(ontological_rule=rule),
    )
    with Store(tmp_path / f"{domain}-{model}-{rule}.db") as store:
        outcome = asyncio.run(start_session(store, spec))
        return outcome.evaluation.to_json()


def oracle_counts(report: Mapping[str, object]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    tests, errors = report["tests"], report["errors"]
    assert isinstance(tests, dict) and isinstance(errors, dict)
    return tuple(tests[o] for o in ORACLES), tuple(errors[o] for o in ORACLES)


def gap_row(report: Mapping[str, object]) -> tuple[int, int, int, int]:
    gap, coverage = report["gap"], report["coverage"]
    assert isinstance(gap, dict) and isinstance(coverage, dict)
    per = gap["per_template"]
    return (
        per["t2"]["missing"],
        per["t1"]["missing"],
        gap["intersection"]["missing"],
        coverage["covered"],
    )


@pytest.mark.parametrize(("domain", "model"), sorted(TABLE_5))
def test_recording_gives_the_papers_rows(tmp_path: Path, domain: str, model: str) -> None:
    report = replay(tmp_path, domain, model)
    assert gap_row(report) == TABLE_5[domain, model]
    tests, errors = oracle_counts(report)
    if (domain, model) in TABLE_10:
        assert report["failed"] == 0
        assert (tests, errors) == TABLE_10[domain, model]
        assert report["errors"]["total"] == sum(errors)  # type: ignore[index]
    elif model == "falcon":
        # Complete, and exact but for the ontological oracle's valid tests: the paper prints
        # 267 (and 1589 in all) where the recording gives 269 (25 errors in both).
        assert report["failed"] == 0
        assert tests == (254, 530, 538, 269) and errors == (50, 24, 152, 25)
    else:  # music Llama2: no llama2Type21 in the prototype
        # The atomic answers are all recorded (Table 10: 137 valid, 46 errors; Table 5 above);
        # of each relation's second sequential order neither turn is in the recording. The
        # paper (both orders) has intra 63/283 and inter 97/276; invented answers gave 100/283
        # and 49/283.
        assert report["failed"] == 2 * 146
        assert report["failed_reasons"] == {"not in the recording": 146, "not asked": 146}
        assert tests[0] == 137 and errors[0] == 46
        assert tests[1] == 146 and tests[2] == 137  # one order: one intra and one inter test
        assert report["executions"] == 146 * 4


@pytest.mark.parametrize(("domain", "model"), sorted(TABLE_5))
def test_the_prototypes_ontological_rule_gives_falcons_267_and_changes_no_other_row(
    tmp_path: Path, domain: str, model: str
) -> None:
    """`--ontological-rule prototype` (a test that is no error is also invalid when a chain
    of invalid answers joins its two nodes, as the prototype's error finder counts): places
    Falcon's 269 valid ontological tests become the paper's 267 (1589 in all, its Table 10
    row exactly); every other row, Table 5 included, is the same under both rules. Music
    Llama2 gives 92 under both: 4 of its 96 tests have an invalid answer of their own
    ("I don't know"-like), so the paper's 96 cannot be reached by either reading."""
    prototype = replay(tmp_path, domain, model, rule="prototype")
    assert gap_row(prototype) == TABLE_5[domain, model]
    tests, errors = oracle_counts(prototype)
    if model == "falcon":  # the paper's rule gives 269 (test_recording_gives_the_papers_rows)
        assert tests == (254, 530, 538, 267) and errors == (50, 24, 152, 25)
        assert sum(tests) == 1589
    elif (domain, model) in TABLE_10:
        assert (tests, errors) == TABLE_10[domain, model]
    else:  # music Llama2: the paper's rule gives the same
        assert tests[3] == 92 and errors[3] == 9
        assert oracle_counts(replay(tmp_path, domain, model)) == (tests, errors)


def test_fresh_conversations_hold_the_recorded_first_turns_to_the_atomic_answers(
    tmp_path: Path,
) -> None:
    """The prototype asked every conversation fresh, so its recording holds each sequential
    conversation's first answer apart from the atomic one: with --fresh-conversations the
    stability test compares them (GPT-3.5 answered 2 of 587 such repeated questions the
    other way); Table 10's numbers are the same."""
    report = replay(tmp_path, "places", "gpt35", fresh=True)
    assert oracle_counts(report) == TABLE_10["places", "gpt35"]
    consistency = report["consistency"]
    assert isinstance(consistency, dict)
    assert consistency["stability"] == {"tests": 587, "errors": 2, "rate": round(2 / 587, 6)}
