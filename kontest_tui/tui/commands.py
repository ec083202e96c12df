"""The command palette provider: every action of the current screen and the app, by name.

Entries come from the Bindings (each with an id and a tooltip), so a new binding is in the
palette automatically and every entry calls an existing `action_*` method. Bindings the
screen turns off (`check_action` false, e.g. Kinds for a KONTEST-only session) are left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.actions import parse
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider


class KontestCommands(Provider):
    """Actions that fit the current screen (its bindings) plus the app-wide ones."""

    def iter_bindings(self) -> Iterator[tuple[object, Binding]]:
        screen = self.screen
        seen: set[str] = set()
        for owner in (screen, self.app):
            for binding in getattr(owner, "BINDINGS", []):
                if not isinstance(binding, Binding) or binding.id is None or binding.id in seen:
                    continue
                seen.add(binding.id)
                destination, name, parameters = parse(binding.action)
                check = getattr(owner, "check_action", None)
                if not destination and check is not None and check(name, parameters) is False:
                    continue
                yield owner, binding

    def command_text(self, binding: Binding) -> str:
        return binding.description or binding.action

    async def run_binding(self, owner: object, action: str) -> None:
        await self.app.run_action(action, owner)  # type: ignore[arg-type]

    async def discover(self) -> Hits:
        for owner, binding in self.iter_bindings():
            yield DiscoveryHit(
                self.command_text(binding),
                partial(self.run_binding, owner, binding.action),
                help=binding.tooltip or None,
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for owner, binding in self.iter_bindings():
            text = self.command_text(binding)
            score = matcher.match(f"{text} {binding.tooltip}")
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(text),
                    partial(self.run_binding, owner, binding.action),
                    help=binding.tooltip or None,
                )
