"""Realisation: a template filled with KG labels as a person would write the question.

The step between templates and queries for a template set with `realise = true` (the default
sets of places and music; the papers' set `paper` is filled literally). Per relation, each
label is said as in context (docs/templates-and-conversations.md, "Realisation"):

- ids, codes and bracketed alternatives dropped (`Hüslers (AI-1755)` -> Hüslers,
  `Wales [Cymru GB-CYM]` -> Wales); a name turned round put back (`Bristol, City of` ->
  the City of Bristol);
- a place after a comma or in brackets (`Queenstown, Singapore`) dropped where the other
  node gives it (its name, or one above it), kept after a comma otherwise;
- "the" where the name takes it (the United States of America, the Netherlands, the Canton
  of Capellen); a generic name ("Central Region") gets its country unless the question
  names it (the Central Region of Singapore);
- equal names told apart by their node types (`Does Luxembourg include the locality of
  Garnich?`, `Does the district of Garnich include the locality of Garnich?`) where the
  other node does not tell them apart;
- articles before a slot agreed (a/an by sound, none before a name, "the" kept once);
  titles in quotes keep their words, inner double quotes become single ones, and a title
  ending in "?" ends the question (`..."Where Do We Go?"`, never `?"?`).

Both phrasings of a relation get the same words for its two nodes, so they still ask one
fact. The word lists are data: assets/realise/names.toml. `generate.check` flags what a
filled question still gets wrong, with the same rules.
"""

from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kontest_tui.domain.records import Relation
from kontest_tui.generate.templates import PLACEHOLDERS, clean_label, format_string, template_parts
from kontest_tui.kg.aliases import fold_name, usable_aliases
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.resources import asset_path

_CACHE_KEY = "realiser"
_ARTICLE = re.compile(r"(?:(?<=\s)|^)(a|an|the)\s+$", re.IGNORECASE)
_QUOTES = ('"', "“", "”")
_BRACKETS = re.compile(r"\s*\[[^\]]*\]")
_TRAILING_PARENS = re.compile(r"(.+?)\s*\(([^()]*)\)")
_CODE = re.compile(r"(?:[A-Z]{2,}|[IVXLC]+)(?:-[\w]+)?|[\w-]*\d[\w-]*", re.ASCII)
_TITLE_END = re.compile(r"\?([\"”])\?$")


@dataclass(frozen=True, slots=True)
class NameRules:
    """The word lists of assets/realise/names.toml, case-folded."""

    the_names: frozenset[str]
    the_first_words: frozenset[str]
    the_last_words: frozenset[str]
    the_heads: frozenset[str]
    own_articles: frozenset[str]
    plural_last_words: frozenset[str]
    plural_heads: frozenset[str]
    plural_names: frozenset[str]
    generic_words: frozenset[str]
    generic_nouns: frozenset[str]
    designators: frozenset[str]
    designator_ends: frozenset[str]
    abbreviations: dict[str, str]
    a_before: tuple[str, ...]
    an_before: tuple[str, ...]
    no_type_word: frozenset[str]


@lru_cache(maxsize=1)
def load_name_rules() -> NameRules:
    """The packaged word lists (read once)."""
    with asset_path("realise", "names.toml").open("rb") as handle:
        data = tomllib.load(handle)

    def words(key: str) -> frozenset[str]:
        return frozenset(fold_name(word) for word in data.get(key, []))

    return NameRules(
        the_names=words("the_names"),
        the_first_words=words("the_first_words"),
        the_last_words=words("the_last_words"),
        the_heads=words("the_heads"),
        own_articles=words("own_articles"),
        plural_last_words=words("plural_last_words"),
        plural_heads=words("plural_heads"),
        plural_names=words("plural_names"),
        generic_words=words("generic_words"),
        generic_nouns=words("generic_nouns"),
        designators=words("designators"),
        designator_ends=words("designator_ends"),
        abbreviations={
            fold_name(short): str(name) for short, name in data.get("abbreviations", {}).items()
        },
        a_before=tuple(fold_name(word) for word in data.get("a_before", [])),
        an_before=tuple(fold_name(word) for word in data.get("an_before", [])),
        no_type_word=words("no_type_word"),
    )


