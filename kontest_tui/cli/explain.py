"""`kontest explain`: one error of a stored session as a card in plain sentences.

Thin layer over `report.explain_store` (which error, its evidence) and
`report.explain_render` (text, Markdown, standalone HTML, SVG).
"""

from __future__ import annotations

import click

from kontest_tui.report.explain_render import CARD_FORMATS
from kontest_tui.report.explain_store import CARD_KINDS

# --kind of `kontest explain` and `kontest confirm`: the errors of one oracle.
error_kind_option = click.option(
    "--kind",
    type=click.Choice(CARD_KINDS),
    default=None,
    help="Only errors of this kind (the oracle that found them).",
)


@click.command("explain")
@click.argument("session", required=False)
@click.option("--db", type=click.Path(dir_okay=False), default=None, help="Session database file.")
@click.option(
    "--error",
    "number",
    type=int,
    default=None,
    metavar="N",
    help="The N-th error (from 1, clearest first); default: the clearest.",
)
@click.option(
    "--relation",
    default=None,
    metavar="PARENT>CHILD",
    help="The errors of this relation, by id or labels ('Nordland>Grane'): all of them, "
    "unless --error picks one.",
)
@error_kind_option
@click.option("--format", "fmt", type=click.Choice(CARD_FORMATS), default="text", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to this file.")
@click.pass_context
def explain_command(
    ctx: click.Context,
    session: str | None,
    db: str | None,
    number: int | None,
    relation: str | None,
    kind: str | None,
    fmt: str,
    out: str | None,
) -> None:
    """Explain an error of a session (the latest when none is given) in plain sentences:
    the questions in full, the model's replies and what was read from them, and why the
    answers contradict each other."""
    from kontest_tui.cli.db import open_store, write_output
    from kontest_tui.report.explain_render import render_cards
    from kontest_tui.report.explain_store import stored_cards

    with open_store(ctx, db, create=False) as store:
        cards = stored_cards(store, session, number=number, relation=relation, kind=kind)
    write_output(render_cards(cards, fmt), out)
