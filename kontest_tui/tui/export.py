"""In-app export of a session, written side by side in one folder, `DATA_DIR/exports/`: the
session explained on one page (HTML, and as Markdown), an errors-only page, its report (JSON,
CSV) and its probes (CSV).

The files are the engine's (`report.session_page.write_session_files`, what `kontest report
--format html|json|csv` prints), read from the store; the explorer only chooses where they
go. Explanation cards saved from the results go to the same folder, as do screenshots.
"""

from __future__ import annotations

from pathlib import Path

from kontest_tui.paths import data_dir
from kontest_tui.report.session_page import write_session_files
from kontest_tui.tui.sessions import open_store


def export_folder() -> Path:
    """Where the explorer writes exports (created when needed)."""
    folder = data_dir() / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def export_stored_session(
    db: str | Path | None, session_id: str, folder: Path | None = None
) -> list[Path]:
    """Write a stored session's exports (report.session_page.write_session_files); their
    paths. Call it in a worker thread."""
    store = open_store(db)
    try:
        return write_session_files(store, session_id, folder or export_folder())
    finally:
        store.close()
