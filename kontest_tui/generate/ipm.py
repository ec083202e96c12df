"""Input-parameter models (IPMs) of questions: one parameter per word, synonyms as values.

A template text is tokenised with NLTK's RegexpTokenizer (no downloaded data); each word is
a parameter whose first value is the word itself. Free words take the user's pins, then the
curated synonyms of the domain, then WordNet lemmas of the part of speech the template
annotates; the `{parent}` / `{child}` slots take the entity's KG aliases (generate.realise's
`variant_aliases`: none naming another node, none that is its label less a generic word);
stop words, words the template marks fixed and punctuation keep one value. For a realised
template set the question is the realised one (generate.realise): the slots hold the words
said for each node and its aliases said the same way. `render` turns a row of values back
into a sentence with the original spacing and capitalisation.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from nltk.tokenize import RegexpTokenizer

from kontest_tui.domain.records import Relation
from kontest_tui.generate.realise import (
    Realiser,
    finish_question,
    realise_question,
    realiser_for,
    template_slots,
    variant_aliases,
)
from kontest_tui.generate.synonyms import (
    SynonymLists,
    choose_values,
    load_synonym_lists,
    wordnet_synonyms,
)
from kontest_tui.generate.templates import Template, clean_label
from kontest_tui.kg.graph import KnowledgeGraph

# Words (with inner hyphens/apostrophes), placeholders, runs of other non-space, and spaces.
_TOKENIZER = RegexpTokenizer(r"\{(?:parent|child)\}|\w+(?:['’-]\w+)*|[^\w\s{}]+|[{}]|\s+")
DEFAULT_MAX_VALUES = 3  # the thesis' v_max: the original plus two synonyms
DEFAULT_SENSES = 1


def tokenize(text: str) -> list[str]:
    """Split a text into words, placeholders, punctuation and whitespace (lossless)."""
    tokens: list[str] = _TOKENIZER.tokenize(text)  # nltk has no type hints
    return tokens


@dataclass(frozen=True, slots=True)
class Parameter:
    """One word of a question and the values it may take (the original first).

    kind: "word" (free), "parent"/"child" (entity slots), "fixed" (template-fixed),
    "stop" (stop word). `sources` names where each value came from.
    """

    name: str
    word: str
    kind: str
    values: tuple[str, ...]
    sources: tuple[str, ...]
    pos: str | None = None


@dataclass(frozen=True, slots=True)
class QueryIPM:
    """The IPM of one question: its pieces, and which pieces are parameters."""

    relation_id: str
    template_id: str
    pieces: tuple[str, ...]  # every token of the filled text, in order
    slots: tuple[int | None, ...]  # per piece: index into `parameters`, or None (kept as is)
    parameters: tuple[Parameter, ...]
    realised: bool = False  # a realised question: first letter and a title's "?" settled

    @property
    def text(self) -> str:
        return self.render([p.values[0] for p in self.parameters])

    @property
    def levels(self) -> tuple[int, ...]:
        return tuple(len(p.values) for p in self.parameters)

    def render(self, values: Sequence[str]) -> str:
        """The sentence with `values` (one per parameter) in place of the words."""
        out = []
        for piece, slot in zip(self.pieces, self.slots, strict=True):
            if slot is None:
                out.append(piece)
                continue
            value = values[slot]
            param = self.parameters[slot]
            if param.kind in ("word", "stop", "fixed") and param.word[:1].isupper() and value:
                value = value[:1].upper() + value[1:]
            out.append(value)
        self._fix_articles(out, values)
        text = "".join(out)
        return finish_question(text) if self.realised else text

    def _fix_articles(self, out: list[str], values: Sequence[str]) -> None:
        """Turn "a"/"an" before a replaced word into the form that word needs."""
        for i, piece in enumerate(out):
            if piece.lower() not in ("a", "an") or self.slots[i] is None:
                continue
            j = i + 1
            while j < len(out) and self.slots[j] is None and not out[j].strip():
                j += 1
            slot = self.slots[j] if j < len(out) else None
            if slot is None or values[slot] == self.parameters[slot].values[0] or not values[slot]:
                continue
            article = "an" if values[slot][0].lower() in "aeiou" else "a"
            out[i] = article.capitalize() if piece[0].isupper() else article

    def to_json(self) -> dict[str, object]:
        """The `kontest ca --ipm` file shape (plus kinds and sources for the explorer)."""
        return {
            "relation_id": self.relation_id,
            "template_id": self.template_id,
            "text": self.text,
            "parameters": [
                {
                    "name": p.name,
                    "values": list(p.values),
                    "kind": p.kind,
                    "sources": list(p.sources),
                }
                for p in self.parameters
            ],
        }


def _entity_values(kg: KnowledgeGraph, node_id: str, lists: SynonymLists, limit: int) -> Parameter:
    label = clean_label(kg.label(node_id))
    aliases = [(clean_label(a), "alias") for a in variant_aliases(kg, node_id) if clean_label(a)]
    pinned = lists.pins.get(label.lower(), [])
    values, sources = choose_values(label, pinned, aliases, lists.banned(label), limit)
    return Parameter("", label, "", tuple(values), tuple(sources))


def _spoken_values(
    realiser: Realiser,
    node_id: str,
    phrase: str,
    title: bool,
    lists: SynonymLists,
    limit: int,
) -> Parameter:
    """A realised slot: the words said for the node, then its aliases said the same way."""
    label = clean_label(realiser.kg.label(node_id))
    aliases = [(alias, "alias") for alias in realiser.alias_phrases(node_id, phrase, title=title)]
    pinned = lists.pins.get(label.lower(), [])
    values, sources = choose_values(phrase, pinned, aliases, lists.banned(label), limit)
    return Parameter("", phrase, "", tuple(values), tuple(sources))


def _word_values(
    word: str, template: Template, lists: SynonymLists, limit: int, senses: int
) -> Parameter:
    lower = word.lower()
    pos = template.pos.get(word) or template.pos.get(lower)
    fixed = {w.lower() for w in template.fixed}
    if lower in fixed:
        return Parameter("", word, "fixed", (word,), ("original",), pos)
    # A stop word stays as is unless the user pinned values or the domain curates synonyms
    # for it (function words vary too: the thesis makes every word a parameter).
    if lower in lists.stopwords and lower not in lists.pins and lower not in lists.synonyms:
        return Parameter("", word, "stop", (word,), ("original",), pos)
    candidates = [(v, "curated") for v in lists.synonyms.get(lower, [])]
    if pos:
        blocked = lists.blocked(lower)
        candidates += [
            (v, "wordnet") for v in wordnet_synonyms(lower, pos, senses) if v.lower() not in blocked
        ]
    values, sources = choose_values(
        word, lists.pins.get(lower, []), candidates, lists.banned(lower), limit
    )
    return Parameter("", word, "word", tuple(values), tuple(sources), pos)


def ipm_for_query(
    kg: KnowledgeGraph,
    relation: Relation,
    template: Template,
    domain: str,
    *,
    max_values: int = DEFAULT_MAX_VALUES,
    senses: int = DEFAULT_SENSES,
    lists: SynonymLists | None = None,
    realise: bool = False,
) -> QueryIPM:
    """The IPM of `template` filled for `relation` (synonym data of `domain`); `realise`:
    the realised question (the template set's `realise`)."""
    lists = lists or load_synonym_lists(domain)
    pieces: list[str] = []
    slots: list[int | None] = []
    parameters: list[Parameter] = []
    text = template.text_for(relation.type)
    realiser = realiser_for(kg) if realise else None
    spoken: dict[str, tuple[str, bool]] = {}
    if realiser is not None:
        parts = realise_question(realiser, relation, template.id, text)
        text = parts.pattern
        parent_slot, child_slot = template_slots(text)
        spoken = {
            "parent": (parts.parent, parent_slot.quoted),
            "child": (parts.child, child_slot.quoted),
        }
    for token in tokenize(text):
        if token in ("{parent}", "{child}"):
            kind = token[1:-1]
            node_id = relation.parent if kind == "parent" else relation.child
            if realiser is not None:
                phrase, title = spoken[kind]
                param = _spoken_values(realiser, node_id, phrase, title, lists, max_values)
            else:
                param = _entity_values(kg, node_id, lists, max_values)
            param = Parameter(kind, param.word, kind, param.values, param.sources)
        elif token[:1].isalnum() or token[:1] == "_":
            param = _word_values(token, template, lists, max_values, senses)
            param = Parameter(
                f"w{len(parameters) + 1}:{token}",
                token,
                param.kind,
                param.values,
                param.sources,
                param.pos,
            )
        else:
            pieces.append(token)
            slots.append(None)
            continue
        pieces.append(token)
        slots.append(len(parameters))
        parameters.append(param)
    return QueryIPM(
        relation.id,
        template.id,
        tuple(pieces),
        tuple(slots),
        tuple(parameters),
        realised=realiser is not None,
    )


def guess_pos(word: str) -> str | None:
    """A part of speech for a word with no template annotation: WordNet's most used one.

    Used for free questions (annotated BoolQ-style files) where no template says it; the POS
    with the most senses of the word wins, ties in n, v, a, r order. None if WordNet lacks it.
    """
    from kontest_tui.generate.wordnet_data import wordnet_reader

    best, best_count = None, 0
    with wordnet_reader() as wordnet:
        for pos in ("n", "v", "a", "r"):
            base = wordnet.morphy(word.lower(), pos)
            count = len(wordnet.synsets(base, pos)) if base else 0
            if count > best_count:
                best, best_count = pos, count
    return best


# Words after which a template's next word is a verb (`Did {parent} release ...`: an
# auxiliary, then the subject placeholder) or a noun (`... an album ...`: a determiner).
_AUXILIARIES = frozenset(
    [
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
    ]
)
_DETERMINERS = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "its",
        "their",
        "his",
        "her",
        "our",
        "your",
        "my",
        "some",
        "any",
    ]
)
_TEXT_TOKEN = re.compile(r"\{(?:parent|child)\}|\w+(?:['’-]\w+)*")


