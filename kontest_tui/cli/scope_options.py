"""`--entity NAME_OR_ID` (repeatable) for `kontest generate`, `kontest run` and `kontest kg info`.

With `--depth N` it keeps the subtrees of those entities down to N edges below each; the
depth is then used up by the scope, so paths and relations are taken on the scoped graph
with no further bound (`kg.scope.apply_scope`, the rule `run.api.resolve_spec` follows too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

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
