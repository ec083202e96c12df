"""The KONTEST evaluation of a session streamed in chunks of relations, identical to `evaluate`.

A chunk holds some relations with all their conversations and answers (a session whose
conversations follow its relations' order: store.chunks.streamable). Per chunk, the metamorphic
verdicts (each compares answers of one relation: KONTEST Algorithm 4) are final and returned to
be stored at once; the counts (executions, valid, queries, refusals, planned tests, gap and
coverage) are per relation, so they add up. Only the ontological oracle (Algorithms 2-3, see
oracles.ontological) looks across relations: a NO to (a, c) is an error when yes-edges of *any*
relation connect a to c. So every chunk leaves a compact map of its atomic answers per scope,
template and (parent, child) pair (ints: node numbers, conversation row key and answer code),
and `ontological_verdicts` runs Algorithm 2 over it at the end, relation by relation in the
order of `find_ontological_verdicts` (template, scope, relation), with the same verdicts.

The clustered rates' sums (oracles.intervals) add up per chunk for the metamorphic oracles
(a relation's verdicts are in its chunk); the ontological and total rates need each
relation's counts over every template pass, kept in arrays by the relation's place in the
session (8 bytes per relation and array). A cluster is a fact (oracles.intervals.fact_of): in
per-path mode a fact's copies lie on several paths, in several chunks, so there its
metamorphic counts are kept per fact and every rate is summed per fact at the end.

Memory: the map (16 bytes per atomic conversation: two arrays, sorted within each scope when
first read; a dict of int objects was ~92 bytes, 184 MB at 1M relations and two templates),
the node names, the counts; never all relations, conversations, answers or verdicts at once.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation, Verdict
from kontest_tui.oracles.conversation_index import index_conversations, ordered_templates
from kontest_tui.oracles.coverage import compute_gap, gap_report
from kontest_tui.oracles.evaluate import (
    METAMORPHIC,
    ORACLES,
    Evaluation,
    count_executions,
    count_verdicts,
)
from kontest_tui.oracles.findings import Findings
from kontest_tui.oracles.intervals import TOTAL, ClusterTally, fact_of
from kontest_tui.oracles.metamorphic import find_metamorphic_verdicts
from kontest_tui.oracles.ontological import _PATH_MARK, find_indirect_path, relation_scope

# Answer codes in the map: missing (not answered yet or failed), yes, no, anything else.
_NONE, _YES_CODE, _NO_CODE, _OTHER = 0, 1, 2, 3
_CODES = {Answer.YES: _YES_CODE, Answer.NO: _NO_CODE}
_BITS = 32  # node numbers per field of a map key
_PAIR_MASK = (1 << (2 * _BITS)) - 1  # a key's (parent, child) part; above it, its scope


class NotStreamable(Exception):
    """The relations cannot be evaluated relation by relation (a (parent, child) pair twice
    in one scope, or a scope's relations not next to each other): evaluate them whole."""


class _AtomicMap:
    """One template's atomic answers, (scope, parent, child) key -> conversation key << 2 |
    answer code, in two arrays of 8 bytes an answer: the keys' (parent, child) parts and the
    values, added scope after scope, each scope's part sorted when the map is first read."""

    __slots__ = ("pairs", "sorted", "starts", "values")

    def __init__(self) -> None:
        self.pairs = array("Q")
        self.values = array("Q")
        self.starts = array("Q")  # where each scope's part begins
        self.sorted = True

    def add(self, key: int, value: int) -> None:
        scope = key >> (2 * _BITS)
        if scope + 1 < len(self.starts):
            raise NotStreamable("the relations of a scope are apart")
        while len(self.starts) <= scope:
            self.starts.append(len(self.pairs))
        self.pairs.append(key & _PAIR_MASK)
        self.values.append(value)
        self.sorted = False

    def _bounds(self, scope: int) -> tuple[int, int]:
        if scope >= len(self.starts):
            return 0, 0
        end = self.starts[scope + 1] if scope + 1 < len(self.starts) else len(self.pairs)
        return self.starts[scope], end

    def seal(self) -> None:
        """Sort each scope's part (NotStreamable when a pair is there twice)."""
        if self.sorted:
            return
        order: list[int] = []
        for scope in range(len(self.starts)):
            order.extend(sorted(range(*self._bounds(scope)), key=self.pairs.__getitem__))
        self.pairs = array("Q", map(self.pairs.__getitem__, order))
        self.values = array("Q", map(self.values.__getitem__, order))
        del order
        for scope in range(len(self.starts)):
            start, end = self._bounds(scope)
            pairs = self.pairs
            if any(pairs[i] == pairs[i - 1] for i in range(start + 1, end)):
                raise NotStreamable("a (parent, child) pair is asked twice in one scope")
        self.sorted = True

    def get(self, key: int) -> int | None:
        self.seal()
        start, end = self._bounds(key >> (2 * _BITS))
        pair = key & _PAIR_MASK
        at = bisect_left(self.pairs, pair, start, end)
        return self.values[at] if at < end and self.pairs[at] == pair else None

    def __getitem__(self, key: int) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def items(self) -> Iterator[tuple[int, int]]:
        self.seal()
        for scope in range(len(self.starts)):
            start, end = self._bounds(scope)
            base = scope << (2 * _BITS)
            for at in range(start, end):
                yield base | self.pairs[at], self.values[at]


class _YesGraph:
    """The yes-edges of every scope under one template, child << 32 | parent in one array,
    each scope's part sorted (8 bytes an edge; a dict of lists was ~70)."""

    __slots__ = ("edges", "starts")

    def __init__(self) -> None:
        self.edges = array("Q")
        self.starts = array("Q")  # where each scope's part begins

    def parents(self, scope: int, child: int) -> list[int]:
        if scope >= len(self.starts):
            return []
        end = self.starts[scope + 1] if scope + 1 < len(self.starts) else len(self.edges)
        low = bisect_left(self.edges, child << _BITS, self.starts[scope], end)
        high = bisect_left(self.edges, (child + 1) << _BITS, low, end)
        mask = (1 << _BITS) - 1
        return [edge & mask for edge in self.edges[low:high]]


@dataclass(slots=True)
class StreamedEvaluation:
    """The running totals of a session evaluated chunk by chunk (see the module docstring)."""

    session: str | None = None
    model: str | None = None
    relations: int = 0
    queries: int = 0
    executions: int = 0
    valid: int = 0
    invalid: int = 0
    planned_executions: int = 0
    refusals: int = 0
    tests: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ORACLES, 0))
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ORACLES, 0))
    planned_tests: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ORACLES, 0))
    templates: dict[str, None] = field(default_factory=dict)  # first appearance order
    missing: dict[str, int] = field(default_factory=dict)  # gap per template
    answered: dict[str, int] = field(default_factory=dict)
    pending_t: dict[str, int] = field(default_factory=dict)
    covered: int = 0
    intersection: int = 0
    pending: int = 0
    # The ontological map: template -> {scope/parent/child key: conversation key << 2 | code}.
    atomic: dict[str, _AtomicMap] = field(default_factory=dict)
    nodes: dict[str, int] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    scopes: dict[str, int] = field(default_factory=dict)
    _last_scope: str | None = None
    _parents: tuple[str | None, _YesGraph] = field(default_factory=lambda: (None, _YesGraph()))
    # The clustered rates: the metamorphic oracles' sums, and per relation (by its place in
    # the session) its metamorphic and ontological errors and tests.
    _tallies: dict[str, ClusterTally] = field(default_factory=dict)
    _metamorphic: tuple[array[int], array[int]] = field(
        default_factory=lambda: (array("I"), array("I"))
    )
    _ontological: tuple[array[int], array[int]] = field(
        default_factory=lambda: (array("I"), array("I"))
    )
    _onto_pass: tuple[str | None, int] = (None, 0)  # (template of this pass, next place)
    # The errors folded per relation (oracles.findings); its `doubts` (the graph's doubtful
    # nodes) set before the ontological verdicts are made, to flag the implied facts.
    findings: Findings = field(default_factory=Findings)
    # Per-path mode (None: not known yet): each place's fact number, and per metamorphic
    # oracle per fact number [errors, tests] (a fact's copies are in several chunks).
    _per_path: bool | None = None
    _facts: dict[str, int] = field(default_factory=dict)
    _fact_of_place: array[int] = field(default_factory=lambda: array("I"))
    _fact_cells: dict[str, dict[int, list[int]]] = field(default_factory=dict)

    def add_chunk(
        self,
        relations: Sequence[Relation],
        conversations: Sequence[Conversation],
        answers: Mapping[AnswerKey, Answer],
        conversation_keys: Mapping[str, int],
    ) -> list[Verdict]:
        """Count one chunk (its relations, their conversations in order, the answers so far)
        and return its metamorphic verdicts; `conversation_keys` maps each conversation id
        to its row key (what `ontological_verdicts` gives back to name a conversation)."""
        index = index_conversations(conversations)
        templates = ordered_templates(index)
        for template_id in templates:
            if template_id not in self.templates:
                self.templates[template_id] = None
                self.missing[template_id] = self.answered[template_id] = 0
                self.pending_t[template_id] = 0
        planned = dict.fromkeys(ORACLES, 0)
        verdicts = find_metamorphic_verdicts(conversations, answers, index=index, planned=planned)
        count_verdicts(verdicts, self.tests, self.errors)
        self.findings.add_metamorphic(verdicts)
        self._add_clusters(relations, verdicts)
        gap = compute_gap(relations, conversations, answers, index=index, templates=templates)
        for template_id, part in gap.per_template.items():
            self.missing[template_id] += part.missing
            self.answered[template_id] += part.answered
            self.pending_t[template_id] += part.pending
        self.covered += gap.covered
        self.intersection += gap.intersection
        self.pending += gap.pending
        queries, executions, valid, invalid, planned_turns = count_executions(
            conversations, answers
        )
        self.queries += queries
        self.executions += executions
        self.valid += valid
        self.invalid += invalid
        self.planned_executions += planned_turns
        self.relations += len(relations)
        for relation in relations:
            self._add_relation(relation, index, answers, conversation_keys, planned)
        for name, count in planned.items():
            self.planned_tests[name] = self.planned_tests.get(name, 0) + count
        return verdicts

    def _add_clusters(self, relations: Sequence[Relation], verdicts: Sequence[Verdict]) -> None:
        """The chunk's metamorphic verdicts in the clustered rates' sums (clusters = relations)."""
        per_oracle: dict[str, dict[str, list[int]]] = {}
        for verdict in verdicts:
            cell = per_oracle.setdefault(verdict.oracle, {}).setdefault(verdict.relation_id, [0, 0])
            cell[0] += verdict.error
            cell[1] += 1
        if relations:
            per_path = fact_of(relations[0].id) != relations[0].id
            if self._per_path is None:
                self._per_path = per_path
            elif self._per_path != per_path:
                raise NotStreamable("per-path and other relations in one session")
        if self._per_path:
            for relation in relations:
                fact = self._facts.setdefault(fact_of(relation.id), len(self._facts))
                self._fact_of_place.append(fact)
            for oracle, cells in per_oracle.items():
                by_fact = self._fact_cells.setdefault(oracle, {})
                for relation_id, (errors, tests) in cells.items():
                    cell = by_fact.setdefault(self._facts[fact_of(relation_id)], [0, 0])
                    cell[0] += errors
                    cell[1] += tests
        else:
            for oracle, cells in per_oracle.items():
                tally = self._tallies.setdefault(oracle, ClusterTally())
                for errors, tests in cells.values():
                    tally.add(errors, tests)
        errors_of, tests_of = self._metamorphic
        for relation in relations:
            errors = tests = 0
            for cells in per_oracle.values():
                found = cells.get(relation.id)
                if found is not None:
                    errors += found[0]
                    tests += found[1]
            errors_of.append(errors)
            tests_of.append(tests)
        self._ontological[0].extend(array("I", bytes(4 * len(relations))))
        self._ontological[1].extend(array("I", bytes(4 * len(relations))))

    def _node(self, name: str) -> int:
        number = self.nodes.get(name)
        if number is None:
            number = self.nodes[name] = len(self.names)
            self.names.append(name)
        return number

    def _key(self, scope: int, parent: int, child: int) -> int:
        return (((scope << _BITS) | parent) << _BITS) | child

    def _add_relation(
        self,
        relation: Relation,
        index: Mapping[str, object],
        answers: Mapping[AnswerKey, Answer],
        conversation_keys: Mapping[str, int],
        planned: dict[str, int],
    ) -> None:
        scope_name = relation_scope(relation)
        scope = self.scopes.get(scope_name)
        if scope is None:
            scope = self.scopes[scope_name] = len(self.scopes)
        elif scope_name != self._last_scope:
            raise NotStreamable(f"the relations of scope {scope_name or 'all'} are apart")
        self._last_scope = scope_name
        entry = index.get(relation.id)
        if entry is None:
            return
        key = self._key(scope, self._node(relation.parent), self._node(relation.child))
        for template_id, conversation in entry.atomic.items():  # type: ignore[attr-defined]
            answer = answers.get((conversation.id, 0))
            code = _NONE if answer is None else _CODES.get(answer, _OTHER)
            found = self.atomic.get(template_id)
            if found is None:
                found = self.atomic[template_id] = _AtomicMap()
            found.add(key, (conversation_keys[conversation.id] << 2) | code)
            if len(relation.path) > 2:
                planned["ontological"] += 1

    def seal(self) -> None:
        """Ready the map for `ontological_verdicts` once every chunk is added (it is sorted
        then); NotStreamable when a (parent, child) pair was asked twice in one scope."""
        for found in self.atomic.values():
            found.seal()

    def ontological_verdicts(
        self,
        template_id: str,
        relations: Sequence[Relation],
        conversation_ids: Callable[[Sequence[int]], Mapping[int, str]],
    ) -> list[Verdict]:
        """Algorithm 2 under one template over some relations; called with every relation of
        the session in order (in any number of pieces), template after template, it gives
        the verdicts `find_ontological_verdicts` gives, in its order (a template's map is
        dropped when the next template's pass begins). `conversation_ids` names
        conversations by their row keys."""
        found = self.atomic.get(template_id) or _AtomicMap()
        if self._parents[0] != template_id:
            if self._parents[0] is not None:  # that template's pass is over: its map goes
                self.atomic.pop(self._parents[0], None)
            self._parents = (None, _YesGraph())  # before the next graph is made, not after
            self._parents = (template_id, self._yes_parents(found))
        parents_of = self._parents[1]
        first = self._onto_pass[1] if self._onto_pass[0] == template_id else 0
        self._onto_pass = (template_id, first + len(relations))
        batch: list[tuple[Relation, int, int, int]] = []
        for relation in relations:
            scope = self.scopes.get(relation_scope(relation), 0)
            parent, child = self.nodes.get(relation.parent), self.nodes.get(relation.child)
            if parent is None or child is None or len(relation.path) <= 2:
                continue
            value = found.get(self._key(scope, parent, child))
            if value is None or value & 3 not in (_YES_CODE, _NO_CODE):
                continue
            if not self._path_answered(scope, relation.path, found):
                continue  # an answer it depends on is missing: not counted (as the oracle)
            batch.append((relation, scope, value >> 2, value & 3))
        verdicts = self._verdicts(template_id, batch, parents_of, found, conversation_ids)
        if verdicts:
            place = {relation.id: first + i for i, relation in enumerate(relations)}
            errors_of, tests_of = self._ontological
            for verdict in verdicts:
                errors_of[place[verdict.relation_id]] += verdict.error
                tests_of[place[verdict.relation_id]] += 1
        return verdicts

    @staticmethod
    def _yes_parents(found: _AtomicMap) -> _YesGraph:
        """The SUT graph of every scope under one template: scoped child -> yes-parents."""
        graph = _YesGraph()
        mask = (1 << _BITS) - 1
        for scope in range(len(found.starts)):
            start, end = found._bounds(scope)
            pairs, values = found.pairs, found.values
            edges = sorted(
                ((pairs[at] & mask) << _BITS) | (pairs[at] >> _BITS)  # child, then parent
                for at in range(start, end)
                if values[at] & 3 == _YES_CODE
            )
            graph.starts.append(len(graph.edges))
            graph.edges.extend(edges)
        return graph

    def _path_answered(self, scope: int, path: Sequence[str], found: _AtomicMap) -> bool:
        numbers = [self.nodes.get(node) for node in path]
        last = len(path) - 1
        for i in range(last):
            first = numbers[i]
            if first is None:
                continue
            for j in range(i + 1, last + 1):
                second = numbers[j]
                if second is None or (i == 0 and j == last):
                    continue
                value = found.get(self._key(scope, first, second))
                if value is not None and value & 3 == _NONE:
                    return False
        return True

    def _verdicts(
        self,
        template_id: str,
        batch: Sequence[tuple[Relation, int, int, int]],
        parents_of: _YesGraph,
        found: _AtomicMap,
        conversation_ids: Callable[[Sequence[int]], Mapping[int, str]],
    ) -> list[Verdict]:
        names = self.names
        paths: list[list[int] | None] = []
        needed: set[int] = set()
        for relation, scope, own, code in batch:
            needed.add(own)
            path = None
            if code == _NO_CODE:
                path = find_indirect_path(
                    _ScopedParents(parents_of, scope),  # type: ignore[arg-type]
                    self.nodes[relation.parent],
                    self.nodes[relation.child],
                    order=names.__getitem__,
                )
                if path is not None:
                    for u, v in zip(path, path[1:], strict=False):
                        needed.add(found[self._key(scope, u, v)] >> 2)
            paths.append(path)
        ids = conversation_ids(sorted(needed))
        verdicts: list[Verdict] = []
        for (relation, scope, own, code), path in zip(batch, paths, strict=True):
            own_key: AnswerKey = (ids[own], 0)
            parent, child = relation.parent, relation.child
            if code == _YES_CODE:
                verdicts.append(
                    Verdict(
                        "ontological",
                        relation.id,
                        template_id,
                        False,
                        (own_key,),
                        (Answer.YES,),
                        f"yes to {parent} -> {child}",
                    )
                )
            elif path is None:
                verdicts.append(
                    Verdict(
                        "ontological",
                        relation.id,
                        template_id,
                        False,
                        (own_key,),
                        (Answer.NO,),
                        f"no to {parent} -> {child}, and no yes-path implies it",
                    )
                )
            else:
                edge_keys = tuple(
                    (ids[found[self._key(scope, u, v)] >> 2], 0)
                    for u, v in zip(path, path[1:], strict=False)
                )
                verdicts.append(
                    Verdict(
                        "ontological",
                        relation.id,
                        template_id,
                        True,
                        (own_key, *edge_keys),
                        (Answer.NO, *([Answer.YES] * len(edge_keys))),
                        f"missing edge {parent} -> {child} (answered no); {_PATH_MARK}"
                        + " -> ".join(names[node] for node in path),
                    )
                )
        count_verdicts(verdicts, self.tests, self.errors)
        self.findings.add_implied(verdicts)
        return verdicts

    def evaluation(self) -> Evaluation:
        """The Evaluation of the whole session from the totals (its `verdicts` are empty:
        they are stored chunk by chunk; its `to_json()` is the whole session's report)."""
        total = self.relations
        templates = list(self.templates)
        gap = gap_report(
            total,
            templates,
            self.missing,
            self.answered,
            self.pending_t,
            intersection=self.intersection,
            covered=self.covered,
            pending=self.pending,
        )
        return Evaluation(
            session=self.session,
            model=self.model,
            relations=total,
            queries=self.queries,
            executions=self.executions,
            valid=self.valid,
            invalid=self.invalid,
            planned_executions=self.planned_executions,
            templates=templates,
            verdicts=[],
            tests=dict(self.tests),
            errors=dict(self.errors),
            planned_tests=dict(self.planned_tests),
            gap=gap,
            refusals=self.refusals,
            streamed=True,
            tallies=self._rate_tallies(),
            label_doubts=self.findings.doubts,
            findings=self.findings,
        )

    def _rate_tallies(self) -> dict[str, ClusterTally]:
        """Rate name -> its sums: the metamorphic oracles', the ontological one's and the
        total's (every KONTEST oracle), as a whole evaluation's `rate_tallies` gives them."""
        if self._per_path:
            return self._fact_tallies()
        tallies = {name: self._tallies[name] for name in ORACLES if name in self._tallies}
        cells = zip(*self._metamorphic, *self._ontological, strict=True)
        return _with_kontest_totals(tallies, cells)

    def _fact_tallies(self) -> dict[str, ClusterTally]:
        """`_rate_tallies` of a per-path session: every rate's counts summed per fact."""
        tallies: dict[str, ClusterTally] = {}
        for name in ORACLES:
            if name in self._fact_cells:
                tally = tallies[name] = ClusterTally()
                for errors, tests in self._fact_cells[name].values():
                    tally.add(errors, tests)
        per_fact: dict[int, list[int]] = {}
        for fact, meta_e, meta_t, onto_e, onto_t in zip(
            self._fact_of_place, *self._metamorphic, *self._ontological, strict=True
        ):
            cell = per_fact.setdefault(fact, [0, 0, 0, 0])
            cell[0] += meta_e
            cell[1] += meta_t
            cell[2] += onto_e
            cell[3] += onto_t
        return _with_kontest_totals(tallies, per_fact.values())