def _context_pos(tokens: Sequence[str], index: int) -> str | None:
    """The part of speech a template word's place implies: a verb right after `to`, or after
    the subject placeholder of a question opened by an auxiliary (`Did {parent} release`);
    a noun right after a determiner (`an album`); None when the place says nothing."""
    before = tokens[index - 1].lower() if index else ""
    if before == "to":
        return "v"
    if before in _DETERMINERS:
        return "n"
    if before.startswith("{") and index >= 2 and tokens[index - 2].lower() in _AUXILIARIES:
        return "v"
    return None


def _has_pos(word: str, pos: str) -> bool:
    from kontest_tui.generate.wordnet_data import wordnet_reader

    with wordnet_reader() as wordnet:
        base = wordnet.morphy(word.lower(), pos)
        return bool(base and wordnet.synsets(base, pos))


def tag_words(text: str, known: Mapping[str, str], skip: Collection[str] = ()) -> dict[str, str]:
    """The part of speech of each word of a template text: a word `known` tags keeps its tag,
    a new word gets the one its place in the sentence implies when WordNet has the word so
    (`Did {parent} release an album`: *release* a verb, *album* a noun), else WordNet's
    most used one (`guess_pos`; none when WordNet lacks it), a word no longer in the text
    drops out, a word in `skip` (stop words, fixed words; lower case) is left untagged. An
    edited template keeps varying its new words."""
    tokens = _TEXT_TOKEN.findall(text)
    tags: dict[str, str] = {}
    for index, word in enumerate(tokens):
        if word.startswith("{") or word in tags:
            continue
        tag = known.get(word) or known.get(word.lower())
        if tag is None and word.lower() not in skip:
            implied = _context_pos(tokens, index)
            tag = implied if implied and _has_pos(word, implied) else guess_pos(word)
        if tag:
            tags[word] = tag
    return tags


