"""What the two probe kinds (FactChecker questions, logic rules) share: their replies are read
by probes/evaluate.py and one judge weighs both (their report sections come out together),
the probe-file option, and the tally row of their report tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, cast

from kontest_tui.domain.records import Answer, AnswerKey, Conversation
from kontest_tui.kinds.base import KindOption, KindResult
from kontest_tui.oracles.measures import AccuracyJSON, ratio

TALLY_HEADER = ("asked", "valid", "correct", "errors", "refusals", "accuracy")


class TallyJSON(TypedDict):
    """One count of probe answers (probes.evaluate.Tally): accuracy in percent."""

    asked: int
    valid: int
    correct: int
    errors: int
    refusals: int
    invalid: int
    accuracy: float


PROBES_OPTION = KindOption(
    "probes",
    "--probes",
    "Probe file",
    "A probe file (TOML, as assets/probes/<domain>.toml) for the FactChecker and logic "
    "questions instead of the domain's: e.g. symmetric = true turns the symmetric rule on.",
    type="path",
    wizard=False,
)


def tally_row(name: str, cell: TallyJSON) -> tuple[str, ...]:
    counts = cast("Mapping[str, object]", cell)
    return (name, *(str(counts[key]) for key in TALLY_HEADER[:-1]), f"{cell['accuracy']:.1f}%")


def probe_accuracy(section: Mapping[str, Any]) -> AccuracyJSON:
    """A probe kind's `accuracy` entry from its section: its counts, accuracy (correct of
    asked) and error_rate (errors of valid)."""
    found: AccuracyJSON = {
        key: int(section[key])
        for key in ("asked", "valid", "correct", "errors", "refusals", "invalid")
    }
    found["accuracy"] = ratio(int(section["correct"]), int(section["asked"]))
    found["error_rate"] = ratio(int(section["errors"]), int(section["valid"]))
    return found


def parse_probe(conversation: Conversation, raw: str) -> Answer:
    from kontest_tui.probes.evaluate import parse_probe_answer

    return parse_probe_answer(conversation, raw)


def judge_probes(
    conversations: Sequence[Conversation],
    raw: Mapping[AnswerKey, str],
    answers: Mapping[AnswerKey, Answer],
    problems: Sequence[str],
) -> KindResult:
    from kontest_tui.probes.evaluate import evaluate_probes
    from kontest_tui.probes.matching import embedding_similarity

    result = evaluate_probes(conversations, raw, similarity=embedding_similarity())
    cells = {"hallucination": result.hallucinations} if result.hallucinations else {}
    return KindResult(result.verdicts, result.to_json(), cells)


def per_key_cells(
    sections: Sequence[Mapping[str, Any]], per: str
) -> list[tuple[str, list[Mapping[str, Any] | None]]]:
    """Each key of the sections' `per` table (sorted), then "total" (the section itself),
    with every section's cell for it (None where a section has none)."""
    keys = sorted({key for found in sections for key in found.get(per, {})})
    rows: list[tuple[str, list[Mapping[str, Any] | None]]] = []
    for key in [*keys, "total"]:
        cells: list[Mapping[str, Any] | None] = []
        for found in sections:
            cells.append((found if key == "total" else found.get(per, {}).get(key)) or None)
        rows.append((key, cells))
    return rows
