"""CLI commands: kg_wikidata (placeholder until its issue lands)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Attach this module's commands to the main group."""
