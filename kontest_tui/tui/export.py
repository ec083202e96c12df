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
from kontest_tui.run.api import load_session
from kontest_tui.run.session import session_report
from kontest_tui.tui.sessions import open_store

FORMATS = {"json": "json", "markdown": "md", "csv": "csv"}


def export_folder() -> Path:
    """Where the explorer writes exports (created when needed)."""
    folder = data_dir() / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def export_stored_session(
    db: str | Path | None, session_id: str, folder: Path | None = None
) -> list[Path]:
    """Write a stored session's report (JSON, Markdown, CSV: its stored report, as `kontest
    report` prints it) and KG picture (HTML, as `kontest report --format html` writes it:
    from the whole evaluation); their paths. Call it in a worker thread."""
    folder = folder or export_folder()
    written: list[Path] = []
    store = open_store(db)
    try:
        stored = session_report(store, session_id)
        for fmt, suffix in FORMATS.items():
            path = folder / f"kontest-{session_id}.{suffix}"
            path.write_text(render_report(stored, fmt), encoding="utf-8")
            written.append(path)
        loaded = load_session(store, session_id)  # TODO(issue 23): the picture from stored views
    finally:
        store.close()
    picture = folder / f"kontest-{session_id}.html"
    picture.write_text(
        render_session_picture(
            loaded.kg, loaded.evaluation, title=f"{loaded.model} on {loaded.kg.name} · {session_id}"
        ),
        encoding="utf-8",
    )
    written.append(picture)
    return written
