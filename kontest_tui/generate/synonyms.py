"""Synonym sources for query variants: curated lists, user pins and bans, and WordNet lemmas.

Curated data lives in assets/synonyms/common.toml (stop words, blocklist of drifted senses)
and assets/synonyms/<domain>.toml (curated synonyms per word). The user's own file,
<config dir>/synonyms/<domain>.toml, holds `[synonyms]`, `[pins]` and `[bans]` tables
(word -> values) and is what the explorer edits through `pin_value` / `ban_value`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import cast

from rapidfuzz import fuzz

from kontest_tui.domain.answers import clean_text
from kontest_tui.errors import InvalidInputError
from kontest_tui.paths import config_dir
from kontest_tui.resources import asset_path
from kontest_tui.validate_input import loads_toml, read_input_text

# Two values this similar (rapidfuzz ratio, 0-100) count as one (Ireland / ireland / Irland).
NEAR_DUPLICATE = 88
TABLES = ("synonyms", "blocklist", "pins", "bans")
POS_TAGS = {"n", "v", "a", "r", "s"}


@dataclass
class SynonymLists:
    """Everything that decides a word's values, merged from assets and the user's file."""

    domain: str
    stopwords: frozenset[str] = frozenset()
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    blocklist: dict[str, list[str]] = field(default_factory=dict)
    pins: dict[str, list[str]] = field(default_factory=dict)
    bans: dict[str, list[str]] = field(default_factory=dict)

    def blocked(self, word: str) -> set[str]:
        """Values never offered for `word` from WordNet (its own and the global blocklist)."""
        return {
            v.lower() for v in self.blocklist.get(word.lower(), []) + self.blocklist.get("*", [])
        }

    def banned(self, word: str) -> set[str]:
        return {v.lower() for v in self.bans.get(word.lower(), [])}


def _read_toml(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    return loads_toml(read_input_text(path), f"{path}: cannot read synonyms")


def _merge(target: dict[str, list[str]], table: object, path: Path, name: str) -> None:
    if table is None:
        return
    if not isinstance(table, dict):
        raise InvalidInputError(f"{path}: [{name}] must be a table of word = [values]")
    for word, values in table.items():
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InvalidInputError(f"{path}: {name}.{word} must be a list of strings")
        merged = target.setdefault(" ".join(clean_text(word).lower().split()), [])
        # words that go into questions: no escapes, bidi overrides or zero-width characters
        cleaned = (" ".join(clean_text(value).split()) for value in values)
        merged.extend(v for v in dict.fromkeys(cleaned) if v and v not in merged)


def user_synonyms_path(domain: str) -> Path:
    """The user's editable synonyms file for a domain (may not exist yet)."""
    if not re.fullmatch(r"[\w-]+", domain):
        raise InvalidInputError(f"bad domain name {domain!r}")
    return config_dir() / "synonyms" / f"{domain}.toml"


def load_synonym_lists(domain: str, user_file: Path | None = None) -> SynonymLists:
    """Merge common.toml, <domain>.toml and the user's file (later files add values)."""
    lists = SynonymLists(domain)
    stopwords: set[str] = set()
    paths = [asset_path("synonyms", "common.toml"), asset_path("synonyms", f"{domain}.toml")]
    paths.append(user_file or user_synonyms_path(domain))
    for path in paths:
        data = _read_toml(path)
        words = data.get("stopwords", [])
        if not isinstance(words, list):
            raise InvalidInputError(f"{path}: stopwords must be a list")
        stopwords.update(str(w).lower() for w in words)
        for name in TABLES:
            _merge(getattr(lists, name), data.get(name), path, name)
    lists.stopwords = frozenset(stopwords)
    return lists


def _toml_key(word: str) -> str:
    return word if re.fullmatch(r"[A-Za-z0-9_-]+", word) else json.dumps(word, ensure_ascii=False)


def _write_user_file(path: Path, data: dict[str, object]) -> None:
    lines = ["# Your synonym choices for this domain (kontest explorer; editable by hand).", ""]
    for name in ("synonyms", "pins", "bans", "blocklist"):
        table = data.get(name) or {}
        lines.append(f"[{name}]")
        for word, values in sorted(cast("dict[str, list[str]]", table).items()):
            rendered = ", ".join(json.dumps(v, ensure_ascii=False) for v in values)
            lines.append(f"{_toml_key(word)} = [{rendered}]")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def _edit_user_file(domain: str, table: str, word: str, value: str, add: bool) -> Path:
    path = user_synonyms_path(domain)
    data = _read_toml(path)
    entries: dict[str, list[str]] = {}
    _merge(entries, data.get(table), path, table)
    values = entries.setdefault(word.lower(), [])
    if add and value not in values:
        values.append(value)
    elif not add and value in values:
        values.remove(value)
    if not values:
        del entries[word.lower()]
    data[table] = entries
    _write_user_file(path, data)
    return path


def pin_value(domain: str, word: str, value: str) -> Path:
    """Always offer `value` for `word` (right after the original); removes a ban on it."""
    _edit_user_file(domain, "bans", word, value, add=False)
    return _edit_user_file(domain, "pins", word, value, add=True)


