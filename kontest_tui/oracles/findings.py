"""What a session's KONTEST errors come to, each finding counted once (Report JSON `findings`).

The oracles count tests (KONTEST Table 1 and Algorithms 2-3), and one fact the model is unsure
of fails several at once: its two phrasings asked alone disagree (atomic), and the same
disagreement comes back when both are asked in one conversation (sequential). A reader asks a
different question: how many relations does the model contradict itself on, and which errors
say something new? So the metamorphic errors are folded per relation:

- **opposite answers alone**: a relation whose phrasings, each asked alone, get opposite
  answers (an atomic error) is one distinct disagreement;
- **repeats**: every other metamorphic error on such a relation repeats that disagreement
  (the phrasings asked again in one conversation, another pair of templates);
- **after its own reply**: a sequential error on a relation whose phrasings alone agree: the
  model changes its answer only after its own previous reply in the conversation;
- **not compared alone**: a sequential error on a relation whose phrasings alone were not both
  answered yes or no (nothing to fold it into).

Ontological errors (implied facts the model denied) are counted with their relations, and
flagged when a middle node of the yes-path has a doubtful label: one shared by several nodes
(**ambiguous**: "Garnich" the commune and the village) or made only of generic words
(**generic**: "Central Region", "District"; the words are data, assets/generic_names.toml).
The model may have taken such a node for another one, so the implied fact may not follow.

None of this changes a test, an error count or a rate: it is reported beside them. The folds
need only each relation's metamorphic verdicts together, so a session evaluated in chunks of
relations (oracles.streamed) adds them chunk by chunk.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Verdict
from kontest_tui.oracles.conversation_index import index_conversations
from kontest_tui.oracles.metamorphic import find_relation_verdicts
from kontest_tui.oracles.ontological import error_path
from kontest_tui.oracles.report_json import DoubtfulJSON, FindingsJSON
from kontest_tui.resources import asset_path

ATOMIC = "atomic"
SEQUENTIAL = ("sequential_intra", "sequential_inter")

# Where one metamorphic error stands in its relation's fold.
OPPOSITE_ALONE = "opposite_alone"  # the two phrasings asked alone disagree
REPEAT = "repeat"  # another error on a relation whose phrasings alone disagree
AFTER_OWN_REPLY = "after_own_reply"  # a sequential flip although the phrasings alone agree
NOT_COMPARED_ALONE = "not_compared_alone"  # a sequential flip with no atomic test to fold into

# Why a middle node's label is doubtful.
AMBIGUOUS = "ambiguous"  # several nodes of the graph carry it
GENERIC = "generic"  # only generic words: a kind of place, not one place

_IGNORED_WORDS = frozenset({"of", "the", "and"})
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True, slots=True)
class RelationFold:
    """One relation's metamorphic verdicts folded (see the module docstring)."""

    compared_alone: bool  # an atomic test ran: its phrasings alone answered yes or no
    opposite_alone: bool  # an atomic test failed: its phrasings alone disagree
    errors: int  # metamorphic errors on the relation
    agreed: Answer | None = None  # the answer its phrasings alone all got, when they agree

    def place(self, verdict: Verdict) -> str | None:
        """Where one error of this relation stands (None for a passed test and for the
        oracles that are not folded)."""
        if not verdict.error:
            return None
        if verdict.oracle == ATOMIC:
            return OPPOSITE_ALONE
        if verdict.oracle not in SEQUENTIAL:
            return None
        if self.opposite_alone:
            return REPEAT
        return AFTER_OWN_REPLY if self.compared_alone else NOT_COMPARED_ALONE


def fold_counts(tested: int, opposite: int, flips: int) -> tuple[int, int, int, int]:
    """The fold of one relation from its atomic tests, atomic errors and sequential errors:
    (distinct disagreements, repeats, errors after its own reply, errors not compared
    alone). The one rule `RelationFold.place` words error by error."""
    if opposite:
        return 1, opposite - 1 + flips, 0, 0
    if tested:
        return 0, 0, flips, 0
    return 0, 0, 0, flips


def fold_relation(verdicts: Iterable[Verdict]) -> RelationFold:
    """The fold of one relation's verdicts (the others' and other oracles' are ignored)."""
    compared = opposite = False
    errors = 0
    said: set[Answer] = set()
    for verdict in verdicts:
        if verdict.oracle == ATOMIC:
            compared = True
            opposite = opposite or verdict.error
            said.update(verdict.answers)
        if verdict.error and (verdict.oracle == ATOMIC or verdict.oracle in SEQUENTIAL):
            errors += 1
    agreed = next(iter(said)) if len(said) == 1 else None
    return RelationFold(compared, opposite, errors, agreed)


