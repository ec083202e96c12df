"""The question check: what a rule flags in the questions a template set asks about a KG.

`kontest generate --check` and the wizard's templates step report it; every flag names its
relation, template, question and reason. The rules are those realisation follows
(generate.realise), so the default sets' flags are what realisation could not settle and the
papers' set (`paper`, filled literally) shows what realisation settles:

- article or agreement: "a"/"an" against the sound of the next word or before a name, or a
  verb that does not agree with a plural name ("Is the Orkney Islands in Scotland?");
- missing "the": a name that takes it (the United States of America) without it;
- id or qualifier left: an id, a code or a bracket in a name, a name turned round
  (`Bristol, City of`), or a place the other node gives (`Queenstown, Singapore in Singapore`);
- generic name: `Central Region` with no country in the question;
- duplicate text: one question asked for two relations (one answer would count twice);
- self-named pair: a place asked about itself by name (`Is there a Garnich in Garnich?`);
- shared label: another node of the same name fits the question as well;
- odd punctuation: a stray comma before a title, `?"?`, doubled marks or spaces, a space
  before a mark, unbalanced quotes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kontest_tui.domain.records import Relation
from kontest_tui.generate.realise import (
    QuestionParts,
    Realiser,
    Slot,
    question_parts,
    realiser_for,
    sound_takes_an,
    template_slots,
)
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kg.aliases import fold_name
from kontest_tui.kg.graph import KnowledgeGraph

# reason -> (its name, what it means), in the order reports list them
REASONS: dict[str, tuple[str, str]] = {
    "article": (
        "article or agreement",
        '"a"/"an" against the sound of the next word or before a name, or a verb that does '
        'not agree ("Is the Orkney Islands ...")',
    ),
    "the": ('missing "the"', 'a name that takes "the" (the United States) said without it'),
    "qualifier": (
        "id or qualifier left",
        "an id, a code, brackets, a name turned round, or a place the other node gives",
    ),
    "generic": ("generic name", 'a name such as "Central Region" with no country in the question'),
    "duplicate": (
        "duplicate text",
        "the same question for two relations (one answer counts twice)",
    ),
    "self": ("self-named pair", "a place asked about itself by name"),
    "shared": ("shared label", "another node of this name fits the question as well"),
    "punctuation": (
        "odd punctuation",
        'a stray comma before a title, ?"?, doubled marks or spaces, unbalanced quotes',
    ),
}
EXAMPLES = 3  # questions shown per reason

_QUOTED = re.compile(r"[\"“][^\"“”]*[\"”]")
_ARTICLE_WORD = re.compile(r"(?<![\w'])(a|an)\s+([A-Za-z][\w'-]*)")
_STRAY_COMMA = re.compile(r",\s*[\"“]\{(?:parent|child)\}")
_ODD_MARKS = re.compile(r"\?\?|!!|,,|\s[?,!;:]|\s{2,}|[\"“][\"”]|,\s*\?")


@dataclass(frozen=True, slots=True)
class Flag:
    """One question a rule flags."""

    reason: str  # a key of REASONS
    relation_id: str
    template_id: str
    question: str
    detail: str  # what in the question the rule saw


@dataclass(frozen=True, slots=True)
class QuestionCheck:
    """The flags over the questions of some relations (`relations` of `total` checked)."""

    template_set: str  # "places natural"
    template_ids: tuple[str, ...]
    relations: int
    questions: int
    flags: tuple[Flag, ...]
    total: int = 0  # relations in the scope (0: all were checked)

    @property
    def flagged_relations(self) -> int:
        return len({flag.relation_id for flag in self.flags})

    @property
    def flagged_questions(self) -> int:
        return len({(flag.relation_id, flag.template_id) for flag in self.flags})

    @property
    def share(self) -> float:
        """Flagged relations as a share of the relations checked."""
        return self.flagged_relations / self.relations if self.relations else 0.0

    def by_reason(self) -> dict[str, list[Flag]]:
        """The flags of each reason that flagged something, in REASONS order."""
        grouped: dict[str, list[Flag]] = defaultdict(list)
        for flag in self.flags:
            grouped[flag.reason].append(flag)
        return {reason: grouped[reason] for reason in REASONS if grouped[reason]}

    def to_json(self) -> dict[str, object]:
        return {
            "template_set": self.template_set,
            "template_ids": list(self.template_ids),
            "relations": self.relations,
            "questions": self.questions,
            "flagged_relations": self.flagged_relations,
            "flagged_questions": self.flagged_questions,
            "share": round(self.share, 4),
            "reasons": {
                reason: {
                    "name": REASONS[reason][0],
                    "meaning": REASONS[reason][1],
                    "questions": len({(flag.relation_id, flag.template_id) for flag in flags}),
                    "relations": len({flag.relation_id for flag in flags}),
                    "examples": [
                        {
                            "relation": flag.relation_id,
                            "template": flag.template_id,
                            "question": flag.question,
                            "detail": flag.detail,
                        }
                        for flag in examples(flags)
                    ],
                }
                for reason, flags in self.by_reason().items()
            },
        }


def examples(flags: Sequence[Flag], count: int = EXAMPLES) -> list[Flag]:
    """The first `count` flags of distinct questions."""
    seen: dict[str, Flag] = {}
    for flag in flags:
        seen.setdefault(flag.question, flag)
        if len(seen) == count:
            break
    return list(seen.values())


def check_questions(
    kg: KnowledgeGraph,
    relations: Iterable[Relation],
    template_set: TemplateSet,
    template_ids: Sequence[str] | None = None,
    *,
    total: int = 0,
) -> QuestionCheck:
    """Check the questions `template_set` (its `template_ids`, default the first two) asks
    about `relations`, as a run would ask them."""
    templates = template_set.select(template_ids)
    texts = [(template.id, template.texts) for template in templates]
    realiser = realiser_for(kg)
    flags: list[Flag] = []
    by_text: dict[tuple[str, str], list[QuestionParts]] = defaultdict(list)
    count = questions = 0
    for relation in relations:
        count += 1
        for parts in question_parts(kg, (relation,), texts, realise=template_set.realise):
            questions += 1
            flags.extend(check_question(realiser, parts))
            by_text[parts.template_id, parts.text].append(parts)
    for group in by_text.values():
        ids = sorted({parts.relation.id for parts in group})
        if len(ids) > 1:
            flags.extend(
                Flag(
                    "duplicate",
                    p.relation.id,
                    p.template_id,
                    p.text,
                    "also asked for " + ", ".join(i for i in ids if i != p.relation.id),
                )
                for p in group
            )
    order = {reason: index for index, reason in enumerate(REASONS)}
    flags.sort(key=lambda flag: order[flag.reason])
    return QuestionCheck(
        template_set=f"{template_set.domain} {template_set.name}",
        template_ids=tuple(template.id for template in templates),
        relations=count,
        questions=questions,
        flags=tuple(flags),
        total=total,
    )


def check_question(realiser: Realiser, parts: QuestionParts) -> list[Flag]:
    """The flags of one question (every rule but duplicate text, which needs them all)."""
    found: list[tuple[str, str]] = []
    parent_slot, child_slot = template_slots(parts.pattern)
    titled = parent_slot.quoted or child_slot.quoted
    relation = parts.relation
    for role, slot in (("parent", parent_slot), ("child", child_slot)):
        node = relation.parent if role == "parent" else relation.child
        other = relation.child if role == "parent" else relation.parent
        phrase = parts.parent if role == "parent" else parts.child
        other_phrase = parts.child if role == "parent" else parts.parent
        found += _article(realiser, phrase, slot)
        if slot.quoted:
            continue
        found += _agreement(realiser, node, phrase, parts, role)
        found += _name_rules(realiser, node, other, phrase, other_phrase, slot, role)
    if not titled:
        found += _pair_rules(realiser, parts)
    found += _template_articles(realiser, parts.pattern)
    found += _punctuation(parts)
    return [
        Flag(reason, relation.id, parts.template_id, parts.text, detail) for reason, detail in found
    ]


def _article(realiser: Realiser, phrase: str, slot: Slot) -> list[tuple[str, str]]:
    """The article written before a slot, against the words put in it."""
    article = slot.article.lower()
    if article not in ("a", "an") or not phrase:
        return []
    if slot.quoted or phrase[:1].isupper() or not phrase[:1].isalpha():
        return [("article", f'"{slot.article}" before the name {phrase}')]
    if (article == "an") != sound_takes_an(phrase, realiser.rules):
        return [("article", f'"{slot.article} {phrase.split()[0]}"')]
    return []


_OPENING = re.compile(r"^(Is|Does|Has|Was)\s+(?:(?:a|an|the)\s+)?\{(parent|child)\}")


def _agreement(
    realiser: Realiser, node: str, phrase: str, parts: QuestionParts, role: str
) -> list[tuple[str, str]]:
    """A singular opening verb before a plural name."""
    opening = _OPENING.match(parts.pattern)
    if opening and opening.group(2) == role and realiser.plural(node, phrase):
        return [("article", f"{opening.group(1)} {phrase}")]
    return []


def _says_the(phrase: str, slot: Slot) -> bool:
    return fold_name(phrase).startswith("the ") or slot.article.lower() == "the"


def _name_rules(
    realiser: Realiser,
    node: str,
    other: str,
    phrase: str,
    other_phrase: str,
    slot: Slot,
    role: str,
) -> list[tuple[str, str]]:
    """Missing "the", an id or qualifier left, a generic name without its country."""
    found: list[tuple[str, str]] = []
    name = realiser.name(node)
    if (name.takes_the or name.has_the) and not _says_the(phrase, slot):
        found.append(("the", f"the {name.base}"))
    left = [piece for piece in name.dropped if piece in phrase]
    if not left and re.search(r"[()\[\]]", phrase):
        left = [phrase]  # brackets are not said
    found += [("qualifier", piece) for piece in left]
    if name.turned and name.label in phrase:
        found.append(("qualifier", f"{name.label} (turned round)"))
    qualifier = name.qualifier
    if qualifier and _mentions(phrase, qualifier):
        given = realiser.gives(other, qualifier, above=role == "child") or _mentions(
            other_phrase, qualifier
        )
        if given:
            found.append(("qualifier", f"{qualifier} (the other place gives it)"))
    if name.generic:
        country = realiser.country_of(node)
        if country is not None and country != other:
            said = realiser.name(country).base
            if not _mentions(phrase, said) and not _mentions(other_phrase, said):
                found.append(("generic", f"{name.base} (in {said})"))
    return found


def _bare(phrase: str) -> str:
    folded = fold_name(phrase)
    return folded[4:] if folded.startswith("the ") else folded


def _pair_rules(realiser: Realiser, parts: QuestionParts) -> list[tuple[str, str]]:
    """A self-named pair and a shared label (questions that name no type of their own)."""
    relation = parts.relation
    found: list[tuple[str, str]] = []
    parent_name = realiser.name(relation.parent)
    child_name = realiser.name(relation.child)
    if realiser.self_named(relation) and _bare(parts.parent) == _bare(parts.child):
        found.append(("self", f"{parts.child} in {parts.parent}"))
    plain_child = _bare(parts.child) in (fold_name(child_name.base), fold_name(child_name.label))
    if plain_child and realiser.shared_below(relation.child, relation.parent):
        found.append(("shared", f"{parts.child}: more than one below {parts.parent}"))
    plain_parent = _bare(parts.parent) in (
        fold_name(parent_name.base),
        fold_name(parent_name.label),
    )
    if plain_parent and realiser.shared_above(relation.parent, relation.child):
        found.append(("shared", f"{parts.parent}: more than one above {parts.child}"))
    return found


def _punctuation(parts: QuestionParts) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    stray = _STRAY_COMMA.search(parts.pattern)
    if stray:
        found.append(("punctuation", "a comma before a title"))
    text = parts.text
    if text.count('"') % 2 or text.count("“") != text.count("”"):
        found.append(("punctuation", "unbalanced quotes"))
    if re.search(r"\?[\"”]\?$", text):
        found.append(("punctuation", '?"?'))
    odd = _ODD_MARKS.search(_QUOTED.sub('"T"', text))
    if odd:
        found.append(("punctuation", repr(odd.group(0))))
    return found


def _template_articles(realiser: Realiser, pattern: str) -> list[tuple[str, str]]:
    """ "a"/"an" before a word of the template itself (titles in quotes left out)."""
    found: list[tuple[str, str]] = []
    for match in _ARTICLE_WORD.finditer(_QUOTED.sub('"T"', pattern)):
        article, word = match.group(1), match.group(2)
        if word[:1].isupper():
            found.append(("article", f'"{article}" before the name {word}'))
        elif (article == "an") != sound_takes_an(word, realiser.rules):
            found.append(("article", f'"{article} {word}"'))
    return found


def _mentions(text: str, name: str) -> bool:
    if not text or not name:
        return False
    return re.search(rf"(?<!\w){re.escape(fold_name(name))}(?!\w)", fold_name(text)) is not None
