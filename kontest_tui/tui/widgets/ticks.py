"""Tick boxes whose state shows by more than colour: a ticked box holds ✔, an unticked one is
empty. Textual's Checkbox and SelectionList draw the same X in both states and change only
its colour, which a colour-blind reader or a monochrome terminal cannot tell apart."""

from __future__ import annotations

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.widgets import Checkbox, SelectionList
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.selection_list import SelectionType

TICKED = "✔"
UNTICKED = " "


class TickBox(Checkbox):
    """A Checkbox drawn ✔ when ticked, empty when not."""

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = TICKED if self.value else UNTICKED
        button: Content = ToggleButton._button.fget(self)  # type: ignore[attr-defined]
        return button


class TickList(SelectionList[SelectionType]):
    """A SelectionList whose boxes are drawn ✔ when ticked, empty when not."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) < 3 or segments[1].text != ToggleButton.BUTTON_INNER:
            return strip  # not a line that starts an option
        style = segments[1].style
        index = style.meta.get("option") if style is not None else None
        if not isinstance(index, int):
            return strip
        option = self.get_option_at_index(index)
        ticked = getattr(option, "value", None) in self.selected
        segments[1] = Segment(TICKED if ticked else UNTICKED, style)
        return Strip(segments, strip.cell_length)
