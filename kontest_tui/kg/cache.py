"""On-disk cache of SPARQL query results, so a rebuild is instant and works offline.

One JSON file per query under `paths.cache_dir()/sparql/`, named by the SHA-256 of the
endpoint URL and the exact query text. Files are written atomically (temp file + rename);
an unreadable entry counts as a miss. Built KGs are kept under `cache_dir()/kgs/` for the
offline entity search.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kontest_tui import paths


def query_key(endpoint: str, query: str) -> str:
    """The cache key of one query on one endpoint."""
    return hashlib.sha256(f"{endpoint}\n{query}".encode()).hexdigest()


def built_kgs_dir() -> Path:
    """Where built KGs are kept for the offline entity search."""
    folder = paths.cache_dir() / "kgs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass(frozen=True, slots=True)
class CachedResult:
    """The rows of one query and the UTC time (ISO) they were fetched; `timed_out` marks a
    query the endpoint gave up on (kept so a rebuild splits it again without asking)."""

    rows: list[dict[str, str]]
    fetched: str
    timed_out: bool = False


class QueryCache:
    """Per-query result files in one folder (default: `cache_dir()/sparql`)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else paths.cache_dir() / "sparql"

    def _path(self, endpoint: str, query: str) -> Path:
        key = query_key(endpoint, query)
        return self.folder / key[:2] / f"{key}.json"

    def get(self, endpoint: str, query: str) -> CachedResult | None:
        """The stored rows of this query, or None when absent or unreadable."""
        try:
            data = json.loads(self._path(endpoint, query).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (
            not isinstance(data, dict)
            or data.get("query") != query
            or not isinstance(data.get("rows"), list)
        ):
            return None
        return CachedResult(
            rows=data["rows"],
            fetched=str(data.get("fetched", "")),
            timed_out=data.get("timed_out") is True,
        )

    def put(
        self, endpoint: str, query: str, rows: list[dict[str, str]], *, timed_out: bool = False
    ) -> CachedResult:
        """Store the rows of this query (atomically) and return them with their fetch time."""
        fetched = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        path = self._path(endpoint, query)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload: dict[str, object] = {
            "endpoint": endpoint,
            "query": query,
            "fetched": fetched,
            "rows": rows,
        }
        if timed_out:
            payload["timed_out"] = True
        handle, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(payload, out, ensure_ascii=False, separators=(",", ":"))
            os.replace(temp, path)
        except OSError:
            Path(temp).unlink(missing_ok=True)
        return CachedResult(rows=rows, fetched=fetched, timed_out=timed_out)