def _with_kontest_totals(
    tallies: dict[str, ClusterTally], cells: Iterable[Sequence[int]]
) -> dict[str, ClusterTally]:
    """`tallies` with the ontological, metamorphic and total rates' sums added, from one
    (metamorphic errors, tests, ontological errors, tests) cell per cluster (each rate only
    when it has tests)."""
    ontological, metamorphic, total = ClusterTally(), ClusterTally(), ClusterTally()
    for meta_e, meta_t, onto_e, onto_t in cells:
        ontological.add(onto_e, onto_t)
        metamorphic.add(meta_e, meta_t)
        total.add(meta_e + onto_e, meta_t + onto_t)
    if ontological.tests:
        tallies["ontological"] = ontological
    if metamorphic.tests:
        tallies[METAMORPHIC] = metamorphic
    if total.tests:
        tallies[TOTAL] = total
    return tallies


class _ScopedParents:
    """One scope's yes-graph as find_indirect_path reads it (node -> yes-parents)."""

    __slots__ = ("graph", "scope")

    def __init__(self, graph: _YesGraph, scope: int) -> None:
        self.graph = graph
        self.scope = scope

    def get(self, node: int, default: Sequence[int] = ()) -> Sequence[int]:
        return self.graph.parents(self.scope, node) or default
