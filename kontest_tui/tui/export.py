"""In-app export of a session: its report as JSON, Markdown and CSV, and the picture of the
model's KG with its errors (standalone HTML), written side by side in one folder.

The files are the engine's renderings (`report.render.render_report`,
`report.picture.render_session_picture`), the same as `kontest report --format
json|markdown|csv|html`; the explorer only chooses where they go: `DATA_DIR/exports/`.
"""

from __future__ import annotations

from pathlib import Path

from kontest_tui.paths import data_dir
from kontest_tui.report.picture import render_session_picture
from kontest_tui.report.render import render_report
from kontest_tui.tui.plan import SessionResult, evaluated

FORMATS = {"json": "json", "markdown": "md", "csv": "csv"}


def export_folder() -> Path:
    """Where the explorer writes exports (created when needed)."""
    folder = data_dir() / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def export_session(result: SessionResult, folder: Path | None = None) -> list[Path]:
    """Write the session's report (JSON, Markdown, CSV) and KG picture (HTML); their paths."""
    evaluation = evaluated(result).evaluation
    folder = folder or export_folder()
    stem = result.session_id or "unsaved"
    written: list[Path] = []
    for fmt, suffix in FORMATS.items():
        path = folder / f"kontest-{stem}.{suffix}"
        path.write_text(render_report(evaluation, fmt), encoding="utf-8")
        written.append(path)
    plan = result.plan
    picture = folder / f"kontest-{stem}.html"
    picture.write_text(
        render_session_picture(
            plan.kg, evaluation, title=f"{plan.model_spec} on {plan.kg.name} · {stem}"
        ),
        encoding="utf-8",
    )
    written.append(picture)
    return written