# ---------------------------------------------------------------------------- one label


@dataclass(frozen=True, slots=True)
class SpokenName:
    """How one label is said, before its context is known."""

    label: str  # the KG label, whitespace cleaned
    base: str  # the name alone: ids and brackets dropped, a turned-round name put back
    qualifier: str = ""  # a place after a comma or in brackets, kept unless the context gives it
    takes_the: bool = False  # "the" goes before it (not already part of `base`)
    has_the: bool = False  # `base` starts with "the" / "The" itself
    generic: bool = False  # generic words only ("Central Region"): its country is said
    plural: bool = False  # said in the plural (the Orkney Islands): the verb agrees
    dropped: tuple[str, ...] = ()  # ids, codes and brackets left out
    turned: bool = False  # written turned round ("Bristol, City of")


def _words(text: str) -> list[str]:
    return [fold_name(word) for word in text.split()]


def _is_code(word: str) -> bool:
    return bool(_CODE.fullmatch(word))


def _is_place(text: str, rules: NameRules) -> bool:
    """Does a comma's or brackets' part name a place (kept as words), rather than give an
    id, a code or a description (dropped)? `Singapore`, `Ballyshannon` yes; `AI-1755`,
    `Region IV-A`, `ARMM`, `Arctic Region`, `française` no."""
    words = text.split()
    if not words or not words[0][:1].isupper():
        return False
    if all(_is_code(word) or fold_name(word) in rules.generic_nouns for word in words):
        return False
    return fold_name(words[-1]) not in rules.generic_nouns and not any(
        char.isdigit() for char in text
    )


def _is_list(text: str) -> bool:
    """`Christchurch and Poole`: the comma was one of a list of names."""
    return bool(re.search(r"\s(?:and|&|und|et|y|og|och)\s", text))


def _is_designator(text: str, rules: NameRules) -> bool:
    folded = fold_name(text)
    return folded in rules.designators or (
        bool(folded.split()) and folded.split()[-1] in rules.designator_ends
    )


def _is_generic(base: str, rules: NameRules) -> bool:
    """Generic words only, two or more: "Central Region", "North-East Region", "South West"."""
    words = _words(base)
    return (
        len(words) >= 2
        and (words[-1] in rules.generic_nouns or words[-1] in rules.generic_words)
        and all(word in rules.generic_words for word in words[:-1])
    )


def _head(words: list[str]) -> str:
    """The words before "of" or "in" ("canton" in "Canton of Capellen"), '' when none."""
    for index, word in enumerate(words[1:], start=1):
        if word in ("of", "in"):
            return " ".join(words[:index])
    return ""


def _takes_the(base: str, rules: NameRules) -> bool:
    words = _words(base)
    if not words or words[0] in rules.own_articles:
        return False
    if " ".join(words) in rules.the_names:
        return True
    if len(words) >= 2 and (words[0] in rules.the_first_words or words[-1] in rules.the_last_words):
        return True
    return _head(words) in rules.the_heads


def _is_plural(base: str, rules: NameRules) -> bool:
    words = _words(base)
    return bool(words) and (
        " ".join(words) in rules.plural_names
        or (len(words) >= 2 and words[-1] in rules.plural_last_words)
        or _head(words) in rules.plural_heads
    )


def parse_name(label: str, rules: NameRules | None = None) -> SpokenName:
    """How `label` is said with no context (see the module docstring)."""
    rules = rules or load_name_rules()
    text = clean_label(label)
    dropped = [match.strip() for match in _BRACKETS.findall(text)]
    base = _BRACKETS.sub("", text).strip() or text
    qualifier = ""
    turned = takes = False
    parens = _TRAILING_PARENS.fullmatch(base)
    if parens:
        base, inner = parens.group(1).strip(), parens.group(2).strip()
        if _is_place(inner, rules):
            qualifier = inner
        else:
            dropped.append(f"({inner})")
    if "," in base and not qualifier:
        head, _, tail = base.rpartition(",")
        head, tail = head.strip(), tail.strip()
        if head and tail and not _is_list(tail):
            if fold_name(tail) == "the":
                base, turned = head, True
                takes = True
            elif _is_designator(tail, rules):
                base, turned = f"{tail} {head}", True
            elif _is_place(tail, rules):
                base, qualifier = head, tail
    has_the = fold_name(base).startswith("the ")
    generic = _is_generic(base, rules)
    qualifier = rules.abbreviations.get(fold_name(qualifier), qualifier)
    return SpokenName(
        label=text,
        base=base,
        qualifier=qualifier,
        takes_the=not has_the and (takes or generic or _takes_the(base, rules)),
        has_the=has_the,
        generic=generic,
        plural=_is_plural(base, rules),
        dropped=tuple(dropped),
        turned=turned,
    )


