"""`kontest export`: every response of a session (or its probes asked by hand) as JSONL or CSV."""

from __future__ import annotations

import click

from kontest_tui.cli.db import db_option, open_store, out_option, write_output
from kontest_tui.report.export import EXPORT_FORMATS, export_probes, export_session


@click.command("export")
@click.argument("session", required=False)
@db_option
@click.option(
    "--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="jsonl", show_default=True
)
@out_option
@click.option(
    "--probes",
    is_flag=True,
    help="The questions asked by hand about its relations (kontest probe, the explorer).",
)
@click.pass_context
def export_command(
    ctx: click.Context,
    session: str | None,
    db: str | None,
    fmt: str,
    out: str | None,
    probes: bool,
) -> None:
    """Export every response of a session (the latest when none is given) as JSONL or CSV."""
    with open_store(ctx, db, create=False) as store:
        text = export_probes(store, session, fmt) if probes else export_session(store, session, fmt)
    write_output(text, out)
