"""Build a knowledge graph from Wikidata: seed entities + a domain + a depth -> KnowledgeGraph.

Breadth-first, one SPARQL query per depth level per chunk of at most 200 parents, then the
labels and aliases of all nodes in batched queries. Each node is visited once: when several
parents (or a cycle) lead to the same item, the first parent in build order wins (seeds
first, then parents in the order they were reached, children by QID number). So the result
is a tree per seed and two builds of the same data give identical graphs.

Safe on the Wikidata Query Service: a chunk whose query times out is split in halves (down
to single items) instead of being asked again; a single item that still times out is given
up and counted. Items without a label in the build language are left out with everything
below them (a question cannot name them; the KONTEST prototype dropped them too) and
counted. `build_with_summary` returns those counts with the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kontest_tui.errors import InvalidInputError, WikidataError

from .domains import Domain, Level, load_domain
from .graph import Edge, KnowledgeGraph, Node, printable
from .sparql import (
    build_children_query,
    build_labels_query,
    qid_from_iri,
    qid_number,
    validate_lang,
    validate_qid,
)
from .sparql_client import WIKIDATA_ENDPOINT, QueryTimeoutError, SparqlClient, is_blazegraph

CHUNK_SIZE = 200
LABEL_CHUNK_SIZE = 500
RESULT_LIMIT = 100_000
DEFAULT_MAX_NODES = 50_000
MAX_DEPTH = 10


class MaxNodesError(WikidataError):
    """The graph would have more nodes than the `max_nodes` guard allows."""

    title = "Too many nodes"


@dataclass(frozen=True, slots=True)
class BuildProgress:
    """Where a build is: phase ("children" or "labels"), level, items done/total, nodes so far."""

    phase: str
    level: int
    done: int
    total: int
    nodes: int


ProgressCallback = Callable[[BuildProgress], None]


@dataclass(frozen=True, slots=True)
class BuildResult:
    """A built graph and what the build left out.

    `unlabelled`: items without a label in the language, left out with the `dropped_below`
    items under them. `timed_out`: items whose query timed out even alone (a parent keeps its
    place but has no children; an item whose label query timed out is left out like an
    unlabelled one). `splits`: chunks split in halves after a timeout.
    """

    graph: KnowledgeGraph
    unlabelled: tuple[str, ...] = ()
    dropped_below: int = 0
    timed_out: tuple[str, ...] = ()
    splits: int = 0


@dataclass(slots=True)
class _Tally:
    timed_out: list[str] = field(default_factory=list)
    splits: int = 0


def build_graph(
    domain: Domain | str,
    seeds: Sequence[str],
    depth: int,
    **options: Any,
) -> KnowledgeGraph:
    """Build the KG of `seeds` down to `depth` edges following the domain's levels.

    The options are those of `build_with_summary`, which also says what was left out.
    """
    return build_with_summary(domain, seeds, depth, **options).graph


def build_with_summary(
    domain: Domain | str,
    seeds: Sequence[str],
    depth: int,
    *,
    endpoint: str = WIKIDATA_ENDPOINT,
    lang: str = "en",
    max_nodes: int = DEFAULT_MAX_NODES,
    refresh: bool = False,
    client: SparqlClient | None = None,
    progress: ProgressCallback | None = None,
    chunk_size: int = CHUNK_SIZE,
    label_chunk_size: int = LABEL_CHUNK_SIZE,
    result_limit: int = RESULT_LIMIT,
    name: str | None = None,
    optimizer_hint: bool | None = None,
) -> BuildResult:
    """Build the KG of `seeds` down to `depth` edges and count what was left out.

    `optimizer_hint` (default: only for Blazegraph endpoints, see `sparql`) adds Blazegraph's
    `hint:Query hint:optimizer "None"` to every query.
    """
    qids = _validate_seeds(seeds)
    lang = validate_lang(lang)
    _check_limits(depth, max_nodes, chunk_size)
    dom = domain if isinstance(domain, Domain) else load_domain(domain)
    if client is None:
        client = SparqlClient(endpoint, refresh=refresh)
    if len(qids) > max_nodes:
        raise MaxNodesError(_too_many(len(qids), max_nodes, 0))
    report = progress or (lambda _: None)
    hint = is_blazegraph(client.endpoint) if optimizer_hint is None else optimizer_hint
    tally = _Tally()

    types: dict[str, str] = {qid: dom.seed_type for qid in qids}
    edges: list[Edge] = []
    walk = _LevelWalk(client, tally, report, hint, chunk_size, result_limit, max_nodes)
    frontier = list(qids)
    for level_depth in range(1, depth + 1):
        level = dom.level(level_depth)
        if level is None or not frontier:
            break
        rank = {qid: index for index, qid in enumerate(frontier)}
        pairs = walk.children(level, level_depth, frontier, types)
        next_frontier: list[str] = []
        for parent, child in sorted(pairs, key=lambda pair: (rank[pair[0]], qid_number(pair[1]))):
            if child in types:
                continue
            types[child] = level.node_type(level_depth)
            edges.append(Edge(parent, child, level.relation))
            next_frontier.append(child)
        frontier = next_frontier

    def labels_query(part: list[str]) -> str:
        return build_labels_query(part, lang, result_limit, optimizer_hint=hint)

    children_timeouts = len(tally.timed_out)
    labels, aliases = _fetch_labels(
        client, list(types), labels_query, label_chunk_size, result_limit, report, tally
    )
    label_timeouts = set(tally.timed_out[children_timeouts:])
    unnamed = {qid for qid in types if qid not in labels}
    left_out = _with_descendants(unnamed, edges)
    nodes = {
        qid: Node(
            qid,
            printable(labels[qid]),
            tuple(sorted(map(printable, aliases.get(qid, set()) - {labels[qid]}))),
            kind,
        )
        for qid, kind in types.items()
        if qid not in left_out
    }
    kept_seeds = [qid for qid in qids if qid in nodes]
    if not kept_seeds:
        raise WikidataError(
            f"no seed has a label in {lang!r} ({', '.join(qids)}), so the graph would be empty; "
            "check the seeds or choose another --lang"
        )
    edges = [edge for edge in edges if edge.child in nodes]
    title = (
        name or f"{dom.name}: {', '.join(nodes[qid].label for qid in kept_seeds)} (depth {depth})"
    )
    built = max(client.fetched)[:10] if client.fetched else ""
    graph = KnowledgeGraph(
        name=title,
        domain=dom.name,
        nodes=nodes,
        edges=edges,
        source=f"wikidata:{client.endpoint}",
        built=built,
    )
    return BuildResult(
        graph=graph,
        unlabelled=tuple(qid for qid in types if qid in unnamed and qid not in label_timeouts),
        dropped_below=len(left_out) - len(unnamed),
        timed_out=tuple(dict.fromkeys(tally.timed_out)),
        splits=tally.splits,
    )


def _check_limits(depth: int, max_nodes: int, chunk_size: int) -> None:
    """The build's sizes, one readable line for the first out of range."""
    if not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise InvalidInputError(f"depth must be between 1 and {MAX_DEPTH}, got {depth!r}")
    if not isinstance(max_nodes, int) or max_nodes < 1:
        raise InvalidInputError(f"max-nodes must be a positive number, got {max_nodes!r}")
    if not 1 <= chunk_size <= CHUNK_SIZE:
        raise InvalidInputError(f"chunk size must be between 1 and {CHUNK_SIZE}, got {chunk_size}")