# ---------------------------------------------------------------------------- in context


class Realiser:
    """How one KG's nodes are said in each relation's questions (made once per KG)."""

    def __init__(self, kg: KnowledgeGraph, rules: NameRules | None = None) -> None:
        self.kg = kg
        self.rules = rules or load_name_rules()
        self._names: dict[str, SpokenName] = {}
        self._sharing: dict[str, tuple[str, ...]] | None = None
        self._countries: dict[str, str | None] = {}
        self._alias_phrases: dict[tuple[str, bool], tuple[str, ...]] = {}
        self._type_words: dict[str, str] = {}
        self._folded: dict[str, str] = {}
        # the last relation's phrases: its templates are realised one after the other
        self._last: tuple[tuple[str, str, bool, bool], tuple[str, str]] | None = None

    def name(self, node_id: str) -> SpokenName:
        """The node's label as said with no context (cached)."""
        found = self._names.get(node_id)
        if found is None:
            found = self._names[node_id] = parse_name(self.kg.label(node_id), self.rules)
        return found

    def _same_name(self, node_id: str) -> tuple[str, ...]:
        """Other nodes said with the same name (case- and accent-folded)."""
        if self._sharing is None:
            by_name: dict[str, list[str]] = defaultdict(list)
            for other, node in self.kg.nodes.items():
                # a label with no brackets or comma is said as it is: no need to parse it
                plain = not any(mark in node.label for mark in "([,")
                by_name[fold_name(node.label) if plain else self.folded(other)].append(other)
            self._sharing = {}
            for ids in by_name.values():
                if len(ids) > 1:
                    for other in ids:
                        self._sharing[other] = tuple(i for i in ids if i != other)
        return self._sharing.get(node_id, ())

    def shared_below(self, child: str, parent: str) -> tuple[str, ...]:
        """Other nodes of the child's name below `parent` too (the question could mean
        any of them)."""
        others = self._same_name(child)
        return tuple(o for o in others if parent in self.kg.ancestors(o)) if others else ()

    def shared_above(self, parent: str, child: str) -> tuple[str, ...]:
        """Other nodes of the parent's name above `child` too."""
        others = self._same_name(parent)
        if not others:
            return ()
        ancestors = self.kg.ancestors(child)
        return tuple(other for other in others if other in ancestors)

    def told_apart(self, node_id: str, others: Sequence[str]) -> bool:
        """Does the node's type word tell it from each of `others` (equal names)?"""
        kind = self.type_word(node_id)
        return bool(others) and all(self.type_word(other) != kind for other in others)

    def folded(self, node_id: str) -> str:
        """The node's name (`SpokenName.base`) case- and accent-folded (cached)."""
        found = self._folded.get(node_id)
        if found is None:
            found = self._folded[node_id] = fold_name(self.name(node_id).base)
        return found

    def self_named(self, relation: Relation) -> bool:
        """Are both ends of the relation said with the same name (`Garnich in Garnich`)?"""
        return self.folded(relation.parent) == self.folded(relation.child)

    def country_of(self, node_id: str) -> str | None:
        """The nearest node above typed `country`, else the root above it (first parents)."""
        if node_id in self._countries:
            return self._countries[node_id]
        found: str | None = None
        current, seen = node_id, {node_id}
        while True:
            parents = self.kg.parents(current)
            if not parents or parents[0] in seen:
                found = current if current != node_id else None
                break
            current = parents[0]
            seen.add(current)
            node = self.kg.nodes.get(current)
            if node is not None and node.type.casefold() == "country":
                found = current
                break
        self._countries[node_id] = found
        return found

    def plural(self, node_id: str, phrase: str) -> bool:
        """Is `phrase` (the node's words in a question) said in the plural?"""
        if not self.name(node_id).plural:
            return False
        node = self.kg.nodes.get(node_id)
        if node is None or node.type.casefold() == "country":
            return False
        kind = self.type_word(node_id)
        return not (kind and phrase.startswith(f"the {kind} of "))

    def type_word(self, node_id: str) -> str:
        """The node's type as a word that tells equal names apart ('' when it has none)."""
        found = self._type_words.get(node_id)
        if found is None:
            node = self.kg.nodes.get(node_id)
            kind = clean_label(node.type).lower() if node is not None else ""
            found = "" if not kind or fold_name(kind) in self.rules.no_type_word else kind
            self._type_words[node_id] = found
        return found

    def gives(self, node_id: str, place: str, *, above: bool) -> bool:
        """Does naming `node_id` give `place` (its name or an alias; with `above`, the name
        of a node above it too)?"""
        folded = fold_name(place)
        nodes = [node_id, *self.kg.ancestors(node_id)] if above else [node_id]
        for other in nodes:
            name = self.name(other)
            node = self.kg.nodes.get(other)
            known = {fold_name(name.base), fold_name(name.label)}
            if node is not None:
                known.update(fold_name(alias) for alias in node.aliases)
            if folded in known:
                return True
        return False

    def say(
        self,
        node_id: str,
        name: SpokenName,
        *,
        other: str | None,
        other_text: str = "",
        with_type: bool = False,
        above: bool = False,
    ) -> str:
        """The words for `name` (of `node_id`) in a question about it and `other` (already
        said as `other_text` when it comes first); `above`: `other` is its parent."""
        kind = self.type_word(node_id) if with_type else ""
        if kind:
            text = f"the {kind} of {name.base}"
        elif name.takes_the:
            text = f"the {name.base}"
        else:
            text = name.base
        qualifier = name.qualifier
        if qualifier and other is not None:
            given = self.gives(other, qualifier, above=above) or _mentions(other_text, qualifier)
            if given:
                qualifier = ""
        if qualifier:
            text = f"{text}, {qualifier}"
        if name.generic:
            country = self.country_of(node_id)
            if (
                country is not None
                and country != other
                and not _mentions(other_text, self.name(country).base)
            ):
                text = f"{text} of {self.say(country, self.name(country), other=None)}"
        return text

    def phrases(
        self, relation: Relation, parent_title: bool = False, child_title: bool = False
    ) -> tuple[str, str]:
        """How the relation's parent and child are said in its questions (titles in
        quotes as they are). Equal names are told apart by type when neither is a title
        (a template that quotes a title names the types itself) and only where the type
        words differ."""
        parent, child = relation.parent, relation.child
        key = (parent, child, parent_title, child_title)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        said = self._phrases(relation, parent_title, child_title)
        self._last = (key, said)
        return said

    def _phrases(
        self, relation: Relation, parent_title: bool, child_title: bool
    ) -> tuple[str, str]:
        parent, child = relation.parent, relation.child
        parent_name, child_name = self.name(parent), self.name(child)
        typed = not (parent_title or child_title)
        same = typed and self.self_named(relation) and self.told_apart(parent, (child,))
        parent_text = (
            title_text(parent_name.label)
            if parent_title
            else self.say(
                parent,
                parent_name,
                other=child,
                with_type=same
                or (typed and self.told_apart(parent, self.shared_above(parent, child))),
            )
        )
        child_text = (
            title_text(child_name.label)
            if child_title
            else self.say(
                child,
                child_name,
                other=parent,
                other_text=parent_text,
                with_type=same
                or (typed and self.told_apart(child, self.shared_below(child, parent))),
                above=True,
            )
        )
        return parent_text, child_text

    def alias_phrases(self, node_id: str, phrase: str, *, title: bool) -> tuple[str, ...]:
        """The node's aliases a covering-array variant may use (`variant_aliases`), each
        said as its label is (with "the", a type word or a country where the label's
        phrase has them), those equal to `phrase` left out."""
        key = (node_id, title)
        found = self._alias_phrases.get(key)
        if found is None:
            kind = self.type_word(node_id)
            said: list[str] = []
            for alias in variant_aliases(self.kg, node_id, self.rules):
                name = parse_name(alias, self.rules)
                if title:
                    text = title_text(alias)
                elif kind and phrase.startswith(f"the {kind} of "):
                    text = f"the {kind} of {name.base}"
                else:
                    text = f"the {name.base}" if name.takes_the else name.base
                if fold_name(text) != fold_name(phrase) and text not in said:
                    said.append(text)
            found = self._alias_phrases[key] = tuple(said)
        return found


