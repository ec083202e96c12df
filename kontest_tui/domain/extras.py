"""What a test kind records about a conversation beyond its questions: one frozen record each.

A KONTEST pair needs nothing more than its turns; a covering-array variant keeps its row and
the words it changed, an annotated question its annotation and passage, a FactChecker
question its type, options and accepted answers, a logic-rule question its rule, premises
and knowledge points. `Conversation.extras` holds one of these (None for KONTEST).

Each record's `to_json` is the JSON the store keeps (the conversations' `meta` column) and
`kontest generate` prints, with the keys in the order they always had; `extras_from_json`
reads it back, rows stored by earlier versions included (a key they lack takes its default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Self, TypedDict

PREMISE = "premise"  # the rule name of a logic premise (a KG fact a derived question rests on)


# -- reading JSON values leniently (a row stored by an earlier version may lack a key) --------


def _str(data: Mapping[str, object], key: str, default: str = "") -> str:
    value = data.get(key)
    return default if value is None else str(value)


def _optional_str(data: Mapping[str, object], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


def _int(data: Mapping[str, object], key: str, default: int) -> int:
    value = data.get(key)
    return value if isinstance(value, int) else default


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list | tuple) else ()


def _string_map(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _string_lists(value: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, Mapping):
        return {}
    return {str(key): _strings(items) for key, items in value.items()}


# -- covering-array variants and annotated questions ---------------------------------------


@dataclass(frozen=True, slots=True)
class VariantExtras:
    """A covering-array variant of a question (KomMKonLLM): its row of the array (row 0 is
    the original question) and the words it put in place of the original ones."""

    variant: int  # the row's number
    parameters: tuple[str, ...] = ()  # the question's words that may vary, in order
    row: tuple[int, ...] = ()  # the value index of each parameter (0: the original word)
    changed: Mapping[str, str] = field(default_factory=dict)  # parameter -> its new word
    original: str = ""  # the original question
    strength: int = 2  # the covering array's strength t
    postfix: bool = False  # asked with "? Return a JSON Boolean."
    answer_format: str = "yes_no"  # "yes_no" | "json_boolean"

    def to_json(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "parameters": list(self.parameters),
            "row": list(self.row),
            "changed": dict(self.changed),
            "original": self.original,
            "strength": self.strength,
            "postfix": self.postfix,
            "answer_format": self.answer_format,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        return cls(**_variant_fields(data))

    def variant_fields(self) -> _VariantFields:
        """This record's fields by name (to make an AnnotationExtras of a variant)."""
        return {
            "variant": self.variant,
            "parameters": self.parameters,
            "row": self.row,
            "changed": self.changed,
            "original": self.original,
            "strength": self.strength,
            "postfix": self.postfix,
            "answer_format": self.answer_format,
        }


class _VariantFields(TypedDict):
    variant: int
    parameters: tuple[str, ...]
    row: tuple[int, ...]
    changed: Mapping[str, str]
    original: str
    strength: int
    postfix: bool
    answer_format: str


