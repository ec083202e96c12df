"""Find a node of a stored session's results by name: its label, an alias or its id.

`store.search` (`ResultSearch`): `find_nodes(session, text)` ranks the nodes of the results
tree (the derived `result_nodes` table, whose `search` column holds each node's label, aliases
and id normalised, one line each: store.rollups) against what was typed, best first:

1. the whole label, an alias or the id equal to the text,
2. a label or alias starting with it (a word of it starting with it next),
3. one holding it,
4. fuzzy matches (rapidfuzz WRatio at least FUZZY_CUTOFF: "grnae" finds Grane),

each tier by its fuzzy score, then in the graph's order. Each match carries the node's way
down from a root, which the explorer opens to select it. One read of the session's nodes
(about 40 ms at 37,000 nodes, a 100,000-relation session), no Python-side copy kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from kontest_tui.kg.names import normalise_name

from .repository import Repository

FUZZY_CUTOFF = 80.0  # WRatio below this is not a match (a typo or two in a short name is)
EXACT, PREFIX, WORD_PREFIX, HOLDS, FUZZY = range(5)
MATCH_TIERS = ("exact", "prefix", "word", "holds", "fuzzy")


@dataclass(frozen=True, slots=True)
class NodeMatch:
    """A node found by name: how it matched (`tier`, MATCH_TIERS) and the text it matched."""

    node: str
    name: str  # the display name (store.tree's)
    way: tuple[str, ...]  # node ids from a root down to it
    matched: str  # the normalised label, alias or id that matched
    field: str  # "label", "alias" or "id"
    tier: int
    score: float


def _tier(query: str, line: str) -> int | None:
    if line == query:
        return EXACT
    if line.startswith(query):
        return PREFIX
    if f" {query}" in f" {line}":
        return WORD_PREFIX
    if query in line:
        return HOLDS
    return None


class ResultSearch(Repository):
    """Nodes of stored sessions' results found by label, alias or id."""

    def find_nodes(self, session_id: str, text: str, *, limit: int = 200) -> list[NodeMatch]:
        """The nodes matching `text`, best first (module docstring), at most `limit`."""
        query = normalise_name(text)
        raw_id = text.strip().casefold()
        if not query and not raw_id:
            return []
        rows = self._fetch(
            "SELECT node, name, search, preorder, way FROM result_nodes WHERE session = ?",
            (session_id,),
        )
        lines: list[str] = []  # labels and aliases, fuzzy-matched
        owners: list[tuple[int, int]] = []  # (row, line number) of each line
        best: dict[int, tuple[int, float, int]] = {}  # row -> (tier, score, line number)
        for index, row in enumerate(rows):
            found = row[2].split("\n")
            node_id = found[-1]
            if raw_id and node_id == raw_id:
                best[index] = (EXACT, 100.0, len(found) - 1)
                continue
            for number, line in enumerate(found[:-1]):
                lines.append(line)
                owners.append((index, number))
                tier = _tier(query, line) if query else None
                if tier is not None and (index not in best or tier < best[index][0]):
                    best[index] = (tier, 0.0, number)
            if index not in best and raw_id and node_id.startswith(raw_id):
                best[index] = (PREFIX, 0.0, len(found) - 1)
        if query:
            for _line, score, position in process.extract(
                query,
                lines,
                scorer=fuzz.WRatio,
                processor=None,
                limit=None,
                score_cutoff=FUZZY_CUTOFF,
            ):
                index, number = owners[position]
                tier, old, old_number = best.get(index, (FUZZY, 0.0, number))
                if score > old:
                    best[index] = (tier, float(score), number if tier == FUZZY else old_number)
        ranked = sorted(best.items(), key=lambda item: (item[1][0], -item[1][1], rows[item[0]][3]))
        matches = []
        for index, (tier, score, number) in ranked[: max(limit, 0)]:
            node, name, search, _preorder, way = rows[index]
            found = search.split("\n")
            field = "id" if number == len(found) - 1 else "label" if number == 0 else "alias"
            matches.append(
                NodeMatch(
                    node=node,
                    name=name,
                    way=tuple(json.loads(way)),
                    matched=found[number],
                    field=field,
                    tier=tier,
                    score=round(score, 1),
                )
            )
        return matches