def _mentions(text: str, name: str) -> bool:
    """Does `text` hold `name` as whole words (folded)?"""
    if not text or not name:
        return False
    return re.search(rf"(?<!\w){re.escape(fold_name(name))}(?!\w)", fold_name(text)) is not None


def title_text(label: str) -> str:
    """A title as it goes between double quotes: its double quotes become single ones."""
    return clean_label(label).replace('"', "'").replace("“", "'").replace("”", "'")


def realiser_for(kg: KnowledgeGraph) -> Realiser:
    """The KG's Realiser, made once and kept with the KG."""
    found = kg._cache.get(_CACHE_KEY)
    if not isinstance(found, Realiser) or found.kg is not kg:
        found = kg._cache[_CACHE_KEY] = Realiser(kg)
    return found


def forget_realiser(kg: KnowledgeGraph) -> None:
    """Drop the KG's Realiser and what it learnt of every node said so far (~430 bytes a
    node); `realiser_for` makes it again when asked."""
    kg._cache.pop(_CACHE_KEY, None)


def variant_aliases(
    kg: KnowledgeGraph, node_id: str, rules: NameRules | None = None
) -> tuple[str, ...]:
    """The aliases a covering-array variant may put for the node: `kg.aliases.usable_aliases`
    (none naming another node of the KG) without those that are its label less a generic
    word (`County Donegal` -> Donegal, `Canton of Capellen` -> Capellen): such a short form
    usually names the town the unit is named after."""
    rules = rules or load_name_rules()
    label_words = _words(clean_label(kg.label(node_id)))
    spare = rules.generic_nouns | rules.designators | rules.designator_ends | {"the"}
    kept = []
    for alias in usable_aliases(kg, node_id):
        words = _words(alias)
        extra = [word for word in label_words if word not in words]
        shorter = len(words) < len(label_words) and all(word in label_words for word in words)
        if shorter and extra and all(word in spare for word in extra):
            continue
        kept.append(alias)
    return tuple(kept)


