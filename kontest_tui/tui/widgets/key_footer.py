"""A footer that shows as many keys as fit, and rebuilds only when the keys it shows change.

Textual's Footer queues a full recompose (a dozen FooterKey widgets mounted and styled)
for every bindings update; opening the results screen sends four (screen stack, focus,
resume) with the same keys each time, about 50 ms. This one coalesces updates into one
pending recompose and skips it when the shown keys (key, action, description, enabled,
tooltip) are those already on screen.

It also fits the keys to its width instead of letting the last ones fall off the edge (help
did, at 80 columns): when they do not all fit, it draws them compact (less padding), then
leaves out the keys the screen names in `FOOTER_DROPS`, first named first, then the screen's
other keys from the last one, until the rest fit. The app's keys (quit, help) are always
shown. A resize fits them again.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

Shown = tuple[Binding, bool, str]  # a binding, whether it is enabled, its tooltip


class KeyFooter(Footer):
    """Footer that fits its keys to its width and recomposes once per change of them."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._recompose_pending = False
        self._shown: Hashable | None = None  # the keys of the last recompose

    def candidate_keys(self) -> list[Shown]:
        """Every key the screen shows now, one per action (the first key bound to it)."""
        found: dict[str, Shown] = {}
        self._app_keys: set[int] = set()  # the bindings of the app itself (never left out)
        for node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show and binding.action not in found:
                found[binding.action] = (binding, enabled, tooltip)
                if node is self.app:
                    self._app_keys.add(id(binding))
        return list(found.values())

    def key_width(self, binding: Binding, compact: bool) -> int:
        """The columns a key takes: ` k Description ` (compact: `k Description` and a gap)."""
        key = cell_len(self.app.get_key_display(binding))
        description = cell_len(binding.description)
        return key + 1 + description + 1 if compact else key + 2 + description + 1

    def palette_key(self) -> Binding | None:
        """The command palette's key when the footer shows it (docked right)."""
        if not (self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE):
            return None
        found = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        return found[1] if found is not None else None

    def palette_width(self) -> int:
        """The columns the palette's key takes (its key, its border and padding)."""
        binding = self.palette_key()
        return self.key_width(binding, False) + 2 if binding is not None else 0

    def fitted_keys(self) -> tuple[bool, list[Shown]]:
        """Whether to draw compact, and the keys that fit (module docstring)."""
        keys = self.candidate_keys()
        width = (self.size.width or self.app.size.width) - self.palette_width()
        if sum(self.key_width(binding, False) for binding, *_ in keys) <= width:
            return False, keys
        drops: tuple[str, ...] = getattr(self.screen, "FOOTER_DROPS", ())
        order = {binding_id: index for index, binding_id in enumerate(drops)}
        named = sorted(
            (shown[0] for shown in keys if shown[0].id in order),
            key=lambda binding: order[binding.id or ""],
        )
        others = [
            shown[0]
            for shown in reversed(keys)
            if shown[0].id not in order and id(shown[0]) not in self._app_keys
        ]
        kept = list(keys)
        for binding in [*named, *others]:
            if sum(self.key_width(shown[0], True) for shown in kept) <= width:
                break
            kept = [shown for shown in kept if shown[0] is not binding]
        return True, kept

    def shown_keys(self) -> Hashable:
        """What the footer would show now (compose draws the same keys)."""
        compact, keys = self.fitted_keys()
        return (
            self.show_command_palette,
            compact,
            tuple(
                (binding.key, binding.action, binding.description, enabled, tooltip)
                for binding, enabled, tooltip in keys
            ),
        )

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        compact, keys = self.fitted_keys()
        self.compact = compact
        yield from self._footer_keys(keys)
        binding = self.palette_key()
        if binding is not None:
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                classes="-command-palette",
                tooltip=binding.tooltip or binding.description,
            )

    def _footer_keys(self, keys: list[Shown]) -> Iterator[FooterKey]:
        for binding, enabled, tooltip in keys:
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_pending:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_if_changed)

    def on_resize(self) -> None:
        if self._bindings_ready and not self._recompose_pending:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._recompose_pending = False  # updates from here on schedule another check
        if not self.is_attached:
            return
        shown = self.shown_keys()
        if shown == self._shown:
            return
        self._shown = shown
        await self.recompose()
