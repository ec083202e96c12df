"""`kontest rerun`: ask a stored session again after its templates or synonym lists changed,
only the questions whose text changed, then print what changed (run.api.rerun_session,
results.delta)."""

from __future__ import annotations

import asyncio

import click

from kontest_tui.cli.db import db_option, open_store, out_option, resume_command, write_output

RERUN_FORMATS = ("text", "markdown", "json")


@click.command("rerun")
@click.argument("session", required=False)
@db_option
@click.option(
    "--changed-only/--all",
    "changed_only",
    default=True,
    show_default=True,
    help="Reuse every answer to a question asked as before and ask only the others "
    "(--all: ask every question again).",
)
@click.option(
    "--templates",
    "templates",
    type=click.Path(dir_okay=False),
    default=None,
    help="A template TOML file whose texts the session's template ids take (default: the "
    "domain's set as it is now: your copy once you saved one).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(RERUN_FORMATS),
    default="text",
    show_default=True,
)
@out_option
@click.pass_context
def rerun_command(
    ctx: click.Context,
    session: str | None,
    db: str | None,
    changed_only: bool,
    templates: str | None,
    fmt: str,
    out: str | None,
) -> None:
    """Ask SESSION (the latest when none is given) again with its templates' texts and the
    synonym lists as they are now: a new session linked to it, with the same model, scope,
    kinds and options, that reuses every answer to a question asked as before (marked so)
    and asks only the questions whose text changed (and the turns after them in a
    conversation, and those it has no answer to). Then print the plan and what changed: the
    errors gone and new, each measure before and after."""
    from kontest_tui.generate.templates import load_template_set
    from kontest_tui.report.delta import render_rerun
    from kontest_tui.run.api import RerunPlan, rerun_session, session_delta

    template_set = load_template_set(templates) if templates else None
    plans: list[RerunPlan] = []
    with open_store(ctx, db, create=False) as store:
        parent = store.sessions.resolve(session)

        def created(session_id: str) -> None:
            click.echo(f"session {session_id}: asked again from {parent}", err=True)

        outcome = asyncio.run(
            rerun_session(
                store,
                parent,
                changed_only=changed_only,
                template_set=template_set,
                on_created=created,
                on_planned=plans.append,
            )
        )
        delta = session_delta(store, outcome.session_id)
        text = render_rerun(delta.to_json(), plans[0].to_json() if plans else None, fmt)
        failed = outcome.evaluation.failed
    write_output(text, out)
    if failed:
        click.echo(
            f"kontest: {failed} turns failed; ask them again with: "
            f"{resume_command(outcome.session_id, db)}",
            err=True,
        )
        ctx.exit(1)
