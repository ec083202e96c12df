"""Reports of a session (text, JSON, Markdown, CSV) and of an ensemble."""

from kontest_tui.report.render import FORMATS, render_ensemble, render_report, render_verdicts

__all__ = ["FORMATS", "render_ensemble", "render_report", "render_verdicts"]