# ---------------------------------------------------------------------------- templates


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a placeholder sits in a template text: quoted (a title) and the article
    written before it."""

    quoted: bool
    article: str  # "a", "an", "the" (as written) or ""


@lru_cache(maxsize=4096)
def template_slots(text: str) -> tuple[Slot, Slot]:
    """The parent's and the child's slot in a template text."""
    parts = template_parts(text)
    found: dict[int, Slot] = {}
    for index, part in enumerate(parts):
        if isinstance(part, int):
            before = parts[index - 1] if index and isinstance(parts[index - 1], str) else ""
            after = (
                parts[index + 1]
                if index + 1 < len(parts) and isinstance(parts[index + 1], str)
                else ""
            )
            assert isinstance(before, str) and isinstance(after, str)
            article = _ARTICLE.search(before)
            found.setdefault(
                part,
                Slot(
                    quoted=before.endswith(_QUOTES) and after.startswith(_QUOTES),
                    article=article.group(1) if article else "",
                ),
            )
    return found[0], found[1]


def sound_takes_an(word: str, rules: NameRules) -> bool:
    """Does `word` take "an"?"""
    folded = fold_name(word)
    if folded.startswith(rules.an_before):
        return True
    if folded.startswith(rules.a_before):
        return False
    return folded[:1] in "aeiou" and bool(folded)


def _phrase_kind(phrase: str, slot: Slot, rules: NameRules) -> str:
    """What a slot's article becomes for this phrase: "keep", "drop", "a" or "an"."""
    if slot.quoted or not slot.article:
        return "keep"
    first = phrase[:1]
    if phrase[:4].lower() == "the " or first.isupper() or not first.isalpha():
        return "drop"  # a name, or "the" already said
    if slot.article.lower() == "the":
        return "keep"
    return "an" if sound_takes_an(phrase, rules) else "a"