@dataclass(slots=True)
class Findings:
    """The running counts of `findings` (see the module docstring). `doubts`: node id ->
    AMBIGUOUS or GENERIC for the graph's doubtful nodes (`label_doubts`); None when the
    labels are not known, and then no implied fact is flagged."""

    doubts: Mapping[str, str] | None = None
    compared_alone: int = 0
    opposite_alone: int = 0
    repeats: int = 0
    after_own_reply: int = 0
    after_own_reply_relations: int = 0
    not_compared_alone: int = 0
    implied: int = 0
    _implied_relations: set[str] = field(default_factory=set)
    _doubtful: Counter[str] = field(default_factory=Counter)

    def add_metamorphic(self, verdicts: Iterable[Verdict]) -> None:
        """Count the metamorphic verdicts of whole relations (each relation's verdicts all
        given in this call, in any order); other oracles' are left out. One pass, a few
        counters per relation (a session's verdicts at once)."""
        # relation id -> [atomic tests, atomic errors, sequential errors]
        tallies: dict[str, list[int]] = {}
        for verdict in verdicts:
            oracle = verdict.oracle
            if oracle == ATOMIC:
                cell = tallies.setdefault(verdict.relation_id, [0, 0, 0])
                cell[0] += 1
                cell[1] += verdict.error
            elif oracle in SEQUENTIAL:
                cell = tallies.setdefault(verdict.relation_id, [0, 0, 0])
                cell[2] += verdict.error
        for tested, opposite, flips in tallies.values():
            distinct, repeats, after_own_reply, not_compared = fold_counts(tested, opposite, flips)
            self.compared_alone += tested > 0
            self.opposite_alone += distinct
            self.repeats += repeats
            self.after_own_reply += after_own_reply
            self.after_own_reply_relations += after_own_reply > 0
            self.not_compared_alone += not_compared

    def add_implied(self, verdicts: Iterable[Verdict]) -> None:
        """Count ontological errors (other verdicts are left out)."""
        for verdict in verdicts:
            if verdict.oracle != "ontological" or not verdict.error:
                continue
            self.implied += 1
            self._implied_relations.add(verdict.relation_id)
            if self.doubts is not None:
                reasons = {reason for _node, reason in middle_doubts(verdict, self.doubts)}
                self._doubtful.update(reasons)
                self._doubtful["total"] += bool(reasons)

    def to_json(self) -> FindingsJSON:
        doubtful = None
        if self.doubts is not None:
            doubtful = DoubtfulJSON(
                ambiguous=self._doubtful[AMBIGUOUS],
                generic=self._doubtful[GENERIC],
                total=self._doubtful["total"],
            )
        return FindingsJSON(
            relations_compared_alone=self.compared_alone,
            relations_opposite_alone=self.opposite_alone,
            repeats=self.repeats,
            after_own_reply=self.after_own_reply,
            relations_after_own_reply=self.after_own_reply_relations,
            not_compared_alone=self.not_compared_alone,
            implied=self.implied,
            relations_implied=len(self._implied_relations),
            implied_doubtful=doubtful,
        )


def fold_conversations(
    conversations: Iterable[Conversation], answers: Mapping[AnswerKey, Answer]
) -> dict[str, RelationFold]:
    """Relation id -> its fold, from its KONTEST conversations and their answers (the
    metamorphic oracle run again on them: a card or a report's few relations)."""
    index = index_conversations(conversations)
    return {
        relation_id: fold_relation(find_relation_verdicts(entry, answers))
        for relation_id, entry in index.items()
    }


def folds_of(verdicts: Iterable[Verdict], relation_ids: Iterable[str]) -> dict[str, RelationFold]:
    """The folds of some relations from a session's verdicts (all of them, in memory)."""
    wanted = set(relation_ids)
    by_relation: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.relation_id in wanted:
            by_relation[verdict.relation_id].append(verdict)
    return {relation_id: fold_relation(found) for relation_id, found in by_relation.items()}


def tally_findings(verdicts: Iterable[Verdict], doubts: Mapping[str, str] | None) -> Findings:
    """The findings of a session's verdicts (every verdict of each relation given)."""
    verdicts = list(verdicts)
    findings = Findings(doubts)
    findings.add_metamorphic(verdicts)
    findings.add_implied(verdicts)
    return findings


# -- doubtful labels -------------------------------------------------------------------------


@cache
def generic_words() -> frozenset[str]:
    """The generic words of assets/generic_names.toml, lower-case."""
    data = tomllib.loads(asset_path("generic_names.toml").read_text(encoding="utf-8"))
    return frozenset(str(word).casefold() for word in data.get("words", []))


def _label_key(label: str) -> str:
    """A label as compared: cleaned (kg.graph.printable), without case, single spaces."""
    text = label if label.isprintable() else clean_text(label)
    return " ".join(text.casefold().split())


def is_generic(label: str) -> bool:
    """Whether a label is made only of generic words ("Central Region", "District"; not
    "Canton of Capellen")."""
    return _generic_key(_label_key(label))


def _generic_key(key: str) -> bool:
    vocabulary = generic_words()
    first = _WORD.search(key)
    if first is None or (first[0] not in vocabulary and first[0] not in _IGNORED_WORDS):
        return False  # most labels: their first word names one place
    words = [word for word in _WORD.findall(key) if word not in _IGNORED_WORDS]
    return bool(words) and all(word in vocabulary for word in words)


def label_doubts(labels: Mapping[str, str]) -> dict[str, str]:
    """Node id -> AMBIGUOUS (another node has the same label, compared without case) or
    GENERIC (`is_generic`), for the doubtful nodes among `labels` (node id -> label: every
    node of the graph, so that a shared label is seen)."""
    # each key made twice rather than kept per node (a 1M-relation graph's nodes: ~60 MB)
    uses = Counter(_label_key(label) for label in labels.values())
    doubts: dict[str, str] = {}
    for node, label in labels.items():
        key = _label_key(label)
        if uses[key] > 1:
            doubts[node] = AMBIGUOUS
        elif _generic_key(key):
            doubts[node] = GENERIC
    return doubts


def middle_doubts(verdict: Verdict, doubts: Mapping[str, str]) -> list[tuple[str, str]]:
    """(node id, reason) of an ontological error's middle nodes whose label is doubtful."""
    middle = error_path(verdict)[1:-1]
    return [(node, doubts[node]) for node in middle if node in doubts]