def _variant_fields(data: Mapping[str, object]) -> _VariantFields:
    row = data.get("row")
    return {
        "variant": _int(data, "variant", 0),
        "parameters": _strings(data.get("parameters")),
        "row": tuple(i for i in row if isinstance(i, int)) if isinstance(row, list) else (),
        "changed": _string_map(data.get("changed")),
        "original": _str(data, "original"),
        "strength": _int(data, "strength", 2),
        "postfix": bool(data.get("postfix", False)),
        "answer_format": _str(data, "answer_format", "yes_no"),
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class AnnotationExtras(VariantExtras):
    """A variant of an annotated (BoolQ-style) question: the variant's row and the line of
    the questions file it comes from."""

    question: str  # the annotated question as the file wrote it
    annotation: bool  # the file's answer
    passage: str = ""  # the passage the annotation rests on
    line: int = 0  # its line in the file

    def to_json(self) -> dict[str, object]:
        return {
            **VariantExtras.to_json(self),
            "question": self.question,
            "annotation": self.annotation,
            "passage": self.passage,
            "line": self.line,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        return cls(
            **_variant_fields(data),
            question=_str(data, "question"),
            annotation=bool(data.get("annotation", False)),
            passage=_str(data, "passage"),
            line=_int(data, "line", 0),
        )


# -- FactChecker questions -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChoiceOption:
    """One option of a multiple-choice question: its letter and the entity it names."""

    letter: str
    id: str
    label: str

    def to_json(self) -> dict[str, str]:
        return {"letter": self.letter, "id": self.id, "label": self.label}

    @classmethod
    def from_json(cls, data: object) -> ChoiceOption:
        found = data if isinstance(data, Mapping) else {}
        return cls(_str(found, "letter"), _str(found, "id"), _str(found, "label"))


WH = "wh"
CHOICE_TYPES = ("multiple_choice", "two_hop_choice")


@dataclass(frozen=True, slots=True, kw_only=True)
class FactcheckExtras:
    """A FactChecker question (seed 003): its type, the right answer as text and what the
    type adds: a distractor (yes-no), the step in between (2-hop), the options and the right
    letter (multiple choice), the accepted names and other entities' names (WH)."""

    question_type: str  # yes_no, multiple_choice, wh, two_hop, two_hop_choice
    hops: int = 1
    expected_text: str = ""  # yes / no, the right letter, or the name a WH question asks
    relation_type: str = ""
    middle: str | None = None  # 2-hop: the node between the two entities
    answer: str | None = None  # multiple choice: the right option's letter
    distractor: str | None = None  # a "no" question: the entity put in the true one's place
    accepted: tuple[str, ...] = ()  # WH: the entity's label and usable aliases
    others: tuple[str, ...] = ()  # WH: other entities whose names match an accepted one
    options: tuple[ChoiceOption, ...] = ()  # multiple choice, in the order asked

    def option(self, letter: str | None) -> ChoiceOption | None:
        """The option with this letter (None when there is none)."""
        return next((option for option in self.options if option.letter == letter), None)

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"question_type": self.question_type, "hops": self.hops}
        if self.middle is not None:
            data["middle"] = self.middle
        if self.answer is not None:
            data["answer"] = self.answer
        data["expected_text"] = self.expected_text
        if self.distractor is not None:
            data["distractor"] = self.distractor
        if self.question_type == WH:
            data["accepted"] = list(self.accepted)
            data["others"] = list(self.others)
        if self.options:
            data["options"] = [option.to_json() for option in self.options]
        data["relation_type"] = self.relation_type
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        options = data.get("options")
        return cls(
            question_type=_str(data, "question_type"),
            hops=_int(data, "hops", 1),
            expected_text=_str(data, "expected_text"),
            relation_type=_str(data, "relation_type"),
            middle=_optional_str(data, "middle"),
            answer=_optional_str(data, "answer"),
            distractor=_optional_str(data, "distractor"),
            accepted=_strings(data.get("accepted")),
            others=_strings(data.get("others")),
            options=tuple(ChoiceOption.from_json(o) for o in options)
            if isinstance(options, list)
            else (),
        )


# -- logic rules (HalluVault) --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PremiseExtras:
    """A premise of the logic rules: a KG fact (parent contains child) asked once per
    session, whose answer says whether a wrong derived answer is an error of knowledge."""

    fact: tuple[str, str]  # (parent id, child id)
    rule: str = PREMISE
    expected_text: str = "yes"

    def to_json(self) -> dict[str, object]:
        return {"rule": self.rule, "expected_text": self.expected_text, "fact": list(self.fact)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        fact = _strings(data.get("fact"))
        return cls(
            (fact[0], fact[1]) if len(fact) == 2 else ("", ""),
            _str(data, "rule", PREMISE),
            _str(data, "expected_text", "yes"),
        )


@dataclass(frozen=True, slots=True)
class KnowledgePoint:
    """One link of a relation's path, by label: `child` is in `parent` (`relation` type)."""

    child: str
    relation: str
    parent: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LogicExtras:
    """A question a logic rule derives from KG facts: the rule, the steps that derived it
    (`transitive`, `inverse:negation`, ...), its premises and what the answer oracle compares
    a wrong answer's reasoning with (the path's knowledge points, aliases, relation words)."""

    rule: str
    steps: str
    expected_text: str
    form: str
    premises: tuple[str, ...] = ()  # the premise conversations' ids
    knowledge: tuple[KnowledgePoint, ...] = ()
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # label -> aliases
    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # relation type -> words

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "steps": self.steps,
            "expected_text": self.expected_text,
            "form": self.form,
            "premises": list(self.premises),
            "knowledge": [[p.child, p.relation, p.parent] for p in self.knowledge],
            "aliases": {label: list(names) for label, names in self.aliases.items()},
            "words": {kind: list(words) for kind, words in self.words.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        points = data.get("knowledge")
        knowledge = tuple(
            KnowledgePoint(*found)
            for point in (points if isinstance(points, list) else ())
            if len(found := _strings(point)) == 3
        )
        rule = _str(data, "rule")
        return cls(
            rule=rule,
            steps=_str(data, "steps", rule),
            expected_text=_str(data, "expected_text"),
            form=_str(data, "form"),
            premises=_strings(data.get("premises")),
            knowledge=knowledge,
            aliases=_string_lists(data.get("aliases")),
            words=_string_lists(data.get("words")),
        )


ConversationExtras = VariantExtras | FactcheckExtras | PremiseExtras | LogicExtras


def extras_from_json(
    test_kind: str, data: Mapping[str, object] | None
) -> ConversationExtras | None:
    """The extras of a conversation of `test_kind` from their JSON (None: the kind has none)."""
    if data is None:
        return None
    if test_kind == "variant":
        return VariantExtras.from_json(data)
    if test_kind == "annotation":
        return AnnotationExtras.from_json(data)
    if test_kind == "factcheck":
        return FactcheckExtras.from_json(data)
    if test_kind == "logic":
        if data.get("rule") == PREMISE:
            return PremiseExtras.from_json(data)
        return LogicExtras.from_json(data)
    return None


def expected_text(extras: ConversationExtras | None) -> str | None:
    """The right answer as text where the kind records one (FactChecker, logic rules)."""
    if isinstance(extras, FactcheckExtras | PremiseExtras | LogicExtras):
        return extras.expected_text
    return None
