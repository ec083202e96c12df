"""Curation evidence: which template, and which varied word, the model has trouble with.

Curating templates and synonym lists needs counts per template and per word: what went wrong
with the questions asked in a template's phrasing, and with the covering-array variants that
put a value (a curated synonym, a WordNet lemma, an entity's alias) in place of a word. From
a session's KONTEST and variant conversations, their answers and the error verdicts of every
oracle, one row per template id and one per (word, value):

- questions: the turns answered (a failed turn is no answer, as everywhere);
- invalid: answers that are neither yes nor no (refusals among them; cut answers apart);
- refusals: invalid answers that decline ("I don't know": domain.answers.is_refusal);
- cut: answers the token limit or the timeout stopped before anything readable (`is_cut`:
  stored as Answer.CUT, never graded);
- errors: error verdicts, of any oracle, that compare an answer to one of these questions
  (an error between t1 and t2 counts for both);
- flips: variants (row > 0) whose valid answer differs from their original's (row 0, the
  question as the template words it, valid too), of `compared` such pairs (the variant
  oracle of seed 004 compares with the original too, Sec. 3.3);
- gap: a template's relations not answered yes (its knowledge gap, KONTEST Table 5, as the
  report's `gap.per_template`); a word's variants answered but not yes.

`EvidenceTally` counts chunk by chunk (a streamed run adds each chunk's answers and
verdicts), `evidence_json` is the Report JSON's `curation` section, and `sort_rows` orders
its rows, the worst first by default: the most invalid answers and errors together.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kontest_tui.domain.answers import is_refusal
from kontest_tui.domain.extras import VariantExtras
from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Relation,
    Response,
    TestKind,
    Verdict,
)
from kontest_tui.oracles.coverage import GapReport
from kontest_tui.oracles.report_json import CurationJSON, EvidenceJSON

# The kinds whose questions are a template's phrasings of KG facts (each kind declares it,
# kinds.base.KindInfo.states_facts, and the caller hands them in): by default KONTEST's own,
# all a session of KONTEST pairs only (as a streamed one) asks.
KONTEST_ONLY: Collection[str] = (TestKind.KONTEST,)
_VALID = (Answer.YES, Answer.NO)
_ENTITY_SLOTS = ("parent", "child")  # a variant's parameters that hold an entity


def is_cut(response: Response) -> bool:
    """An answer stopped before it said anything readable (Answer.CUT): what `cut` counts."""
    return response.error is None and response.answer is Answer.CUT


def cut_answers(responses: Mapping[AnswerKey, Response]) -> set[AnswerKey]:
    """The turns whose answer `is_cut`."""
    return {key for key, response in responses.items() if is_cut(response)}


@dataclass(slots=True)
class _Row:
    questions: int = 0
    invalid: int = 0
    refusals: int = 0
    cut: int = 0
    errors: int = 0
    flips: int = 0
    compared: int = 0
    not_yes: int = 0

    def count(self, answer: Answer, raw: str | None) -> None:
        self.questions += 1
        if answer is Answer.CUT:  # no answer to grade: neither invalid nor "not yes"
            self.cut += 1
            return
        if answer != Answer.YES:
            self.not_yes += 1
        if answer not in _VALID:
            self.invalid += 1
            self.refusals += answer == Answer.REFUSAL or is_refusal(raw)

    def counts(self) -> dict[str, int]:
        return {
            "questions": self.questions,
            "invalid": self.invalid,
            "refusals": self.refusals,
            "cut": self.cut,
            "errors": self.errors,
            "flips": self.flips,
            "compared": self.compared,
        }


# A word row's key: (the word, or an entity's node id for an entity slot; the value put in
# its place; whether it is an entity slot).
WordKey = tuple[str, str, bool]


def _changed(conversation: Conversation) -> Mapping[str, str]:
    extras = conversation.extras
    return extras.changed if isinstance(extras, VariantExtras) else {}


def _row_number(conversation: Conversation) -> int | None:
    extras = conversation.extras
    return extras.variant if isinstance(extras, VariantExtras) else None


class EvidenceTally:
    """The evidence counts of a session, added a part at a time (see the module docstring)."""

    def __init__(self, asked: Collection[str] = KONTEST_ONLY) -> None:
        self.asked = frozenset(asked)
        self.templates: dict[str, _Row] = {}
        self.words: dict[WordKey, _Row] = {}

    def _word_keys(
        self, conversation: Conversation, relations: Mapping[str, Relation]
    ) -> list[WordKey]:
        keys: list[WordKey] = []
        relation = relations.get(conversation.relation_id)
        for parameter, value in _changed(conversation).items():
            if parameter in _ENTITY_SLOTS:
                if relation is None:
                    continue
                node = relation.parent if parameter == "parent" else relation.child
                keys.append((node, value, True))
            else:
                keys.append((parameter.split(":", 1)[-1], value, False))
        return keys

    def add_answers(
        self,
        relations: Mapping[str, Relation],
        conversations: Iterable[Conversation],
        answers: Mapping[AnswerKey, Answer],
        raw: Mapping[AnswerKey, str],
        cut: Collection[AnswerKey] = (),
    ) -> None:
        """Count the answers of some conversations (all the variants of a question together:
        a flip compares a variant with its original)."""
        originals: dict[tuple[str, str], Answer] = {}
        variants: list[tuple[Conversation, Answer]] = []
        for conversation in conversations:
            if conversation.test_kind not in self.asked:
                continue
            for turn, query in enumerate(conversation.turns):
                key = (conversation.id, turn)
                answer = answers.get(key) or (Answer.CUT if key in cut else None)
                if answer is None:
                    continue
                row = self.templates.get(query.template_id)
                if row is None:
                    row = self.templates[query.template_id] = _Row()
                row.count(answer, raw.get(key))
            if _row_number(conversation) is None or not conversation.turns:
                continue
            first = (conversation.id, 0)
            answer = answers.get(first) or (Answer.CUT if first in cut else None)
            if answer is None:
                continue
            for word in self._word_keys(conversation, relations):
                row = self.words.get(word)
                if row is None:
                    row = self.words[word] = _Row()
                row.count(answer, raw.get(first))
            number = _row_number(conversation)
            question = (conversation.relation_id, conversation.turns[0].template_id)
            if number == 0:
                originals[question] = answer
            elif number is not None:
                variants.append((conversation, answer))
        for conversation, answer in variants:
            original = originals.get((conversation.relation_id, conversation.turns[0].template_id))
            if answer not in _VALID or original not in _VALID:
                continue
            flipped = answer != original
            touched = [self.templates[conversation.turns[0].template_id]]
            touched += [self.words[word] for word in self._word_keys(conversation, relations)]
            for row in touched:
                row.compared += 1
                row.flips += flipped

    def add_errors(
        self,
        verdicts: Iterable[Verdict],
        conversations: Mapping[str, Conversation],
        relations: Mapping[str, Relation],
    ) -> None:
        """Count the error verdicts among `verdicts` for each template and word whose
        questions they compare. A verdict none of whose conversations is in `conversations`
        (an ontological verdict of a streamed run, made at its end) counts for its own
        template: its turns are that template's atomic questions."""
        for verdict in verdicts:
            if not verdict.error:
                continue
            templates: set[str] = set()
            words: set[WordKey] = set()
            known = False
            for conversation_id, turn in verdict.refs:
                conversation = conversations.get(conversation_id)
                if conversation is None:
                    continue
                known = True
                if conversation.test_kind not in self.asked or turn >= len(conversation.turns):
                    continue
                templates.add(conversation.turns[turn].template_id)
                words.update(self._word_keys(conversation, relations))
            if not known and verdict.oracle == "ontological" and verdict.template_id:
                templates.add(verdict.template_id)
            for template_id in templates:
                self.templates.setdefault(template_id, _Row()).errors += 1
            for word in words:
                self.words.setdefault(word, _Row()).errors += 1

    def to_json(
        self, gap: GapReport | None, labels: Mapping[str, str] | None = None
    ) -> CurationJSON:
        """The `curation` section: template rows then word rows, each worst first; `gap`
        gives the templates' gap, `labels` (node id -> label) names the entity slots."""
        per_template = gap.per_template if gap is not None else {}
        templates: list[EvidenceJSON] = []
        for template_id, row in self.templates.items():
            found = per_template.get(template_id)
            templates.append(
                EvidenceJSON(
                    template=template_id,
                    **row.counts(),  # type: ignore[typeddict-item]
                    gap=found.missing if found is not None else None,
                )
            )
        names = labels or {}
        words: list[EvidenceJSON] = []
        for (word, value, entity), row in self.words.items():
            words.append(
                EvidenceJSON(
                    word=names.get(word, word) if entity else word,
                    value=value,
                    entity=word if entity else None,
                    **row.counts(),  # type: ignore[typeddict-item]
                    gap=row.not_yes,
                )
            )
        return CurationJSON(templates=sort_rows(templates), words=sort_rows(words))

    def entities(self) -> set[str]:
        """The node ids of the entity slots counted (to look their labels up)."""
        return {word for word, _, entity in self.words if entity}


