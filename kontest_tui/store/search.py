"""Find a node of a stored session's results by name: its label, an alias or its id.

`store.search` (`ResultSearch`): `find_nodes(session, text)` ranks the nodes of the results
tree (the derived `result_nodes` table, whose `search` column holds each node's label, aliases
and id normalised, one line each: store.rollups) against what was typed, best first:

1. the whole label, an alias or the id equal to the text,
2. a label or alias starting with it (a word of it starting with it next),
3. one holding it,
4. fuzzy matches (rapidfuzz WRatio at least FUZZY_CUTOFF: "grnae" finds Grane),

each tier by its fuzzy score, then in the graph's order. The fuzzy pass runs only when no
name or id holds the text (a name that holds it is a better answer than one that looks like
it). Each match carries the node's way down from a root, which the explorer opens to select
it. The names holding the text are found in one SQL pass (about 15 ms over the 37,000 nodes
of a 100,000-relation session); the fuzzy pass reads every name (about 60 ms there).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
        """The nodes matching `text`, best first (module docstring), at most `limit`. The
        nodes holding the text are found in SQL (one pass in C over the search column); only
        when none does are the names compared fuzzily, all of them."""
        query = normalise_name(text)
        raw_id = text.strip().casefold()
        if not query and not raw_id:
            return []
        rows = self._fetch(
            "SELECT node, search, preorder FROM result_nodes WHERE session = ?1"
            " AND (instr(search, ?2) > 0 OR instr(search, ?3) > 0)",
            (session_id, query or raw_id, raw_id or query),
        )
        best = self._tiers(rows, query, raw_id)
        if not best and query:
            rows = self._fetch(
                "SELECT node, search, preorder FROM result_nodes WHERE session = ?",
                (session_id,),
            )
            best = self._fuzzy(rows, query)
        ranked = sorted(best.items(), key=lambda item: (item[1][0], -item[1][1], rows[item[0]][2]))
        return self._matches(session_id, rows, ranked[: max(limit, 0)])

    @staticmethod
    def _tiers(
        rows: Sequence[Sequence[Any]], query: str, raw_id: str
    ) -> dict[int, tuple[int, float, int]]:
        """Row -> (tier, score, line number) of the rows holding the text somewhere."""
        best: dict[int, tuple[int, float, int]] = {}
        for index, row in enumerate(rows):
            found = row[1].split("\n")
            last = len(found) - 1
            if raw_id and found[last] == raw_id:
                best[index] = (EXACT, 100.0, last)
                continue
            for number, line in enumerate(found[:last]):
                tier = _tier(query, line) if query else None
                if tier is not None and (index not in best or tier < best[index][0]):
                    best[index] = (tier, 0.0, number)
            if index not in best and raw_id and found[last].startswith(raw_id):
                best[index] = (PREFIX, 0.0, last)
            elif index not in best and raw_id and raw_id in found[last]:
                best[index] = (HOLDS, 0.0, last)
        if query:  # within a tier, the closer name first
            for index, (tier, _score, number) in list(best.items()):
                line = rows[index][1].split("\n")[number]
                best[index] = (tier, float(fuzz.WRatio(query, line)), number)
        return best

    @staticmethod
    def _fuzzy(rows: Sequence[Sequence[Any]], query: str) -> dict[int, tuple[int, float, int]]:
        """Row -> (FUZZY, score, line number) of the names close to the text: each node's
        names compared at once (its label and aliases, one per line: WRatio finds the line
        that matches), then the line found for those kept."""
        names = [row[1].rpartition("\n")[0] for row in rows]
        best: dict[int, tuple[int, float, int]] = {}
        for _names, score, index in process.extract(
            query, names, scorer=fuzz.WRatio, processor=None, limit=None, score_cutoff=FUZZY_CUTOFF
        ):
            lines = names[index].split("\n")
            number = max(range(len(lines)), key=lambda n: fuzz.WRatio(query, lines[n]))
            best[index] = (FUZZY, float(score), number)
        return best

    def _matches(
        self,
        session_id: str,
        rows: Sequence[Sequence[Any]],
        ranked: Sequence[tuple[int, tuple[int, float, int]]],
    ) -> list[NodeMatch]:
        """The ranked rows as NodeMatches, their names and ways read by key."""
        nodes = [rows[index][0] for index, _ in ranked]
        shown: dict[str, tuple[str, str]] = {}
        for start in range(0, len(nodes), 500):
            part = nodes[start : start + 500]
            for node, name, way in self._fetch(
                "SELECT node, name, way FROM result_nodes WHERE session = ? AND node IN"
                f" ({', '.join('?' for _ in part)})",
                (session_id, *part),
            ):
                shown[node] = (name, way)
        matches = []
        for index, (tier, score, number) in ranked:
            node, search = rows[index][0], rows[index][1]
            found = search.split("\n")
            name, way = shown.get(node, (node, "[]"))
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
