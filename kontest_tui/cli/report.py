"""`kontest report`: a stored session's report as text, JSON, markdown, CSV or one html page."""

from __future__ import annotations

from dataclasses import dataclass

import click

from kontest_tui.cli.db import db_option, open_store, out_option, write_output
from kontest_tui.cli.option_groups import grouped
from kontest_tui.cli.scope_options import entity_option
from kontest_tui.errors import InvalidInputError

REPORT_FORMATS = ("text", "json", "markdown", "csv")


@dataclass(frozen=True, slots=True)
class PageChoice:
    """What the html page draws: every node, or only those with errors and the way down to
    them; the subtrees of some entities, `depth` below each."""

    errors_only: bool
    entities: tuple[str, ...]
    depth: int | None

    @property
    def chosen(self) -> bool:
        return bool(self.errors_only or self.entities or self.depth)


@click.command("report")
@click.argument("session", required=False)
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice((*REPORT_FORMATS, "html")),
    default="text",
    show_default=True,
    help="html: the session explained on one standalone page, with the picture of the model's KG.",
)
@out_option
@click.option(
    "--re-evaluate",
    "re_evaluate",
    is_flag=True,
    help="Evaluate the stored answers again and store the new verdicts and report (a "
    "read-only database or a session being run: one error line, exit 1, nothing printed).",
)
@click.option(
    "--errors-only",
    "errors_only",
    is_flag=True,
    help="html: draw only the nodes with errors and the way down to them.",
)
@entity_option
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=None,
    help="html with --entity: how far below each entity to draw.",
)
@click.pass_context
@grouped(page=PageChoice)
def report_command(
    ctx: click.Context,
    session: str | None,
    db: str | None,
    fmt: str,
    out: str | None,
    re_evaluate: bool,
    page: PageChoice,
) -> None:
    """Print a session's report (the latest session when none is given): the verdicts its
    run stored; when they are stale (other evaluating code, or answers stored after them)
    the answers are evaluated again in memory (nothing is written); --re-evaluate evaluates
    again and stores the result. html: the session explained on one
    standalone page (counts, templates, legend, the picture of the model's KG, every error
    with its questions and replies), read from the store; it lists the stored verdicts, so
    stale ones are evaluated and stored first (a read-only database: one line instead)."""
    # results.reports, which run.api re-exports: run.api imports every engine step and the
    # model clients, none of which a stored report needs.
    from kontest_tui.report.explain_store import render_named_report
    from kontest_tui.results.reports import refresh_report, session_report

    if page.chosen and fmt != "html":
        raise InvalidInputError("--errors-only, --entity and --depth go with --format html")
    with open_store(ctx, db, create=False) as store:
        if fmt == "html":
            from kontest_tui.report.session_page import build_session_document, document_html

            if re_evaluate:
                refresh_report(store, store.sessions.resolve(session), must_store=True)
            text = document_html(
                build_session_document(
                    store,
                    session,
                    errors_only=page.errors_only,
                    entities=page.entities,
                    depth=page.depth,
                )
            )
        else:
            session_id = store.sessions.resolve(session)
            if re_evaluate:
                shown = refresh_report(store, session_id, must_store=True)
            else:
                shown = session_report(store, session_id)
            text = render_named_report(store, session_id, shown, fmt)
    write_output(text, out)
