"""Verdicts and accuracy for probes with a known answer (FactChecker questions, logic rules).

Input is the raw text of each answer, since multiple-choice and WH answers are matched as
text, not parsed as yes/no. A missing answer (run in progress) is simply not counted yet.
Verdict.answers holds the parsed answer: for yes-no and logic the yes/no answer; for
multiple choice and WH, YES when it matched the expected one, NO when it named something
else. Only valid answers are tests (one verdict each): a refusal ("I don't know", for every
question type) and an answer that cannot be read are counted on their own, never as tests
or errors; accuracy is correct / asked, so they lower it (FactChecker, seed 003, Sec. 4).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.answers import clean_text, is_refusal, parse_answer
from kontest_tui.domain.extras import (
    CHOICE_TYPES,
    WH,
    FactcheckExtras,
    LogicExtras,
    PremiseExtras,
)
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, TestKind, Verdict
from kontest_tui.probes.answer_oracle import ReasonCheck, check_reason
from kontest_tui.probes.matching import (
    EMBEDDING_THRESHOLD,
    match_wh,
    names_a_whole_name,
    names_other_entity,
    parse_choice,
    parse_logic_answer,
)

Similarity = Callable[[str, Sequence[str]], float]
PROBE_KINDS = (TestKind.FACTCHECK, TestKind.LOGIC)


@dataclass
class Tally:
    """Counts for one question type, rule or relation type."""

    asked: int = 0  # answers received
    valid: int = 0  # answers that could be read (yes/no, a letter, any WH text): the tests
    correct: int = 0
    errors: int = 0  # valid but wrong
    refusals: int = 0  # "I don't know" (any question type): neither a test nor an error
    invalid: int = 0  # neither valid nor a refusal

    @property
    def accuracy(self) -> float:
        """Correct of asked, in percent (a refusal or unreadable answer is not correct)."""
        return round(100.0 * self.correct / self.asked, 2) if self.asked else 0.0

    def to_json(self) -> dict[str, float | int]:
        return {
            "asked": self.asked,
            "valid": self.valid,
            "correct": self.correct,
            "errors": self.errors,
            "refusals": self.refusals,
            "invalid": self.invalid,
            "accuracy": self.accuracy,
        }


@dataclass
class LogicTally(Tally):
    """A rule's counts, its hallucination rate and each error's cause (HalluVault, seed 002).

    The hallucination rate is the paper's (Sec. 5.2, Fig. 6/11): errors of all responses, a
    refusal ("I don't know") being a normal response (Sec. 5.3.1), and so is an unreadable
    one; `error_rate` (errors of valid yes/no answers) is the secondary figure. Causes, from
    the answer oracle (probes.answer_oracle, Algorithm 3): error_knowledge, error_inference,
    error_both (MO_N and MO_E), error_unstated (no reasoning given). A second signal, from the
    premise questions: premise_knowledge (a premise denied), premise_inference (every premise
    affirmed), premise_unclassified (a premise unanswered, refused or unreadable)."""

    error_knowledge: int = 0
    error_inference: int = 0
    error_both: int = 0
    error_unstated: int = 0
    premise_knowledge: int = 0
    premise_inference: int = 0
    premise_unclassified: int = 0

    @property
    def hallucination_rate(self) -> float | None:
        """Errors of all responses (refusals and unreadable answers are normal ones)."""
        return round(self.errors / self.asked, 6) if self.asked else None

    @property
    def error_rate(self) -> float | None:
        """Errors of valid yes/no answers (the secondary figure)."""
        return round(self.errors / self.valid, 6) if self.valid else None

    def to_json(self) -> dict[str, float | int]:
        found: dict[str, float | int] = {**super().to_json()}
        for key in LOGIC_COUNTS:
            found[key] = getattr(self, key)
        if self.hallucination_rate is not None:
            found["hallucination_rate"] = self.hallucination_rate
        if self.error_rate is not None:
            found["error_rate"] = self.error_rate
        return found


LOGIC_COUNTS = (
    "error_knowledge",
    "error_inference",
    "error_both",
    "error_unstated",
    "premise_knowledge",
    "premise_inference",
    "premise_unclassified",
)


@dataclass
class ProbeEvaluation:
    verdicts: list[Verdict] = field(default_factory=list)
    factcheck_by_type: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    factcheck_by_relation: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    logic_by_rule: dict[str, LogicTally] = field(default_factory=lambda: defaultdict(LogicTally))
    premises: Tally = field(default_factory=Tally)  # the facts the logic rules rest on
    wh_matchers: dict[str, int] = field(default_factory=dict)  # which matcher judged WH answers
    # relation id -> [errors, responses] of the logic rules: the hallucination rate's clusters
    hallucinations: dict[str, list[int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """The `factcheck` and `logic` sections of a report (only those with questions)."""
        section: dict[str, object] = {}
        if self.factcheck_by_type:
            total = _sum(self.factcheck_by_type.values())
            section["factcheck"] = {
                **total.to_json(),
                "per_type": {k: v.to_json() for k, v in sorted(self.factcheck_by_type.items())},
                "per_relation_type": {
                    k: v.to_json() for k, v in sorted(self.factcheck_by_relation.items())
                },
                "wh_matchers": dict(sorted(self.wh_matchers.items())),
            }
        if self.logic_by_rule:
            total = _sum(self.logic_by_rule.values(), LogicTally())
            section["logic"] = {
                **total.to_json(),
                "per_rule": {k: v.to_json() for k, v in sorted(self.logic_by_rule.items())},
                "premises": self.premises.to_json(),
            }
        return section


def _sum(tallies: Iterable[Tally], total: Tally | None = None) -> Tally:
    total = total if total is not None else Tally()
    for tally in tallies:
        if isinstance(total, LogicTally) and isinstance(tally, LogicTally):
            for key in LOGIC_COUNTS:
                setattr(total, key, getattr(total, key) + getattr(tally, key))
        total.asked += tally.asked
        total.valid += tally.valid
        total.correct += tally.correct
        total.errors += tally.errors
        total.refusals += tally.refusals
        total.invalid += tally.invalid
    return total


def _judge_factcheck(
    conversation: Conversation, raw: str, similarity: Similarity | None
) -> tuple[Answer, bool, str]:
    """(parsed answer, correct, explanation) for one FactChecker answer."""
    extras = conversation.extras
    qtype = extras.question_type if isinstance(extras, FactcheckExtras) else ""
    if is_refusal(raw):
        return Answer.REFUSAL, False, "refused to answer"
    if isinstance(extras, FactcheckExtras) and qtype in CHOICE_TYPES:
        letter = parse_choice(raw, extras.options)
        if letter is None:
            return Answer.INVALID, False, "no option letter or label found"
        correct = letter == extras.answer
        return (
            (Answer.YES if correct else Answer.NO),
            correct,
            f"chose {letter}, expected {extras.answer}",
        )
    if isinstance(extras, FactcheckExtras) and qtype == WH:
        accepted = list(extras.accepted)
        if not raw.strip():
            return Answer.INVALID, False, "empty answer"
        found = match_wh(raw, accepted)
        correct = found.matched
        how = f"matcher rules ({found.how}): similarity {found.score:.0f} to {found.against!r}"
        other = names_other_entity(raw, accepted, extras.others)
        if other is not None:  # the answer names another entity of the KG
            return Answer.NO, False, f"matcher rules: names another KG entity, {other!r}"
        if not correct and similarity is not None:
            score = similarity(raw, accepted)
            correct = score >= EMBEDDING_THRESHOLD
            how = f"matcher embedding: cosine {score:.2f} (rules: {found.score:.0f} to {found.against!r})"
        return (Answer.YES if correct else Answer.NO), correct, how
    parsed = parse_answer(raw)
    expected = conversation.expected[0] if conversation.expected else None
    return parsed, parsed == expected, f"expected {expected}"


def parse_probe_answer(conversation: Conversation, raw: str) -> Answer:
    """The parsed answer the store keeps for a probe reply (see the module docstring)."""
    if conversation.test_kind == TestKind.LOGIC:
        return parse_logic_answer(raw)
    return _judge_factcheck(conversation, raw, None)[0]


def cut_before_readable(conversation: Conversation, raw: str, parsed: Answer) -> bool:
    """For a reply the token limit or the timeout cut: did it end before saying anything
    readable? A yes/no, a letter or a refusal is readable whatever follows (" Yes, it" is
    yes); an open (WH) answer is readable when it names the expected entity, or another
    name that ended before the cut (" In the north", " In the United" are not)."""
    if parsed not in (Answer.YES, Answer.NO, Answer.REFUSAL):
        return not is_refusal(raw)  # "I don't know" is readable (a refusal, not an answer)
    extras = conversation.extras
    if (
        parsed is Answer.NO
        and isinstance(extras, FactcheckExtras)
        and extras.question_type == WH
        and conversation.test_kind is TestKind.FACTCHECK
    ):
        return not names_a_whole_name(raw)
    return False


def evaluate_probes(
    conversations: Iterable[Conversation],
    raw_answers: Mapping[AnswerKey, str],
    *,
    similarity: Similarity | None = None,
) -> ProbeEvaluation:
    """Judge every answered FactChecker and logic-rule conversation."""
    result = ProbeEvaluation()
    conversations = [c for c in conversations if c.test_kind in PROBE_KINDS]
    premise_answers: dict[str, Answer] = {}
    for conversation in conversations:
        if isinstance(conversation.extras, PremiseExtras):
            raw = raw_answers.get((conversation.id, 0))
            if raw is not None:
                parsed = parse_logic_answer(raw)
                premise_answers[conversation.id] = parsed
                _count([result.premises], parsed, parsed == Answer.YES)
    for conversation in conversations:
        key = (conversation.id, 0)
        raw = raw_answers.get(key)
        if raw is None:
            continue
        extras = conversation.extras
        if conversation.test_kind == TestKind.LOGIC:
            if isinstance(extras, PremiseExtras):
                continue
            logic = extras if isinstance(extras, LogicExtras) else None
            rule = logic.rule if logic is not None else conversation.label
            parsed = parse_logic_answer(raw)
            expected = conversation.expected[0] if conversation.expected else None
            correct = parsed == expected
            cell = result.hallucinations.setdefault(conversation.relation_id, [0, 0])
            cell[0] += parsed in VALID and not correct
            cell[1] += 1
            tally = result.logic_by_rule[rule]
            tallies: list[Tally] = [tally]
            oracle, template_id = "logic", logic.steps if logic is not None else rule
            detail = f"expected {expected}"
            if parsed in VALID and not correct:
                detail += "; " + _classify(tally, logic, raw, premise_answers)
            reason = stated_reason(raw)
            if reason:
                detail += f"; reason: {reason}"
        else:
            parsed, correct, detail = _judge_factcheck(conversation, raw, similarity)
            fact = extras if isinstance(extras, FactcheckExtras) else None
            qtype = fact.question_type if fact is not None else conversation.label
            relation_type = fact.relation_type if fact is not None else ""
            tallies = [result.factcheck_by_type[qtype], result.factcheck_by_relation[relation_type]]
            oracle, template_id = "factcheck", qtype
            if detail.startswith("matcher "):
                matcher = detail.split()[1].rstrip(":")
                result.wh_matchers[matcher] = result.wh_matchers.get(matcher, 0) + 1
        _count(tallies, parsed, correct)
        if parsed in VALID:  # tests are over valid answers only
            result.verdicts.append(
                Verdict(
                    oracle,
                    conversation.relation_id,
                    template_id,
                    not correct,
                    (key,),
                    (parsed,),
                    detail,
                )
            )
    return result


VALID = (Answer.YES, Answer.NO)
REASON_CHARS = 300


def _count(tallies: Iterable[Tally], parsed: Answer, correct: bool) -> None:
    valid = parsed in VALID
    refusal = parsed == Answer.REFUSAL
    for tally in tallies:
        tally.asked += 1
        tally.valid += valid
        tally.correct += correct
        tally.errors += valid and not correct
        tally.refusals += refusal
        tally.invalid += not valid and not refusal


def _classify(
    tally: LogicTally, extras: LogicExtras | None, raw: str, premises: Mapping[str, Answer]
) -> str:
    """Count a logic error's cause by the answer oracle and by the premise probe; the
    detail saying both."""
    check = answer_oracle(extras, raw) if extras is not None else None
    if check is not None:
        setattr(tally, f"error_{check.cause}", getattr(tally, f"error_{check.cause}") + 1)
    cause = classify_logic_error(extras.premises if extras is not None else (), premises)
    setattr(tally, f"premise_{cause}", getattr(tally, f"premise_{cause}") + 1)
    found = check.describe() if check is not None else "answer oracle: no knowledge points"
    return f"{found}; premise probe: error-{cause}"


def answer_oracle(extras: LogicExtras, raw: str) -> ReasonCheck | None:
    """The answer oracle's finding for a wrong logic answer (None for a question stored
    without its knowledge points, before they were recorded)."""
    if not extras.knowledge:
        return None
    return check_reason(reasoning(raw), extras.knowledge, extras.aliases, extras.words)


def classify_logic_error(premises: Sequence[str], answers: Mapping[str, Answer]) -> str:
    """ "knowledge" when the model denied a premise, "inference" when it affirmed all of them,
    else "unclassified" (no premise asked, or one unanswered, refused or unreadable)."""
    said = [answers.get(cid) for cid in premises]
    if any(answer == Answer.NO for answer in said):
        return "knowledge"
    if said and all(answer == Answer.YES for answer in said):
        return "inference"
    return "unclassified"


_REASON_START = re.compile(
    r"^\W*(yes|no|i\s+don'?t\s+know|i\s+do\s+not\s+know)\b[\s,.;:!\-\u2013\u2014]*", re.IGNORECASE
)


def reasoning(raw: str) -> str:
    """What a logic answer says after its "Yes"/"No"/"I don't know": the knowledge it lists
    (lines kept, for the answer oracle's sentences); "" when nothing."""
    text = clean_text(raw).replace("\u2019", "'").strip()
    match = _REASON_START.match(text)
    if match is None:
        return ""
    reason = text[match.end() :].strip(" *_`")
    return reason if re.search(r"\w", reason) else ""


def stated_reason(raw: str) -> str:
    """The reasoning of a logic answer on one line and at most REASON_CHARS long (the
    verdict's detail); "" when none."""
    return " ".join(reasoning(raw).split())[:REASON_CHARS]
