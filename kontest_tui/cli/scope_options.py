"""`--entity NAME_OR_ID` (repeatable) for `kontest generate`, `kontest run` and `kontest kg info`.

With `--depth N` it keeps the subtrees of those entities down to N edges below each
(`kg.scope.scope_graph`); the depth is then used up by the scope, so paths and relations
are taken on the scoped graph with no further bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from kontest_tui.kg.graph import KnowledgeGraph

F = TypeVar("F", bound=Callable[..., object])


def entity_option(command: F) -> F:
    """Add `--entity` (repeatable) to a click command, as the `entities` parameter."""
    return click.option(
        "--entity",
        "entities",
        multiple=True,
        metavar="NAME_OR_ID",
        help="Keep only this entity's subtree, down to --depth below it (id or exact label; "
        "repeat for several).",
    )(command)


def apply_scope(
    kg: KnowledgeGraph, entities: Sequence[str], depth: int | None
) -> tuple[KnowledgeGraph, int | None]:
    """The scoped KG and the depth left for paths (None once the scope used it)."""
    if not entities:
        return kg, depth
    from kontest_tui.kg.scope import scope_graph  # rapidfuzz: only when a scope is asked for

    return scope_graph(kg, entities, depth), None
