"""Reports of a session (text, JSON, Markdown, CSV) and of an ensemble.

The names below come from report.render, imported on first use: a module of this package
(an explanation card, a stored report) imports only the renderers it uses.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kontest_tui.report.render import FORMATS, render_ensemble, render_report, render_verdicts

__all__ = ["FORMATS", "render_ensemble", "render_report", "render_verdicts"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kontest_tui.report import render

        return getattr(render, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
