"""In-app export of a session, written side by side in one folder, `DATA_DIR/exports/`: the
session explained on one page (HTML, and as Markdown), an errors-only page, its report (JSON,
CSV) and its probes (CSV).

The files are the engine's (`report.session_page.write_session_files`, what `kontest report
--format html|json|csv` prints), read from the store; the explorer only chooses where they
go. Explanation cards saved from the results go to the same folder, as do screenshots. In a
browser (`kontest --web`) the files written are also sent to the browser as downloads
(`deliver_files`): the folder is on the server's disk, out of the reader's reach.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from textual.app import App

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


def deliver_files(app: App[object], paths: Sequence[Path], title: str) -> bool:
    """In a browser (`kontest --web`): send the files written to the browser as downloads
    (Textual's `App.deliver_binary`; textual-serve hands each out once at /download/KEY) and
    say so. False in a terminal, where they stay in the exports folder."""
    if not app.is_web or not paths:
        return False
    for path in paths:
        app.deliver_binary(path, save_filename=path.name, open_method="download")
    names = ", ".join(path.name for path in paths)
    app.notify(f"Sent {names} to your browser's downloads", title=title, markup=False, timeout=10)
    return True
