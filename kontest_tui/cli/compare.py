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
@click.pass_context
def compare_command(
    ctx: click.Context,
    sessions: tuple[str, ...],
    kg: str | None,
    db: str | None,
    fmt: str,
    out: str | None,
) -> None:
    """Put sessions side by side: with no ids, every finished session on --kg (or on the
    latest session's KG). Sessions on different KGs or scopes are refused."""
    from kontest_tui.cli.run import _open_store, _write
    from kontest_tui.report.compare import build_comparison, render_comparison
    from kontest_tui.report.stored_compare import comparison_entries

    with _open_store(ctx, db, create=False) as store:
        data = build_comparison(comparison_entries(store, sessions, kg))
    _write(render_comparison(data, fmt), out)


def register(cli: click.Group) -> None:
    cli.add_command(compare_command)
