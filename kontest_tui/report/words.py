"""The reader's words for what the engine computes: the one phrasebook every view uses.

A verdict is stored as machine data (its oracle key, refs, answers and a detail string the
oracles parse back, such as an ontological error's path); a conversation carries the paper's
label (Q1, A, B). Neither reaches a reader as such. This module turns them into words, the
same everywhere: an oracle's name (`oracle_name`: "same conversation" for the key
`sequential_intra`) and what its test checks, a card's title, a conversation's name
(`conversation_name`: "asked alone"), and a verdict as one sentence (`verdict_sentence`:
"asked alone, the question got yes; asked again right after another phrasing of it, it got
no"). The explanation cards (report.explain) speak with these words and add the questions,
replies and reasons; the text and Markdown reports, the session page and its picture, the
explorer's Errors tab, detail pane, live panes and wizard preview show the one-line forms.

The machine keys stay in the JSON and CSV outputs (docs/oracles-and-metrics.md lists both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import (
    AnnotationExtras,
)
from kontest_tui.domain.records import Answer, Conversation, Relation, Verdict
from kontest_tui.kinds.base import KindInfo, OracleWords
from kontest_tui.kinds.factcheck import question_name as question_name
from kontest_tui.kinds.logic import rule_name as rule_name
from kontest_tui.kinds.registry import KINDS, all_kinds, kind_info, kind_rank
from kontest_tui.oracles.findings import (
    AFTER_OWN_REPLY,
    AMBIGUOUS,
    NOT_COMPARED_ALONE,
    REPEAT,
    RelationFold,
)
from kontest_tui.oracles.ontological import error_path
from kontest_tui.oracles.report_json import FindingsJSON

# What each oracle is called, in a few words (the machine key stays in JSON and CSV); the
# other kinds' oracles are named by their kinds (kinds.base.OracleWords), after KONTEST's.
ORACLE_NAMES: dict[str, str] = {
    "atomic": "two phrasings alone",
    "sequential_intra": "same conversation",
    "sequential_inter": "after its paraphrase",
    "ontological": "implied facts",
    "stability": "same question again",
}

# What each oracle's test checks, as the end of "it checks that ...".
ORACLE_CHECKS: dict[str, str] = {
    "atomic": "two phrasings, each asked alone, agree",
    "sequential_intra": "two phrasings in one conversation agree",
    "sequential_inter": "a question alone and after its other phrasing agree",
    "ontological": "no fact its own yes-answers imply is answered no",
    "stability": "a question asked alone and as a conversation's first question agree",
}

# What an explanation card of each oracle is called.
CARD_TITLES: dict[str, str] = {
    "atomic": "Two phrasings, opposite answers",
    "sequential_intra": "A contradiction within one conversation",
    "sequential_inter": "The answer changed after a rephrasing",
    "ontological": "Its yes-answers imply a fact it denied",
    "stability": "The same question, asked twice, got two answers",
}


def _kind_words(kinds: Mapping[str, KindInfo]) -> list[OracleWords]:
    """The words of the kinds' own oracles, the kinds in their stored order (kind_rank)."""
    ordered = sorted(kinds.values(), key=lambda info: kind_rank(info.name))
    return [words for info in ordered for words in info.words]


def _with_kinds(core: dict[str, str], words: Sequence[tuple[str, str]]) -> dict[str, str]:
    """KONTEST's oracles, then the kinds' (`words`), then stability (KONTEST's last test)."""
    stability = core.pop("stability")
    return {**core, **dict(words), "stability": stability}


_BUILT_IN_WORDS = {words.oracle: words for words in _kind_words(KINDS)}
ORACLE_NAMES = _with_kinds(ORACLE_NAMES, [(w.oracle, w.name) for w in _kind_words(KINDS)])
ORACLE_CHECKS = _with_kinds(ORACLE_CHECKS, [(w.oracle, w.checks) for w in _kind_words(KINDS)])
CARD_TITLES = _with_kinds(CARD_TITLES, [(w.oracle, w.card_title) for w in _kind_words(KINDS)])


def oracle_checks() -> dict[str, str]:
    """What each oracle's test checks (ORACLE_CHECKS), plugin kinds' oracles included."""
    plugins = [
        (w.oracle, w.checks) for w in _kind_words(all_kinds()) if w.oracle not in ORACLE_CHECKS
    ]
    return _with_kinds(dict(ORACLE_CHECKS), plugins) if plugins else ORACLE_CHECKS


