"""A footer that rebuilds its keys only when the keys it shows change.

Textual's Footer queues a full recompose (a dozen FooterKey widgets mounted and styled)
for every bindings update; opening the results screen sends four (screen stack, focus,
resume) with the same keys each time, about 50 ms. This one coalesces updates into one
pending recompose and skips it when the shown keys (key, action, description, enabled,
tooltip) are those already on screen.
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """Footer that recomposes once per change of the keys it shows."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._recompose_pending = False
        self._shown: Hashable | None = None  # the keys of the last recompose

    def shown_keys(self) -> Hashable:
        """What the footer would show now (compose reads the same bindings)."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return (
            self.show_command_palette,
            tuple(
                (key, binding.action, binding.description, binding.group, enabled, tooltip)
                for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
                if binding.show or key == palette
            ),
        )

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_pending:
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
