"""Find seed entities by name: Wikidata's entity search online, fuzzy matching offline.

`search_entities("ireland")` asks the wbsearchentities API (httpx) when `online`; when that
is off, unreachable or answers nonsense, it falls back to rapidfuzz matching over the labels
and aliases of the bundled sample KGs and of the KGs built before (kept in the cache). The
explorer's entity picker calls this same function.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import httpx
from rapidfuzz import fuzz, process

from kontest_tui.errors import KontestError

from .cache import built_kgs_dir
from .names import normalise_name
from .sparql import validate_lang
from .sparql_client import default_user_agent

WIKIDATA_API = "https://www.wikidata.org/w/api.php"
MAX_LIMIT = 50
_MIN_SCORE = 60.0


@dataclass(frozen=True, slots=True)
class EntityMatch:
    """One candidate: its id (a QID online), label, a short description and where it came from."""

    id: str
    label: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    source: str = "wikidata"
    score: float = 100.0


def search_entities(
    text: str,
    *,
    online: bool = True,
    api_url: str | None = None,
    limit: int = 10,
    lang: str = "en",
    timeout: float = 10.0,
) -> list[EntityMatch]:
    """Entities whose label or alias matches `text`, best first (at most `limit`)."""
    query = " ".join(str(text).split())
    if not query:
        return []
    limit = max(1, min(int(limit), MAX_LIMIT))
    lang = validate_lang(lang)
    if online:
        found = search_online(
            query, api_url=api_url or WIKIDATA_API, limit=limit, lang=lang, timeout=timeout
        )
        if found is not None:
            return found
    return search_offline(query, limit=limit)


def search_online(
    query: str,
    *,
    api_url: str = WIKIDATA_API,
    limit: int = 10,
    lang: str = "en",
    timeout: float = 10.0,
) -> list[EntityMatch] | None:
    """Matches from the wbsearchentities API, or None when it is unreachable or unusable."""
    params = {
        "action": "wbsearchentities",
        "search": query,
        "language": lang,
        "uselang": lang,
        "type": "item",
        "limit": str(limit),
        "format": "json",
    }
    try:
        response = httpx.get(
            api_url, params=params, timeout=timeout, headers={"User-Agent": default_user_agent()}
        )
        response.raise_for_status()
        hits = response.json()["search"]
        return [
            EntityMatch(
                id=str(hit["id"]),
                label=str(hit.get("label") or hit["id"]),
                description=str(hit.get("description", "")),
                aliases=tuple(str(alias) for alias in hit.get("aliases", []) or []),
            )
            for hit in hits[:limit]
        ]
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError):
        return None


@dataclass(frozen=True, slots=True)
class _Entry:
    id: str
    label: str
    aliases: tuple[str, ...]
    description: str
    source: str


_INDEX_CACHE: dict[tuple[str, float, int], list[_Entry]] = {}


def _graph_files() -> list[tuple[Path, str]]:
    from .io import list_samples, sample_path

    files = [(sample_path(name), f"sample:{name}") for name in list_samples()]
    folder = built_kgs_dir()
    files += [(path, f"built:{path.stem}") for path in sorted(folder.glob("*.json"))]
    return files


def _entries_of(path: Path, source: str) -> list[_Entry]:
    from .io import load_graph

    try:
        stat = os.stat(path)
    except OSError:
        return []
    key = (str(path), stat.st_mtime, stat.st_size)
    if key not in _INDEX_CACHE:
        try:
            kg = load_graph(path)
        except KontestError:
            return []
        _INDEX_CACHE[key] = [
            _Entry(
                node.id, node.label, node.aliases, f"{node.type or 'entity'} in {kg.name}", source
            )
            for node in kg.nodes.values()
        ]
    return _INDEX_CACHE[key]


def search_offline(query: str, *, limit: int = 10) -> list[EntityMatch]:
    """Fuzzy matches (rapidfuzz WRatio) over labels and aliases of sample and built KGs."""
    entries: list[_Entry] = []
    for path, source in _graph_files():
        entries.extend(_entries_of(path, source))
    names: list[str] = []
    owners: list[int] = []
    for index, entry in enumerate(entries):
        for name in (entry.label, *entry.aliases):
            names.append(name)
            owners.append(index)
    best: dict[str, tuple[float, int]] = {}
    hits = process.extract(
        query,
        names,
        scorer=fuzz.WRatio,
        processor=normalise_name,
        limit=None,
        score_cutoff=_MIN_SCORE,
    )
    for _name, score, position in hits:
        entry = entries[owners[position]]
        if entry.id not in best or score > best[entry.id][0]:
            best[entry.id] = (score, owners[position])
    ranked = sorted(
        best.values(),
        key=lambda item: (-item[0], entries[item[1]].label.casefold(), entries[item[1]].id),
    )
    return [
        EntityMatch(
            entry.id, entry.label, entry.description, entry.aliases, entry.source, round(score, 1)
        )
        for score, index in ranked[:limit]
        for entry in (entries[index],)
    ]
