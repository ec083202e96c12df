"""Locations of the data shipped with the project: assets/ and sample_kgs/.

They live at the repository root (next to pyproject.toml); an installed copy may carry them
inside the package instead, so both places are looked at.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _shipped(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    return _PACKAGE_DIR.parent / name


ASSETS_DIR = _shipped("assets")
SAMPLE_KGS_DIR = _shipped("sample_kgs")


def asset_path(*parts: str) -> Path:
    """A file or folder under assets/, e.g. `asset_path("templates", "places.toml")`."""
    return ASSETS_DIR.joinpath(*parts)