def oracle_words(oracle: str) -> OracleWords | None:
    """The words a kind declares for its oracle (None: KONTEST's, or an unknown oracle)."""
    found = _BUILT_IN_WORDS.get(oracle)
    if found is not None:
        return found
    return next((w for w in _kind_words(all_kinds()) if w.oracle == oracle), None)


def card_title(oracle: str) -> str | None:
    """The title of an explanation card of `oracle`'s errors (None: no title of its own)."""
    found = CARD_TITLES.get(oracle)
    if found is not None:
        return found
    return next((w.card_title for w in _kind_words(all_kinds()) if w.oracle == oracle), None)


def card_oracles(kinds: Mapping[str, KindInfo] | None = None) -> tuple[str, ...]:
    """The oracles whose errors have a card (what `kontest explain --kind` takes):
    KONTEST's, then each kind's that declares one (of `kinds`; None: every kind, the
    plugins' included)."""
    carded = [w.oracle for w in _kind_words(all_kinds() if kinds is None else kinds) if w.card]
    core = [o for info in KINDS.values() if info.is_core for o in info.oracles]
    return (*core, *carded)


# The FactChecker question types (a conversation's meta "question_type"), in words.
QUESTION_TYPES: dict[str, str] = {
    "yes_no": "a yes-or-no question about one fact of the knowledge graph",
    "multiple_choice": "a multiple-choice question with one right option, from the knowledge graph",
    "wh": "an open question whose answer is one name from the knowledge graph",
    "two_hop": "a yes-or-no question about a fact two steps apart in the knowledge graph",
    "two_hop_choice": "a multiple-choice question about a fact two steps apart in the "
    "knowledge graph",
}
# How an answer reads in a sentence.
_READ = {
    Answer.YES: "yes",
    Answer.NO: "no",
    Answer.INVALID: "neither yes nor no",
    Answer.REFUSAL: "a refusal (I don't know)",
    Answer.CUT: "cut before it said anything readable",
}


class Naming(Protocol):
    """How views name nodes: `kg.names.NodeNames`, or `report.explain.MappedNames` of a few
    names read from the store (the explorer's views)."""

    def name(self, node_id: str) -> str: ...

    def label(self, node_id: str) -> str: ...


@dataclass(frozen=True, slots=True)
class MappedNames:
    """Names of the nodes a card shows, by id (a node not listed is named by its id)."""

    names: Mapping[str, str]

    def name(self, node_id: str) -> str:
        return clean_text(self.names.get(node_id, node_id))

    def label(self, node_id: str) -> str:
        return self.name(node_id)


def kind_name(kind: str) -> str:
    """A test kind by its title ("FactChecker questions" for `factcheck`, kinds.registry)."""
    info = kind_info(str(kind))
    return info.title if info is not None else str(kind).replace("_", " ")


def oracle_name(oracle: str) -> str:
    """An oracle's name for a reader ("same conversation"); an unknown key with its
    underscores as spaces."""
    found = ORACLE_NAMES.get(oracle)
    if found is not None:
        return found
    plugin = next((w.name for w in _kind_words(all_kinds()) if w.oracle == oracle), None)
    return plugin or oracle.replace("_", " ")


def read_word(answer: Answer | None) -> str:
    """How a parsed answer reads in a sentence ("no answer" when there is none)."""
    return _READ.get(answer, "no answer") if answer is not None else "no answer"


def quoted(text: str) -> str:
    """Text in typographic quotes."""
    return f"“{text}”"


def describe_fact(relation: Relation | None, names: Naming, relation_id: str = "") -> str:
    """The fact a relation states, by labels: "Ireland contains Kinawley"; "Abbey Road has
    the song Something" for typed relations such as album->song."""
    if relation is None:
        return clean_text(relation_id) or "an unknown fact"
    return fact_words(names.name(relation.parent), names.name(relation.child), relation.type)


def fact_words(parent: str, child: str, kind: str = "contains") -> str:
    """ "Ireland contains Kinawley" from two names and a relation type."""
    if "->" in kind:
        child_type = kind.split("->", 1)[1].strip()
        return f"{parent} has the {child_type} {child}"
    if not kind or kind == "contains":
        return f"{parent} contains {child}"
    return f"{parent} {kind.replace('_', ' ')} {child}"