def evidence_json(
    relations: Sequence[Relation],
    conversations: Sequence[Conversation],
    answers: Mapping[AnswerKey, Answer],
    raw: Mapping[AnswerKey, str],
    verdicts: Iterable[Verdict],
    gap: GapReport | None,
    *,
    cut: Collection[AnswerKey] = (),
    labels: Callable[[Collection[str]], Mapping[str, str]] | None = None,
    asked: Collection[str] = KONTEST_ONLY,
) -> CurationJSON:
    """The `curation` section of a whole session (see the module docstring); `labels`
    looks the entity slots' labels up by node id (None: named by their ids); `asked`: the
    kinds whose questions are a template's phrasings (`KONTEST_ONLY`)."""
    by_id = {relation.id: relation for relation in relations}
    tally = EvidenceTally(asked)
    tally.add_answers(by_id, conversations, answers, raw, cut)
    if tally.templates:
        tally.add_errors(verdicts, {c.id: c for c in conversations}, by_id)
    entities = tally.entities()
    return tally.to_json(gap, labels(entities) if labels is not None and entities else None)


def _trouble(row: EvidenceJSON) -> int:
    return row["invalid"] + row["errors"]


def _name(row: EvidenceJSON) -> str:
    return row.get("template") or f"{row.get('word', '')} {row.get('value', '')}"