@dataclass(slots=True)
class _LevelWalk:
    """Asks one level's children of a frontier, chunk by chunk (halving a chunk that times
    out), told as progress; refuses a graph over `max_nodes`."""

    client: SparqlClient
    tally: _Tally
    report: ProgressCallback
    hint: bool
    chunk_size: int
    result_limit: int
    max_nodes: int

    def children(
        self, level: Level, level_depth: int, frontier: list[str], types: Mapping[str, str]
    ) -> set[tuple[str, str]]:
        """(parent, child) pairs of the frontier's parents at this level."""
        rank = set(frontier)
        pairs: set[tuple[str, str]] = set()
        pending: set[str] = set()
        self.report(BuildProgress("children", level_depth, 0, len(frontier), len(types)))

        def children_query(part: list[str]) -> str:
            return build_children_query(level, part, self.result_limit, optimizer_hint=self.hint)

        for start in range(0, len(frontier), self.chunk_size):
            chunk = frontier[start : start + self.chunk_size]
            rows = _select_splitting(
                self.client, chunk, children_query, self.result_limit, self.tally
            )
            for row in rows:
                parent = qid_from_iri(row.get("parent", ""))
                child = qid_from_iri(row.get("child", ""))
                if parent in rank and child is not None:
                    pairs.add((parent, child))
                    if child not in types:
                        pending.add(child)
            found = len(types) + len(pending)
            if found > self.max_nodes:
                raise MaxNodesError(_too_many(found, self.max_nodes, level_depth))
            done = min(start + self.chunk_size, len(frontier))
            self.report(BuildProgress("children", level_depth, done, len(frontier), found))
        return pairs


