"""Locations of the data shipped inside the package: assets/ and sample_kgs/.

Both folders live in the `kontest_tui` package and are installed with it (package data in
pyproject.toml), so an installed wheel reads the same files as an editable checkout.
`importlib.resources` finds them; a regular (non-zip) install gives real paths, which the
loaders glob and open.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_PACKAGE_DIR = Path(str(resources.files("kontest_tui")))

ASSETS_DIR = _PACKAGE_DIR / "assets"
SAMPLE_KGS_DIR = _PACKAGE_DIR / "sample_kgs"


def asset_path(*parts: str) -> Path:
    """A file or folder under assets/, e.g. `asset_path("templates", "places.toml")`."""
    return ASSETS_DIR.joinpath(*parts)
