"""`kontest compare`: sessions (one model each, one KG) side by side, as the papers' tables."""

from __future__ import annotations

import click

from kontest_tui.report.compare import COMPARE_FORMATS


@click.command("compare")
@click.argument("sessions", nargs=-1)
@click.option(
    "--kg",
    "kg",
    default=None,
    help="Compare every finished session on this KG (as `kontest sessions` names it).",
)
@click.option("--db", type=click.Path(dir_okay=False), default=None, help="Session database file.")
@click.option(
    "--format", "fmt", type=click.Choice(COMPARE_FORMATS), default="text", show_default=True
)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to this file.")
@click.option(
    "--allow-differences",
    "allow_differences",
    is_flag=True,
    help="Compare sessions whose settings differ (templates, system prompt, temperature, max "
    "tokens, kinds and their options, sampling, conversation mode); the differences are "
    "printed above the tables and listed in the JSON.",
)
@click.pass_context
def compare_command(
    ctx: click.Context,
    sessions: tuple[str, ...],
    kg: str | None,
    db: str | None,
    fmt: str,
    out: str | None,
    allow_differences: bool,
) -> None:
    """Put sessions side by side: with no ids, every finished session on --kg (or on the
    latest session's KG). Sessions on different KGs or scopes are refused, and so are
    sessions asked with different settings unless --allow-differences (exit 2, one line per
    difference). Reads the stored reports (nothing is written)."""
    from kontest_tui.cli.db import open_store, write_output
    from kontest_tui.report.compare import render_comparison
    from kontest_tui.report.stored_compare import stored_comparison

    with open_store(ctx, db, create=False) as store:
        data = stored_comparison(store, sessions, kg, allow_differences=allow_differences)
    write_output(render_comparison(data, fmt), out)