def ipm_for_text(
    text: str,
    query_id: str,
    domain: str = "annotation",
    *,
    max_values: int = DEFAULT_MAX_VALUES,
    senses: int = DEFAULT_SENSES,
    lists: SynonymLists | None = None,
    fixed: Sequence[str] = (),
) -> QueryIPM:
    """The IPM of a free question (no template): POS guessed per word from WordNet."""
    lists = lists or load_synonym_lists(domain)
    words = [t for t in tokenize(text) if t[:1].isalnum()]
    pos = {}
    for word in words:
        if word.lower() in lists.stopwords or word in fixed:
            continue
        tag = guess_pos(word)
        if tag:
            pos[word] = tag
    template = Template(
        id="q", texts={"": text.replace("{", "{{").replace("}", "}}")}, pos=pos, fixed=tuple(fixed)
    )
    pieces: list[str] = []
    slots: list[int | None] = []
    parameters: list[Parameter] = []
    for token in tokenize(text):
        if token[:1].isalnum() or token[:1] == "_":
            param = _word_values(token, template, lists, max_values, senses)
            slots.append(len(parameters))
            parameters.append(
                Parameter(
                    f"w{len(parameters) + 1}:{token}",
                    token,
                    param.kind,
                    param.values,
                    param.sources,
                    param.pos,
                )
            )
        else:
            slots.append(None)
        pieces.append(token)
    return QueryIPM(query_id, "q", tuple(pieces), tuple(slots), tuple(parameters))