def ban_value(domain: str, word: str, value: str) -> Path:
    """Never offer `value` for `word` (from any source); removes a pin on it."""
    _edit_user_file(domain, "pins", word, value, add=False)
    return _edit_user_file(domain, "bans", word, value, add=True)


def unpin_value(domain: str, word: str, value: str) -> Path:
    """Take a pin back: `value` is offered for `word` only if another source has it."""
    return _edit_user_file(domain, "pins", word, value, add=False)


def unban_value(domain: str, word: str, value: str) -> Path:
    """Take a ban back: `value` may be offered for `word` again."""
    return _edit_user_file(domain, "bans", word, value, add=False)


@dataclass(frozen=True, slots=True)
class SynonymChoice:
    """One pin or ban of the user's file: `kind` is "pin" or "ban"."""

    kind: str
    word: str
    value: str


def list_user_choices(domain: str) -> list[SynonymChoice]:
    """The user's pins then bans for a domain, by word (what `undo_choice` takes back)."""
    path = user_synonyms_path(domain)
    data = _read_toml(path)
    found: list[SynonymChoice] = []
    for table, kind in (("pins", "pin"), ("bans", "ban")):
        entries: dict[str, list[str]] = {}
        _merge(entries, data.get(table), path, table)
        found += [
            SynonymChoice(kind, word, value)
            for word, values in sorted(entries.items())
            for value in values
        ]
    return found


def undo_choice(domain: str, choice: SynonymChoice) -> Path:
    """Take back one pin or ban."""
    if choice.kind == "pin":
        return unpin_value(domain, choice.word, choice.value)
    return unban_value(domain, choice.word, choice.value)


def _inflect(lemma: str, word: str, base: str) -> str | None:
    """Give `lemma` the regular inflection that turns `base` into `word` (None if irregular)."""
    if word == base:
        return lemma
    suffix = word[len(base) :] if word.startswith(base) else None
    # unify -> unifies / unified, but obey -> obeys / obeyed
    consonant_y = len(lemma) > 1 and lemma.endswith("y") and lemma[-2] not in "aeiou"
    if suffix in ("s", "es"):
        if consonant_y:
            return lemma[:-1] + "ies"
        return lemma + ("es" if lemma.endswith(("s", "x", "z", "ch", "sh")) else "s")
    if suffix in ("d", "ed"):
        if consonant_y:
            return lemma[:-1] + "ied"
        return lemma + ("d" if lemma.endswith("e") else "ed")
    if suffix == "ing":
        return (lemma[:-1] if lemma.endswith("e") else lemma) + "ing"
    return None


@lru_cache(maxsize=4096)
def wordnet_synonyms(word: str, pos: str, senses: int = 1) -> tuple[str, ...]:
    """Single-word lemmas of the first `senses` WordNet senses of `word` (same inflection).

    Multi-word lemmas ("capital letter", "have got") are dropped: they drift in meaning and
    break the sentence. Words whose inflection is irregular get no WordNet synonyms.
    """
    from kontest_tui.generate.wordnet_data import wordnet_reader

    if pos not in POS_TAGS:
        raise InvalidInputError(f"unknown part of speech {pos!r} for {word!r} (use n, v, a, r)")
    lower = word.lower()
    with wordnet_reader() as wordnet:
        base = wordnet.morphy(lower, pos) or lower
        senses_found = [synset.lemma_names() for synset in wordnet.synsets(base, pos)[:senses]]
    out: list[str] = []
    for lemma_names in senses_found:
        for lemma in lemma_names:
            if "_" in lemma or "-" in lemma or lemma.lower() == base:
                continue
            inflected = _inflect(lemma.lower(), lower, base)
            if inflected and inflected not in out and inflected != lower:
                out.append(inflected)
    return tuple(out)


def is_near_duplicate(value: str, others: Iterable[str]) -> bool:
    """Whether `value` is (almost) the same string as one of `others`, ignoring case."""
    low = value.lower()
    return any(fuzz.ratio(low, other.lower()) >= NEAR_DUPLICATE for other in others)


def choose_values(
    original: str,
    pinned: Sequence[str],
    candidates: Sequence[tuple[str, str]],
    banned: Iterable[str],
    limit: int,
) -> tuple[list[str], list[str]]:
    """The original first, then pins, then (value, source) candidates, to at most `limit` values.

    Banned values and near-duplicates of values already chosen are skipped (pins are kept
    unless banned). Returns (values, source of each: "original", "pinned" or the candidate's).
    """
    banned_set = {b.lower() for b in banned}
    values, sources = [original], ["original"]
    for value in pinned:
        if value.lower() not in banned_set and value.lower() not in {v.lower() for v in values}:
            values.append(value)
            sources.append("pinned")
    for value, source in candidates:
        if len(values) >= max(limit, 1):
            break
        if value.lower() in banned_set or is_near_duplicate(value, values):
            continue
        values.append(value)
        sources.append(source)
    return values, sources