def conversation_name(conversation: Conversation) -> str:
    """What a transcript or a preview calls a conversation, in a few words: "asked alone",
    "one conversation" (its questions in turn), "variant 3", "fact check: open question",
    "logic rule: negation", "a rule's premise", "annotated question". The questions
    themselves are shown beside it."""
    kind = str(conversation.test_kind)
    if isinstance(conversation.extras, AnnotationExtras):  # a question of a file, whatever kind
        return "annotated question"
    info = kind_info(kind)
    if info is not None and info.conversation_name is not None:
        return info.conversation_name(conversation)
    return clean_text(f"{kind} {conversation.label}")


def verdict_template(verdict: Verdict) -> str:
    """What a verdict's template column shows: the template ids a KONTEST or variant test
    compared ("t1+t2", explained by the templates' legend), a fact check's question type or
    a logic rule in words."""
    words = oracle_words(verdict.oracle)
    if words is not None and words.template is not None:
        return words.template(verdict)
    return verdict.template_id or ""


def verdict_sentence(
    verdict: Verdict,
    *,
    fact: str | None = None,
    path_names: Sequence[str] = (),
) -> str:
    """One verdict as one sentence without the paper's codes (no capital, no full stop):
    what the model said and why that fails the test. `fact`: the relation's fact by labels
    (`describe_fact`); `path_names`: an ontological error's yes-path by name (its node ids
    without). A variant's changed words are read from its detail (oracles.variant)."""
    answers = [read_word(answer) for answer in verdict.answers] + ["no answer"] * 2
    first, second = answers[0], answers[1]
    oracle = verdict.oracle
    if not verdict.error:
        said = " and ".join(read_word(answer) for answer in verdict.answers) or "no answer"
        return f"{oracle_name(oracle)}: no error (the model said {said})"
    if oracle == "atomic":
        return (
            f"asked the same thing in two phrasings, each alone, the model said {first} to "
            f"one and {second} to the other"
        )
    if oracle == "sequential_intra":
        return (
            f"in one conversation the model said {first}, then {second} to the same question "
            "in other words"
        )
    if oracle == "sequential_inter":
        return (
            f"asked alone, the question got {first}; asked again right after another "
            f"phrasing of it, it got {second}"
        )
    if oracle == "stability":
        return (
            f"the same question got {first} asked alone and {second} as the first question "
            "of a conversation"
        )
    if oracle == "ontological":
        path_names = path_names or error_path(verdict)
        if len(path_names) >= 3:
            denied = fact or fact_words(path_names[0], path_names[-1])
            return (
                f"its yes-answers chain {' → '.join(path_names)}, yet it said no to "
                f"{quoted(denied)}"
            )
        return (
            f"it said no to {quoted(fact)}, which its yes-answers imply"
            if fact
            else ("it said no to a fact its yes-answers imply")
        )
    words = oracle_words(oracle)
    if words is not None and words.sentence is not None:
        return words.sentence(verdict, first, second, _other(first))
    said = " and ".join(read_word(answer) for answer in verdict.answers) or "no answer"
    return f"{oracle_name(oracle)}: the model said {said}"


