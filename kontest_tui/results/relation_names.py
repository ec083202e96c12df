"""A stored session's relation named by a reader: its id (`norway.nordland>norway.nordland.grane`)
or its two ends' labels (`Nordland>Grane`, any case), as `kontest explain --relation` and
`kontest probe --session --relation` take it.

A name that fits no relation, or several (two nodes share a label), is refused in one line
that lists the closest relations (rapidfuzz over their labels) or the ones it fits, each with
its id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rapidfuzz import fuzz, process

from kontest_tui.domain.answers import clean_text
from kontest_tui.errors import InvalidInputError
from kontest_tui.kg.names import NodeNames, plain_label
from kontest_tui.results.evaluate import session_graph
from kontest_tui.store.database import Store
from kontest_tui.store.relations import RelationName

CLOSEST_SHOWN = 5  # relations an unknown or ambiguous name lists


def resolve_relation(store: Store, session_id: str, name: str) -> RelationName:
    """The session's relation `name` names: an id, or `PARENT>CHILD` where each
    side is an id, a label or the name the explorer shows (`Garnich (in Capellen)` where two
    nodes share a label: kg.names), case and spacing aside. The relation comes back with
    those shown names as its labels."""
    text = " ".join(name.split())
    if not text:
        raise InvalidInputError("--relation: empty relation; give PARENT>CHILD")
    relations = store.relations.names(session_id)
    names = NodeNames(session_graph(store, session_id)).names
    relations = [
        replace(
            relation,
            parent_label=names.get(relation.parent, relation.parent_label),
            child_label=names.get(relation.child, relation.child_label),
        )
        for relation in relations
    ]
    for relation in relations:
        if relation.id in (text, name.strip()):
            return relation
    found = _named(relations, text)
    if len(found) == 1:
        return found[0]
    if found:
        shown = "; ".join(describe(relation) for relation in found[:CLOSEST_SHOWN])
        more = f" and {len(found) - CLOSEST_SHOWN} more" if len(found) > CLOSEST_SHOWN else ""
        raise InvalidInputError(
            f"relation {clean_text(name)!r} names {len(found)} relations of session "
            f"{session_id}: {shown}{more}; give one as shown or by its id"
        )
    closest = closest_relations(relations, text)
    hint = f"; closest: {'; '.join(map(describe, closest))}" if closest else ""
    raise InvalidInputError(
        f"session {session_id} has no relation {clean_text(name)!r}{hint}"
        + ("" if ">" in text else " (a relation is PARENT>CHILD, ids or labels)")
    )


def describe(relation: RelationName) -> str:
    """`Nordland > Grane (norway.nordland>norway.nordland.grane)`."""
    return f"{label_of(relation)} ({relation.id})"


def label_of(relation: RelationName) -> str:
    """`Nordland > Grane`: the relation by its ends' labels."""
    return f"{clean_text(relation.parent_label)} > {clean_text(relation.child_label)}"


def closest_relations(
    relations: Sequence[RelationName], text: str, limit: int = CLOSEST_SHOWN
) -> list[RelationName]:
    """The relations whose `parent>child` labels are most like `text`, best first."""
    choices = {
        index: f"{relation.parent_label}>{relation.child_label}"
        for index, relation in enumerate(relations)
    }
    found = process.extract(text, choices, scorer=fuzz.WRatio, limit=limit)
    return [relations[index] for _label, _score, index in found]


def _named(relations: Sequence[RelationName], text: str) -> list[RelationName]:
    """The relations `text` names as PARENT>CHILD (each side an id or a label; a label with
    `>` in it is tried at each `>`): those named exactly, else those named in any case."""
    splits = [
        (text[:at].strip(), text[at + 1 :].strip()) for at, char in enumerate(text) if char == ">"
    ]
    for fold in (False, True):
        found = [
            relation
            for relation in relations
            if any(
                _names(relation.parent, relation.parent_label, parent, fold)
                and _names(relation.child, relation.child_label, child, fold)
                for parent, child in splits
            )
        ]
        if found:
            return found
    return []


def _names(node_id: str, name: str, side: str, fold: bool) -> bool:
    """Whether `side` is the node's id, its shown name or its plain label (the shown name
    without its "(in Parent)": kg.names.plain_label)."""
    if not side:
        return False
    name = " ".join(name.split())
    plain = plain_label(name)
    if fold:
        return side.casefold() in (node_id.casefold(), name.casefold(), plain.casefold())
    return side in (node_id, name, plain)
