"""The command palette's providers: every action of the current screen and the app, by name and
key; and, on the results, "go to" a node by label or id.

Entries come from the Bindings (each with an id and a tooltip), so a new binding is in the
palette automatically and every entry calls an existing `action_*` method; each names its
keys once (`Next error  n`). Bindings the screen turns off (`check_action` false, e.g. Kinds
for a KONTEST-only session) are left out. Textual's own system commands that repeat one of
the app's (Quit) are left out by the app (`KontestApp.get_system_commands`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from typing import Protocol

from textual.actions import parse
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from kontest_tui.store.search import FUZZY, MATCH_TIERS, NodeMatch

GO_TO_LEAST = 2  # characters typed before the palette looks for nodes
GO_TO_WEIGHT = 2.0  # a node found by its name's start or inside, against the commands


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

    def keys_of(self, binding: Binding) -> str:
        """The binding's keys as the footer shows them (`f1 / ?`)."""
        keys = [key.strip() for key in binding.key.split(",") if key.strip()]
        shown = [self.app.get_key_display(replace(binding, key=key)) for key in keys]
        return " / ".join(dict.fromkeys(shown))

    def command_text(self, binding: Binding) -> str:
        return binding.description or binding.action

    def command_line(self, binding: Binding, text: Content | None = None) -> Content:
        """The entry: the command, then its keys dimmed."""
        line = text if text is not None else Content(self.command_text(binding))
        return line + Content.styled(f"  {self.keys_of(binding)}", "dim")

    async def run_binding(self, owner: object, action: str) -> None:
        await self.app.run_action(action, owner)  # type: ignore[arg-type]

    async def discover(self) -> Hits:
        for owner, binding in self.iter_bindings():
            yield DiscoveryHit(
                self.command_line(binding),
                partial(self.run_binding, owner, binding.action),
                text=self.command_text(binding),
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
                    self.command_line(binding, matcher.highlight(text)),
                    partial(self.run_binding, owner, binding.action),
                    text=text,
                    help=binding.tooltip or None,
                )


class NodeFinder(Protocol):
    """A screen whose nodes can be found and gone to (the results)."""

    def find_nodes_now(self, text: str) -> list[NodeMatch]: ...

    def go_to(self, match: NodeMatch) -> None: ...


class GoToProvider(Provider):
    """ "Go to" a node of the results by label, alias or id: the nodes the results' find
    matches (store.search, in a thread), best first; choosing one selects it in the graph."""

    async def search(self, query: str) -> Hits:
        screen = self.screen
        text = query.strip()
        if len(text) < GO_TO_LEAST or not hasattr(screen, "find_nodes_now"):
            return
        finder: NodeFinder = screen  # type: ignore[assignment]
        matches = await asyncio.to_thread(finder.find_nodes_now, text)
        matcher = self.matcher(text)
        for rank, match in enumerate(matches[:20]):
            how = "" if match.field == "label" else f" ({match.field} {match.matched})"
            title = f"Go to {match.name}{how}"
            # Ranked with the commands by the palette's own matcher, a name the find matched
            # by its start or inside weighing more than a fuzzy one (or a command's tooltip).
            weight = GO_TO_WEIGHT if match.tier < FUZZY else 1.0
            yield Hit(
                max(matcher.match(f"{match.name} {match.matched}"), 1.0) * weight - 0.001 * rank,
                Content(title),
                partial(finder.go_to, match),
                text=title,
                help=f"{MATCH_TIERS[match.tier]} match · {len(match.way)} level(s) down",
            )
