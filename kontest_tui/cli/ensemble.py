"""`kontest ensemble`: the weighted ensemble against majority vote over stored sessions."""

from __future__ import annotations

import click

from kontest_tui.cli.db import db_option, open_store
from kontest_tui.cli.output import echo_out
from kontest_tui.cli.report import REPORT_FORMATS


@click.command("ensemble")
@click.argument("sessions", nargs=-1, required=True)
@db_option
@click.option(
    "--k",
    "k",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="Folds of the cross-validation over relations.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the fold split.")
@click.option(
    "--splits",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Also count the weighted ensemble's gap under this many fold splits (seeds SEED to "
    "SEED+SPLITS-1): the gap depends on the split; 1: only SEED's.",
)
@click.option(
    "--format", "fmt", type=click.Choice(REPORT_FORMATS), default="text", show_default=True
)
@click.pass_context
def ensemble_command(
    ctx: click.Context,
    sessions: tuple[str, ...],
    db: str | None,
    k: int,
    seed: int,
    splits: int,
    fmt: str,
) -> None:
    """Weighted ensemble vs majority vote over several sessions (one model each, same KG)."""
    from kontest_tui.mitigate.ensemble import cross_validate_sessions
    from kontest_tui.report.render import render_ensemble

    with open_store(ctx, db, create=False) as store:
        ids = [store.sessions.resolve(session) for session in sessions]
        result = cross_validate_sessions(store, ids, k=k, seed=seed, splits=splits)
    echo_out(render_ensemble(result, fmt), nl=False)