def verdict_brief(verdict: Verdict, *, path_names: Sequence[str] = ()) -> str:
    """A verdict in a few words for a table cell or a live pane, where the test's name and
    the relation stand beside it: "yes to one phrasing, no to the other", "alone yes, after
    its paraphrase no", "yes-answers chain A → B → C". The full sentence: `verdict_sentence`."""
    answers = [read_word(answer) for answer in verdict.answers] + ["no answer"] * 2
    first, second = answers[0], answers[1]
    oracle = verdict.oracle
    if not verdict.error:
        return "no error"
    if oracle == "atomic":
        return f"{first} to one phrasing, {second} to the other"
    if oracle == "sequential_intra":
        return f"{first}, then {second} in one conversation"
    if oracle == "sequential_inter":
        return f"alone {first}, after its paraphrase {second}"
    if oracle == "stability":
        return f"alone {first}, as a conversation's first question {second}"
    if oracle == "ontological":
        path_names = path_names or error_path(verdict)
        if len(path_names) >= 3:
            return f"no, though its yes-answers chain {' → '.join(path_names)}"
        return "no to a fact its yes-answers imply"
    words = oracle_words(oracle)
    if words is not None and words.brief is not None:
        return words.brief(verdict, first, second, _other(first))
    return " and ".join(answers[: len(verdict.answers)]) or "no answer"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 relation`, `3 relations` (`plural` when adding an s is wrong)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def findings_lines(findings: FindingsJSON, relations: int | None = None) -> list[str]:
    """What a session's KONTEST errors come to, each finding counted once (oracles.findings),
    a sentence a line: distinct disagreements first, then their repeats, the flips after the
    model's own reply, and the implied facts (with those through a doubtful middle node).
    `relations`: the session's relations, named when some were not compared alone."""
    compared = findings["relations_compared_alone"]
    opposite = findings["relations_opposite_alone"]
    first = (
        f"{opposite} of {counted(compared, 'relation')} get opposite answers to two "
        "phrasings, each asked alone"
    )
    if relations is not None and relations > compared:
        first += (
            f" (the other {relations - compared} were not answered yes or no in both "
            "phrasings alone)"
        )
    lines = [first]
    if findings["repeats"]:
        lines.append(
            f"{counted(findings['repeats'], 'more error')} repeat those disagreements "
            "(the same relations asked again, in one conversation)"
        )
    if findings["after_own_reply"]:
        lines.append(
            f"{counted(findings['relations_after_own_reply'], 'relation')} "
            f"{'changes its' if findings['relations_after_own_reply'] == 1 else 'change their'}"
            f" answer only after the model's own previous reply "
            f"({counted(findings['after_own_reply'], 'error')}): asked alone, the two "
            "phrasings agree"
        )
    if findings["not_compared_alone"]:
        lines.append(
            f"{counted(findings['not_compared_alone'], 'error')} in one conversation on "
            "relations whose phrasings alone were not both answered yes or no"
        )
    if findings["implied"]:
        line = (
            f"{counted(findings['implied'], 'implied fact')} denied, on "
            f"{counted(findings['relations_implied'], 'relation')}"
        )
        doubtful = findings.get("implied_doubtful")
        if doubtful and doubtful["total"]:
            line += (
                f"; {doubtful['total']} of them through a middle node whose name is "
                f"{_doubt_kinds(doubtful['ambiguous'], doubtful['generic'])}, so the "
                "model may have meant another one"
            )
        lines.append(line)
    return lines


def _doubt_kinds(ambiguous: int, generic: int) -> str:
    shared = "shared by several nodes"
    if ambiguous and generic:
        return f"{shared} ({ambiguous}) or generic ({generic})"
    return shared if ambiguous else "generic (many entities could carry it)"


def doubt_sentence(name: str, reason: str) -> str:
    """Why a middle node's name is doubtful, as a sentence (oracles.findings)."""
    if reason == AMBIGUOUS:
        return (
            f"The name {quoted(name)} is shared by several nodes of the knowledge graph: the "
            "model may have had another one in mind, so this implied fact may not follow "
            "from its answers."
        )
    return (
        f"The name {quoted(name)} is generic (many entities could carry it): the model may "
        "have had another one in mind, so this implied fact may not follow from its answers."
    )


def fold_note(place: str | None, fold: RelationFold | None) -> str | None:
    """What a metamorphic error is beside its relation's other answers, in words: a repeat of
    its phrasings' disagreement alone, a flip only after the model's own previous reply
    (with the answer both phrasings got alone), or nothing to compare it with."""
    if place == REPEAT:
        return "a repeat of its two phrasings' disagreement alone"
    if place == AFTER_OWN_REPLY:
        agreed = read_word(fold.agreed) if fold is not None and fold.agreed else "the same"
        return f"only after its own previous reply: alone, both phrasings got {agreed}"
    if place == NOT_COMPARED_ALONE:
        return "its phrasings alone were not both answered yes or no"
    return None


def _other(word: str) -> str:
    """The other of yes and no (a wrong yes-or-no answer's right one)."""
    return {"yes": "no", "no": "yes"}.get(word, "the other answer")


def capitalized(sentence: str) -> str:
    """A sentence with its first letter up and a full stop."""
    if not sentence:
        return sentence
    return sentence[0].upper() + sentence[1:] + ("" if sentence.endswith(".") else ".")
