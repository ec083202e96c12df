"""`kontest confirm`: ask a stored session's errors again and mark each one confirmed, mixed,
not reproduced or undecided.

Thin layer over the session API's `confirm_errors` (run.confirm) and
`report.confirmation` (what it prints).
"""

from __future__ import annotations

import asyncio

import click

from kontest_tui.cli.explain import error_kind_option
from kontest_tui.report.confirmation import CONFIRM_FORMATS
from kontest_tui.run.api import DEFAULT_REWORDINGS, MAX_DRAWS, MAX_REWORDINGS


@click.command("confirm")
@click.argument("session", required=False)
@click.option("--db", type=click.Path(dir_okay=False), default=None, help="Session database file.")
@click.option(
    "--error",
    "numbers",
    type=int,
    multiple=True,
    metavar="N",
    help="Only the N-th error (from 1, clearest first, as kontest explain --error N); "
    "repeatable. Default: every error.",
)
@error_kind_option
@click.option(
    "--draws",
    type=click.IntRange(0, MAX_DRAWS),
    default=None,
    help="New samples of each error, each with its own seed (default: 2 at a temperature "
    "above 0, none at 0, where a new sample repeats the answer).",
)
@click.option(
    "--rewordings",
    type=click.IntRange(0, MAX_REWORDINGS),
    default=None,
    help=f"Covering-array rewordings of the wrongly answered question, each one try "
    f"(default {DEFAULT_REWORDINGS}).",
)
@click.option(
    "--model",
    "model_spec",
    default=None,
    help="The session's model at another address (default: the session's model).",
)
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(CONFIRM_FORMATS), default="text", show_default=True
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def confirm_command(
    ctx: click.Context,
    session: str | None,
    db: str | None,
    numbers: tuple[int, ...],
    kind: str | None,
    draws: int | None,
    rewordings: int | None,
    model_spec: str | None,
    concurrency: int,
    fmt: str,
    quiet: bool,
) -> None:
    """Ask the errors of a session (the latest when none is given) again: their questions
    in the other templates and covering-array rewordings, and new samples at a temperature
    above 0. Each
    error is marked confirmed (the contradiction came back in most tries), mixed, not
    reproduced or undecided; the status shows in the report, kontest explain and the
    explorer, which list confirmed errors first. The calls are counted apart from the
    session's answers."""
    from kontest_tui.cli.db import open_store, write_output
    from kontest_tui.cli.run import ProgressLine
    from kontest_tui.report.confirmation import render_confirmations
    from kontest_tui.report.explain_store import stored_naming
    from kontest_tui.report.render import ReportNames
    from kontest_tui.run.api import ExecutorConfig, ExecutorEvents, confirm_errors

    bar = None if quiet else ProgressLine()
    with open_store(ctx, db, create=False) as store:
        session_id = store.sessions.resolve(session)
        events = ExecutorEvents(on_progress=bar.update if bar is not None else None)
        try:
            outcome = asyncio.run(
                confirm_errors(
                    store,
                    session_id,
                    numbers=numbers,
                    kind=kind,
                    draws=draws,
                    rewordings=rewordings,
                    model=model_spec,
                    config=ExecutorConfig(concurrency=concurrency),
                    events=events,
                )
            )
        finally:
            if bar is not None:
                bar.close()
        relations = store.relations.by_id(
            session_id, {confirmation.relation for confirmation in outcome.confirmations}
        )
        nodes = {
            node for relation in relations.values() for node in (relation.parent, relation.child)
        }
        names = ReportNames(relations, stored_naming(store, session_id, nodes))
        text = render_confirmations(
            outcome.confirmations,
            calls=outcome.calls,
            seconds=outcome.seconds,
            draws=outcome.draws,
            names=names,
            fmt=fmt,
        )
    write_output(text, None)
    if fmt == "text" and outcome.counts().get("confirmed"):
        click.echo("kontest explain shows the clearest confirmed error as a card", err=True)


def register(cli: click.Group) -> None:
    cli.add_command(confirm_command)
