"""Confirming an error: does the contradiction come back when its fact is asked again?

An error verdict rests on one or two answers that may be a fluke: a coin toss the model would
undo on a second sample (the error's answers had a low margin), or an odd question that
invited an odd answer. Confirmation asks the error's fact again in *trials*, each the error's
own test asked anew in one form (run.confirm plans and asks them):

- a **draw**: every question of the test asked again as a new sample with its own seed
  (domain.seeds.draw_seed: the session's seed, the conversation, the draw number), only
  meaningful at a temperature above 0;
- **another phrasing**: the question that got the wrong answer (a KONTEST question whose
  right answer, the knowledge graph's, is yes) replaced, everywhere the test asks it, by
  another template's question for the same relation or by one of its covering-array
  rewordings, the rest of the test kept as it was asked.

A trial *holds* when the contradiction is there again, per kind of error:

- **metamorphic** (`atomic`, `sequential_intra`, `sequential_inter`): the two answers the test
  compares (two phrasings alone; the two turns of one conversation; the question alone and
  after its paraphrase) are both yes or no and opposite: the same fact gets opposite answers;
- **ontological**: the implied fact is still denied (no) while every step of its yes-path is
  still affirmed (yes);
- **the other kinds** (`variant`, `factcheck`, `logic`, `annotation`: a question with a known
  answer): the wrong answer comes back: the answer read is a yes or a no (for a multiple-
  choice or open question: the option or name matched, yes, or not, no) and not the right one.

A trial with an answer that is not a yes or a no (a failed call, an unreadable, cut or
refused reply) is not counted. Over the counted trials an error is **confirmed** when more
than half hold, **not reproduced** when none holds, **mixed** otherwise, and **undecided**
when no trial could be counted (none could be asked: an error of another kind at temperature
0 has no other phrasing and a second sample would repeat the answer; or every answer was
unreadable). Confirmation changes no verdict and no rate: it is reported beside them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kontest_tui.domain.records import Answer
from kontest_tui.oracles.measures import KindMeasures

CONFIRMED = "confirmed"
MIXED = "mixed"
UNDECIDED = "undecided"
NOT_REPRODUCED = "not_reproduced"
# The order errors are listed in: confirmed first, errors never asked again ("") before
# those asked again and not reproduced.
STATUSES = (CONFIRMED, MIXED, UNDECIDED, "", NOT_REPRODUCED)
STATUS_WORDS = {
    CONFIRMED: "confirmed",
    MIXED: "mixed",
    UNDECIDED: "undecided",
    NOT_REPRODUCED: "not reproduced",
    "": "not asked again",
}

# The forms of a trial.
DRAW = "draw"  # the same questions sampled again
TEMPLATE = "template"  # another template's question for the wrong one
REWORDED = "reworded"  # a covering-array rewording of the wrong question

METAMORPHIC = ("atomic", "sequential_intra", "sequential_inter")
ONTOLOGICAL = "ontological"
_VALID = (Answer.YES, Answer.NO)


def trial_holds(
    oracle: str, answers: Sequence[Answer | None], right: Answer = Answer.YES
) -> bool | None:
    """Whether one trial repeats the contradiction of an error of `oracle` (module
    docstring): `answers` in the order of the error's compared answers (metamorphic: its
    two; ontological: the implied fact's, then each step's; other kinds: the answer to the
    wrongly answered question, whose right answer is `right`). None: not counted (an answer
    missing or neither yes nor no)."""
    if not answers or any(answer not in _VALID for answer in answers):
        return None
    if oracle in METAMORPHIC:
        return len(answers) == 2 and answers[0] is not answers[1]
    if oracle == ONTOLOGICAL:
        return answers[0] is Answer.NO and all(answer is Answer.YES for answer in answers[1:])
    return answers[0] is not right


def confirmation_status(holds: Iterable[bool | None]) -> str:
    """The status over an error's trials (module docstring): confirmed, mixed, not
    reproduced, or undecided when none was counted."""
    counted = [held for held in holds if held is not None]
    if not counted:
        return UNDECIDED
    held = sum(counted)
    if 2 * held > len(counted):
        return CONFIRMED
    return NOT_REPRODUCED if held == 0 else MIXED


def status_rank(status: str) -> int:
    """Where errors of this status come in a list (STATUSES' order)."""
    return STATUSES.index(status) if status in STATUSES else len(STATUSES)


def status_word(status: str) -> str:
    """A status for a reader ("not reproduced", "not asked again" for none)."""
    return STATUS_WORDS.get(status, status.replace("_", " "))


def confirmed_headline(
    headline: Mapping[str, object],
    confirmed: Mapping[str, int],
    measures: Iterable[KindMeasures],
) -> dict[str, object] | None:
    """The session's headline rate given over confirmed errors only: `{"measure", "title",
    "count", "of", "rate"}` with `count` the confirmed errors of the headline's oracles
    (`confirmed`: per oracle; `measures`: the kinds' declarations, whose headline says which
    oracles' errors it counts, `KindHeadline.errors_of`) over the same tests; None for a
    measure that counts right answers (FactChecker's accuracy) or before any test."""
    measure = str(headline.get("measure") or "")
    declared = next((found.headline for found in measures if found.kind == measure), None)
    oracles = declared.errors_of if declared is not None else ()
    if not oracles:
        return None
    count = sum(int(confirmed.get(oracle, 0)) for oracle in oracles)
    of = headline.get("of")
    tests = int(of) if isinstance(of, int) else 0
    return {
        "measure": measure,
        "title": headline.get("title") or measure,
        "count": count,
        "of": tests,
        "rate": round(count / tests, 6) if tests else None,
    }