_PLURAL_VERBS = {"is": "are", "does": "do", "has": "have", "was": "were"}
_OPENING_VERB = re.compile(r"^(is|does|has|was)(\s+)$", re.IGNORECASE)


@lru_cache(maxsize=4096)
def realised_pattern(
    text: str, parent_kind: str, child_kind: str, plural: tuple[bool, bool] = (False, False)
) -> str:
    """`text` with the articles before its slots settled and the opening verb agreeing with
    a plural subject ("Are the Orkney Islands in ...?"), placeholders kept."""
    parts = template_parts(text)
    kinds = (parent_kind, child_kind)
    out: list[str] = []
    for index, part in enumerate(parts):
        if isinstance(part, str):
            following = parts[index + 1] if index + 1 < len(parts) else None
            match = _ARTICLE.search(part) if isinstance(following, int) else None
            if match and isinstance(following, int) and kinds[following] != "keep":
                article = "" if kinds[following] == "drop" else kinds[following]
                if article and match.group(1)[:1].isupper():
                    article = article.capitalize()
                part = part[: match.start()] + (f"{article} " if article else "")
            verb = _OPENING_VERB.match(part) if index == 0 else None
            if verb and isinstance(following, int) and plural[following]:
                word = _PLURAL_VERBS[verb.group(1).lower()]
                part = (word.capitalize() if verb.group(1)[:1].isupper() else word) + verb.group(2)
            out.append(part.replace("{", "{{").replace("}", "}}"))
        else:
            out.append(f"{{{PLACEHOLDERS[part]}}}")
    return "".join(out)


def finish_question(text: str) -> str:
    """The first letter upper case; a title ending in "?" ends the question (no `?"?`)."""
    if text[:1].islower():
        text = text[:1].upper() + text[1:]
    return _TITLE_END.sub(r"?\1", text) if text.endswith(('"?', "”?")) else text


@dataclass(frozen=True, slots=True)
class QuestionParts:
    """One question as asked, with the words put for each node and the template text
    (articles settled) they went into."""

    relation: Relation
    template_id: str
    text: str
    parent: str
    child: str
    pattern: str  # the template text with its articles settled, {parent} and {child} kept


def realise_question(
    realiser: Realiser, relation: Relation, template_id: str, text: str
) -> QuestionParts:
    """One template text filled for one relation, realised."""
    parent_slot, child_slot = template_slots(text)
    parent, child = realiser.phrases(relation, parent_slot.quoted, child_slot.quoted)
    plural = (
        not parent_slot.quoted and realiser.plural(relation.parent, parent),
        not child_slot.quoted and realiser.plural(relation.child, child),
    )
    pattern = realised_pattern(
        text,
        _phrase_kind(parent, parent_slot, realiser.rules),
        _phrase_kind(child, child_slot, realiser.rules),
        plural,
    )
    question = finish_question(_fill(pattern, parent, child))
    return QuestionParts(relation, template_id, question, parent, child, pattern)


def literal_question(
    kg: KnowledgeGraph, relation: Relation, template_id: str, text: str
) -> QuestionParts:
    """One template text filled with the labels as they are (a set that is not realised)."""
    parent, child = clean_label(kg.label(relation.parent)), clean_label(kg.label(relation.child))
    return QuestionParts(relation, template_id, _fill(text, parent, child), parent, child, text)


def _fill(pattern: str, parent: str, child: str) -> str:
    return format_string(pattern).format(parent, child)


def question_parts(
    kg: KnowledgeGraph,
    relations: Iterable[Relation],
    texts: Sequence[tuple[str, dict[str, str]]],
    *,
    realise: bool,
) -> Iterable[QuestionParts]:
    """Every (relation, template) question, relation order first: `texts` are each
    template's id and texts by relation type (a template with no text for a relation's
    type is skipped)."""
    realiser = realiser_for(kg) if realise else None
    for relation in relations:
        for template_id, by_type in texts:
            text = by_type.get(relation.type)
            if text is None:
                continue
            if realiser is None:
                yield literal_question(kg, relation, template_id, text)
            else:
                yield realise_question(realiser, relation, template_id, text)
