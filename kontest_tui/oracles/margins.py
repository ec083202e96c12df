"""The report's margins section: how sure the model was of its yes/no answers, and which
errors rest on coin tosses.

Per test kind: the yes/no answers, how many came with a margin (the server gave
log-probabilities: domain.margins), how many of those are low-margin (P(yes | yes or no)
within domain.margins.LOW_MARGIN of 0.5) and the range of P(yes). An error is *weak* when
every answer it compares has a margin and each is low-margin (for a metamorphic test: both
answers; for a one-answer test, FactChecker, logic or annotation: that answer): the model
barely preferred either answer, so the contradiction is likely a fluke of sampling. Weak
errors are counted per oracle; they stay errors (every rate is unchanged). A session whose
answers have no margin at all says so in one line (`note`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.margins import LOW_MARGIN, is_low_margin
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Response, Verdict

NO_MARGINS = "no margins: the server gives no log-probabilities"
NO_ANSWERS = "no yes/no answer to measure"
_YES_NO = (Answer.YES, Answer.NO)


def is_weak(verdict: Verdict, margins: Mapping[AnswerKey, float]) -> bool:
    """An error whose compared answers all have a margin and are all low-margin."""
    return (
        verdict.error
        and bool(verdict.refs)
        and all(is_low_margin(margins.get(key)) for key in verdict.refs)
    )


@dataclass(slots=True)
class _KindMargins:
    answers: int = 0  # yes/no answers
    with_margin: int = 0
    low: int = 0
    lowest: float | None = None
    highest: float | None = None

    def add_all(self, values: list[float | None]) -> None:
        """Yes/no answers' margins (None: an answer without one)."""
        given = [p_yes for p_yes in values if p_yes is not None]
        self.answers += len(values)
        if not given:
            return
        self.with_margin += len(given)
        self.low += sum(1 for p_yes in given if is_low_margin(p_yes))
        lowest, highest = min(given), max(given)
        self.lowest = lowest if self.lowest is None else min(self.lowest, lowest)
        self.highest = highest if self.highest is None else max(self.highest, highest)

    def to_json(self) -> dict[str, object]:
        found: dict[str, object] = {
            "answers": self.answers,
            "with_margin": self.with_margin,
            "share": round(self.with_margin / self.answers, 4) if self.answers else 0.0,
            "low": self.low,
        }
        if self.lowest is not None:
            found["range"] = [self.lowest, self.highest]
        return found


@dataclass
class MarginTally:
    """The margins section built a piece at a time (a streamed run adds chunk by chunk): the
    yes/no answers per kind, then the error verdicts. Only the low-margin answers' keys are
    kept (what a weak error needs), not every margin."""

    per_kind: dict[str, _KindMargins] = field(default_factory=dict)
    low: set[AnswerKey] = field(default_factory=set)
    weak: dict[str, int] | None = None  # None: no verdict added (a weak count unknown)

    def add_responses(
        self, kinds: Mapping[str, str], responses: Mapping[AnswerKey, Response]
    ) -> None:
        """The yes/no answers among `responses` with their margins (`p_yes`); `kinds` maps
        the id of each yes/no question's conversation to its test kind (a letter or a name
        has no P(yes): their conversations are not in it)."""
        kind_of, low = kinds.get, self.low
        bottom, top = 0.5 - LOW_MARGIN, 0.5 + LOW_MARGIN
        found: dict[str, list[float | None]] = {}
        for key, response in responses.items():
            answer = response.answer
            if (answer is not Answer.YES and answer is not Answer.NO) or response.error:
                continue
            kind = kind_of(key[0])
            if kind is None:
                continue
            values = found.get(kind)
            if values is None:
                values = found[kind] = []
            p_yes = response.p_yes
            values.append(p_yes)
            if p_yes is not None and bottom < p_yes < top:
                low.add(key)
        for kind, values in found.items():
            self.per_kind.setdefault(str(kind), _KindMargins()).add_all(values)

    def add_verdicts(self, verdicts: Iterable[Verdict]) -> None:
        """Count the weak errors among `verdicts` (their answers added before)."""
        weak = self.weak if self.weak is not None else {}
        for verdict in verdicts:
            if verdict.error:
                weak[verdict.oracle] = weak.get(verdict.oracle, 0) + (
                    bool(verdict.refs) and all(key in self.low for key in verdict.refs)
                )
        self.weak = weak

    def to_json(self) -> dict[str, object]:
        section: dict[str, object] = {
            "low_margin": LOW_MARGIN,
            "per_kind": {kind: cell.to_json() for kind, cell in self.per_kind.items()},
        }
        if self.weak is not None:
            section["weak"] = {**self.weak, "total": sum(self.weak.values())}
        if not self.per_kind:
            section["note"] = NO_ANSWERS
        elif not any(cell.with_margin for cell in self.per_kind.values()):
            section["note"] = NO_MARGINS
        return section


def summarize_margins(
    conversations: Sequence[Conversation],
    responses: Mapping[AnswerKey, Response],
    verdicts: Iterable[Verdict] | None,
) -> dict[str, object]:
    """The `margins` section of a report (see the module docstring) over the responses to
    `conversations`, the yes/no ones (a letter or a name has no P(yes)); `verdicts` None when
    they are not in memory: no weak count then."""
    tally = MarginTally()
    tally.add_responses({c.id: c.test_kind for c in conversations}, responses)
    if verdicts is not None:
        tally.add_verdicts(verdicts)
    return tally.to_json()
