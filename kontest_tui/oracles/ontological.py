"""The ontological oracle (KONTEST Algorithms 2-3): the SUT's own yes-answers imply a fact.

Per template, the SUT graph has an edge parent -> child for every relation the SUT answered
YES to in its atomic conversation. A relation (a, c) with at least one node between a and c
on its path, whose own atomic answer is valid, is one test per template; it is an error when
the answer is NO while the yes-edges connect a to c through other nodes (a path of >= 2 edges).

Scopes: in per-path mode (relation ids "pN:PARENT>CHILD") every path is checked on its own
SUT graph, as the paper gave the checker the answers of one path at a time; with deduplicated
relations there is one graph over the whole session.

Partial runs: a test is counted once its own answer and the answers of every other relation
between nodes of its path (same scope and template) have arrived, so a counted verdict never
changes while the rest of the session streams in.

Two readings of which tests are valid (`rule`, ONTOLOGICAL_RULES): "paper" (the default) is
the paper's text (Sec. 3.2, Algorithm 2): a test is valid when its own answer is. "prototype"
is what the KONTEST prototype's error finder (errorFinder.py) also does: a test that is no
error is invalid as well when a chain of invalid answers (same scope and template) connects
its two nodes, as if the model's non-answers left the relation undecided. Only its valid-test
counts differ: an error stays an error (the prototype finds errors first). It gives the
paper's Table 10 ontological column where the text's reading does not (places Falcon: 267
valid tests, 269 by the text; every other recorded row the same under both).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation, Verdict
from kontest_tui.oracles.conversation_index import (
    RelationConversations,
    get_answer,
    index_conversations,
    ordered_templates,
)

if TYPE_CHECKING:  # networkx is imported where a graph is built (90 ms at start-up)
    import networkx as nx

_PER_PATH_ID = re.compile(r"p(\d+):")
PAPER_RULE, PROTOTYPE_RULE = "paper", "prototype"
ONTOLOGICAL_RULES = (PAPER_RULE, PROTOTYPE_RULE)  # see the module docstring


def relation_scope(relation: Relation) -> str:
    """The per-path scope "pN" when the id is exactly "pN:PARENT>CHILD", else "" (whole graph)."""
    match = _PER_PATH_ID.match(relation.id)
    if match and relation.id[match.end() :] == f"{relation.parent}>{relation.child}":
        return match.group(0)[:-1]
    return ""


def build_sut_graph(
    relations: Iterable[Relation],
    conversations: Iterable[Conversation],
    answers: Mapping[AnswerKey, Answer],
    template_id: str,
    *,
    index: Mapping[str, RelationConversations] | None = None,
) -> nx.DiGraph:
    """The SUT's knowledge graph under one template, for drawing and for the oracle.

    Nodes: every parent and child of the relations (attribute `answered`: how many of its
    relations have an answer). Edges: parent -> child for each relation answered YES, with
    `relation_ids` (several in per-path mode) and `conversation_ids`. `graph.graph` holds
    `template_id` and `answers` {relation id: Answer or None (not answered yet)}.
    """
    if index is None:
        index = index_conversations(conversations)
    import networkx as nx

    graph = nx.DiGraph(template_id=template_id)
    all_answers: dict[str, Answer | None] = {}
    for relation in relations:
        for node in (relation.parent, relation.child):
            if node not in graph:
                graph.add_node(node, answered=0)
        entry = index.get(relation.id)
        conversation = entry.atomic.get(template_id) if entry else None
        if conversation is None:
            continue
        answer = get_answer(answers, (conversation.id, 0))
        all_answers[relation.id] = answer
        if answer is None:
            continue
        graph.nodes[relation.parent]["answered"] += 1
        graph.nodes[relation.child]["answered"] += 1
        if answer == Answer.YES:
            if graph.has_edge(relation.parent, relation.child):
                data = graph.edges[relation.parent, relation.child]
                data["relation_ids"].append(relation.id)
                data["conversation_ids"].append(conversation.id)
            else:
                graph.add_edge(
                    relation.parent,
                    relation.child,
                    relation_ids=[relation.id],
                    conversation_ids=[conversation.id],
                    answer=Answer.YES,
                )
    graph.graph["answers"] = all_answers
    return graph


def find_ontological_verdicts(
    relations: Sequence[Relation],
    conversations: Iterable[Conversation],
    answers: Mapping[AnswerKey, Answer],
    *,
    index: Mapping[str, RelationConversations] | None = None,
    templates: Sequence[str] | None = None,
    planned: dict[str, int] | None = None,
    rule: str = PAPER_RULE,
) -> list[Verdict]:
    """Every ontological test that can run so far, per template (in template order).

    `planned`, when given, gets under "ontological" the number of tests the conversations
    allow (relations with a node in between, per template asked), answered or not. `rule`
    says which tests are valid (ONTOLOGICAL_RULES, the module docstring).
    """
    if rule not in ONTOLOGICAL_RULES:
        raise ValueError(f"unknown ontological rule {rule!r}")
    if index is None:
        index = index_conversations(conversations)
    if templates is None:
        templates = ordered_templates(index)
    scopes: dict[str, list[Relation]] = {}
    for relation in relations:
        scopes.setdefault(relation_scope(relation), []).append(relation)
    verdicts: list[Verdict] = []
    for template_id in templates:
        for scoped in scopes.values():
            found = _check_scope(scoped, index, answers, template_id, planned)
            if rule == PROTOTYPE_RULE:
                found = _without_undecided(scoped, index, answers, template_id, found)
            verdicts.extend(found)
    return verdicts


def _check_scope(
    relations: Sequence[Relation],
    index: Mapping[str, RelationConversations],
    answers: Mapping[AnswerKey, Answer],
    template_id: str,
    planned: dict[str, int] | None = None,
) -> list[Verdict]:
    """Algorithm 2 over one scope's SUT graph under one template.

    The graph is kept as plain parent/child dicts here (this runs on every live refresh);
    `build_sut_graph` gives the same yes-edges as a networkx DiGraph for views.
    """
    # (parent, child) -> (conversation id, answer or None); only relations asked under the template.
    asked: dict[tuple[str, str], tuple[str, Answer | None]] = {}
    parents_of: dict[str, set[str]] = {}  # SUT graph: child -> parents with a yes-edge
    tests: list[tuple[Relation, str, Answer]] = []
    possible = 0
    for relation in relations:
        entry = index.get(relation.id)
        if entry is None:
            continue
        conversation = entry.atomic.get(template_id)
        if conversation is None:
            continue
        answer = get_answer(answers, (conversation.id, 0))
        asked[(relation.parent, relation.child)] = (conversation.id, answer)
        if answer is _YES:
            parents_of.setdefault(relation.child, set()).add(relation.parent)
        if len(relation.path) > 2:
            possible += 1
            if answer is _YES or answer is _NO:
                tests.append((relation, conversation.id, answer))
    if planned is not None:
        planned["ontological"] = planned.get("ontological", 0) + possible
    verdicts: list[Verdict] = []
    for relation, conversation_id, answer in tests:
        if not _path_answered(relation.path, asked):
            continue  # an answer it depends on is still missing: not counted yet
        own_key: AnswerKey = (conversation_id, 0)
        parent, child = relation.parent, relation.child
        if answer is _YES:
            verdicts.append(
                Verdict(
                    "ontological",
                    relation.id,
                    template_id,
                    False,
                    (own_key,),
                    (answer,),
                    f"yes to {parent} -> {child}",
                )
            )
            continue
        path = find_indirect_path(parents_of, parent, child)
        if path is None:
            verdicts.append(
                Verdict(
                    "ontological",
                    relation.id,
                    template_id,
                    False,
                    (own_key,),
                    (answer,),
                    f"no to {parent} -> {child}, and no yes-path implies it",
                )
            )
            continue
        edge_keys = tuple((asked[(u, v)][0], 0) for u, v in zip(path, path[1:], strict=False))
        verdicts.append(
            Verdict(
                "ontological",
                relation.id,
                template_id,
                True,
                (own_key, *edge_keys),
                (_NO, *([_YES] * len(edge_keys))),
                f"missing edge {parent} -> {child} (answered no); {_PATH_MARK}" + " -> ".join(path),
            )
        )
    return verdicts


_YES, _NO = Answer.YES, Answer.NO


def _without_undecided(
    relations: Sequence[Relation],
    index: Mapping[str, RelationConversations],
    answers: Mapping[AnswerKey, Answer],
    template_id: str,
    verdicts: list[Verdict],
) -> list[Verdict]:
    """The prototype's rule: drop the tests that are no error and whose two nodes a chain
    of invalid answers (relations of the scope answered neither yes nor no) connects."""
    children_of: dict[str, set[str]] = {}  # the chains' graph: parent -> invalid-answer children
    for relation in relations:
        entry = index.get(relation.id)
        conversation = entry.atomic.get(template_id) if entry else None
        if conversation is None:
            continue
        answer = get_answer(answers, (conversation.id, 0))
        if answer is not None and answer is not _YES and answer is not _NO:
            children_of.setdefault(relation.parent, set()).add(relation.child)
    if not children_of:
        return verdicts
    ends = {relation.id: (relation.parent, relation.child) for relation in relations}
    return [
        verdict
        for verdict in verdicts
        if verdict.error or not _reaches(children_of, *ends[verdict.relation_id])
    ]


def _reaches(children_of: Mapping[str, Iterable[str]], start: str, end: str) -> bool:
    """True when edges of `children_of` lead from `start` to `end`."""
    seen, frontier = {start}, [start]
    while frontier:
        node = frontier.pop()
        for child in children_of.get(node, ()):
            if child == end:
                return True
            if child not in seen:
                seen.add(child)
                frontier.append(child)
    return False


def _path_answered(
    path: Sequence[str], asked: Mapping[tuple[str, str], tuple[str, Answer | None]]
) -> bool:
    """True when every relation between two nodes of `path` that was asked has an answer."""
    last = len(path) - 1
    for i in range(last):
        for j in range(i + 1, last + 1):
            if i == 0 and j == last:
                continue
            found = asked.get((path[i], path[j]))
            if found is not None and found[1] is None:
                return False
    return True


def find_indirect_path(
    parents_of: Mapping[Any, Iterable[Any]],
    parent: Any,
    child: Any,
    *,
    order: Callable[[Any], str] | None = None,
) -> list[Any] | None:
    """The shortest yes-path parent -> ... -> child with >= 2 edges, or None (ties: smallest
    node ids). `parents_of` maps a node to the nodes with a yes-edge into it. `order` gives
    a node's id when nodes are numbers standing for ids (oracles.streamed).

    A breadth-first walk backwards from the child: its SUT ancestors are few (they lie above
    it in the KG), so this stays cheap even when the parent has thousands of yes-children.
    """
    # next_hop[node] = the node after `node` on a shortest path node -> ... -> child.
    next_hop: dict[Any, Any] = {}
    frontier = [child]
    while frontier:
        following: list[Any] = []
        for node in frontier:
            for above in sorted(parents_of.get(node, ()), key=order):
                if above in next_hop or above == child:
                    continue
                if above == parent:
                    if node == child:
                        continue  # the direct edge itself does not count
                    path = [parent, node]
                    while path[-1] != child:
                        path.append(next_hop[path[-1]])
                    return path
                next_hop[above] = node
                following.append(above)
        frontier = following
    return None


_PATH_MARK = "implied by yes-path "


def error_path(verdict: Verdict) -> list[str]:
    """The node ids of an ontological error's indirect yes-path (parent first, child last);
    the missing direct edge is (path[0], path[-1]). Empty for any other verdict."""
    if verdict.oracle != "ontological" or not verdict.error or _PATH_MARK not in verdict.detail:
        return []
    return verdict.detail.split(_PATH_MARK, 1)[1].split(" -> ")