def _select_splitting(
    client: SparqlClient,
    items: list[str],
    make_query: Callable[[list[str]], str],
    limit: int,
    tally: _Tally,
) -> list[dict[str, str]]:
    """The rows of `make_query(items)`; on a timeout, the rows of its two halves (recursively).

    A single item that still times out is given up: it is recorded in `tally.timed_out` and
    contributes no rows. Nothing is asked twice (the client does not repeat a timed-out query).
    """
    try:
        rows = client.select(make_query(items))
    except QueryTimeoutError:
        if len(items) == 1:
            tally.timed_out.append(items[0])
            return []
        tally.splits += 1
        middle = (len(items) + 1) // 2
        first = _select_splitting(client, items[:middle], make_query, limit, tally)
        return first + _select_splitting(client, items[middle:], make_query, limit, tally)
    _check_limit(rows, limit)
    return rows


def _with_descendants(roots: set[str], edges: list[Edge]) -> set[str]:
    """`roots` and every item below one of them (edges run parent -> child, parents first)."""
    gone = set(roots)
    for edge in edges:  # edges are in build order, so a parent is settled before its children
        if edge.parent in gone:
            gone.add(edge.child)
    return gone


def _validate_seeds(seeds: Sequence[str]) -> list[str]:
    if isinstance(seeds, str):
        seeds = [seeds]
    qids: list[str] = []
    for seed in seeds:
        qid = validate_qid(seed)
        if qid not in qids:
            qids.append(qid)
    if not qids:
        raise InvalidInputError("at least one seed entity (a QID such as Q27) is required")
    return qids


def _fetch_labels(
    client: SparqlClient,
    items: list[str],
    make_query: Callable[[list[str]], str],
    chunk_size: int,
    limit: int,
    report: ProgressCallback,
    tally: _Tally,
) -> tuple[dict[str, str], dict[str, set[str]]]:
    labels: dict[str, str] = {}
    aliases: dict[str, set[str]] = {}
    wanted = set(items)
    for start in range(0, len(items), chunk_size):
        rows = _select_splitting(
            client, items[start : start + chunk_size], make_query, limit, tally
        )
        for row in rows:
            qid = qid_from_iri(row.get("item", ""))
            text = " ".join(row.get("text", "").split())
            if qid not in wanted or not text:
                continue
            if row.get("kind") == "label":
                # One label per language in Wikidata; keep the smallest for determinism if not.
                labels[qid] = min(labels.get(qid, text), text)
            elif row.get("kind") == "alias":
                aliases.setdefault(qid, set()).add(text)
        report(
            BuildProgress("labels", 0, min(start + chunk_size, len(items)), len(items), len(items))
        )
    return labels, aliases


def _check_limit(rows: list[dict[str, str]], limit: int) -> None:
    if len(rows) >= limit:
        raise WikidataError(
            f"a query returned {limit} rows, the result limit, so the graph would be incomplete; "
            "use fewer seeds, a lower depth or a smaller domain"
        )


def _too_many(count: int, max_nodes: int, level: int) -> str:
    where = f"at depth {level}" if level else "from the seeds alone"
    return (
        f"the graph would have at least {count} nodes {where}, more than --max-nodes {max_nodes}; "
        "lower --depth, use fewer seeds or raise --max-nodes"
    )