# How the rows may be ordered: name -> (what the order means, the key, largest first). The
# worst: the most invalid answers and errors taken part in together.
ORDERS: dict[str, tuple[str, Callable[[EvidenceJSON], object], bool]] = {
    "worst": ("worst first", _trouble, True),
    "rate": (
        "worst per question",
        lambda row: _trouble(row) / row["questions"] if row["questions"] else 0.0,
        True,
    ),
    "questions": ("most questions", lambda row: row["questions"], True),
    "invalid": ("most invalid answers", lambda row: row["invalid"], True),
    "refusals": ("most refusals", lambda row: row["refusals"], True),
    "cut": ("most cut answers", lambda row: row["cut"], True),
    "errors": ("most errors", lambda row: row["errors"], True),
    "flips": ("most flips", lambda row: row["flips"], True),
    "gap": ("largest gap", lambda row: row["gap"] if row["gap"] is not None else -1, True),
    "name": ("by name", _name, False),
}


def sort_rows(rows: Iterable[EvidenceJSON], order: str = "worst") -> list[EvidenceJSON]:
    """The rows in `order` (a key of ORDERS); ties: the most flips, then fewer questions
    (the same trouble from fewer questions is worse), then by name."""
    _, key, largest_first = ORDERS[order]
    ordered = sorted(rows, key=lambda row: (-row["flips"], row["questions"], _name(row)))
    return sorted(ordered, key=key, reverse=largest_first)  # type: ignore[arg-type]
