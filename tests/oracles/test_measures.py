"""The headline rate picked from the kinds' declarations (oracles.measures.headline_of)."""

from __future__ import annotations

from collections.abc import Mapping

from kontest_tui.kinds.registry import builtin_measures, headline_title
from kontest_tui.oracles.measures import KindHeadline, KindMeasures, headline_of


def _counts(report: Mapping[str, object]) -> tuple[int, int]:
    return 1, 4


FIRST = KindMeasures("first", headline=KindHeadline("first rate", _counts, rank=60))
SECOND = KindMeasures("second", headline=KindHeadline("second rate", lambda r: (3, 0), rank=5))


def test_the_kind_asked_with_the_lowest_rank_gives_the_headline() -> None:
    both = headline_of({"kinds": ["first", "second"]}, (FIRST, SECOND))
    assert (both["measure"], both["title"], both["rate"]) == ("second", "second rate", None)
    alone = headline_of({"kinds": ["first"]}, (FIRST, SECOND))
    assert (alone["measure"], alone["count"], alone["of"], alone["rate"]) == ("first", 1, 4, 0.25)
    assert headline_of({"kinds": ["other"]}, (FIRST, SECOND))["measure"] == ""


def test_the_built_in_kinds_rank_logic_before_factcheck_before_variants() -> None:
    report = {
        "kinds": ["variant", "factcheck", "logic"],
        "accuracy": {
            "factcheck": {"asked": 10, "correct": 7},
            "logic": {"asked": 8, "errors": 2},
        },
        "consistency": {"variant": {"tests": 5, "errors": 1}},
    }
    found = headline_of(report, builtin_measures())
    assert (found["measure"], found["count"], found["of"]) == ("logic", 2, 8)
    report["kinds"] = ["variant", "factcheck"]
    found = headline_of(report, builtin_measures())
    assert (found["title"], found["count"], found["of"]) == ("FactChecker accuracy", 7, 10)
    report["kinds"] = ["variant"]
    assert headline_of(report, builtin_measures())["rate"] == 0.2
    assert headline_title("logic") == "hallucination rate"
