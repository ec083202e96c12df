"""CLI command: `kontest serve-ui`, the explorer in a browser through textual-serve."""

from __future__ import annotations

import click


@click.command("serve-ui")
@click.option("--kg", "kg_name", default=None, help="KG file or sample name to open ready to run.")
@click.option("--model", "model_spec", default=None, help="Model spec for that session, e.g. sim.")
@click.option("--db", type=click.Path(dir_okay=False), default=None, help="Session database file.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port."
)
def serve_ui(
    kg_name: str | None, model_spec: str | None, db: str | None, host: str, port: int
) -> None:
    """Serve the explorer to a web browser (each browser tab runs its own app)."""
    from kontest_tui.tui.app import serve_app

    serve_app(kg=kg_name, model=model_spec, db=db, host=host, port=port)


def register(cli: click.Group) -> None:
    """Attach this module's commands to the main group."""
    cli.add_command(serve_ui)
