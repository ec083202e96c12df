"""`kontest sessions`: the stored sessions as a table or a JSON list."""

from __future__ import annotations

import json

import click

from kontest_tui.cli.db import db_option, open_store
from kontest_tui.cli.output import echo_out
from kontest_tui.kinds.registry import headline_title
from kontest_tui.store.records import SessionListing

HEADER = ("id", "status", "created", "kg", "model", "answered", "failed", "stopped", "rate")


@click.command("sessions")
@db_option
@click.option("--json", "as_json", is_flag=True, help="A JSON list instead of a table.")
@click.pass_context
def sessions_command(ctx: click.Context, db: str | None, as_json: bool) -> None:
    """List the stored sessions, oldest first."""
    with open_store(ctx, db, create=False) as store:
        rows = list(store.sessions.listing())
        titles = store.sessions.kg_titles()
    if as_json:
        echo_out(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo("no sessions yet")
        return
    table = [session_line(row, titles.get(row["id"], "")) for row in rows]
    widths = [max(len(str(line[i])) for line in (HEADER, *table)) for i in range(len(HEADER))]
    for line in (HEADER, *table):
        echo_out(
            "  ".join(
                str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)
            ).rstrip()
        )


def session_line(row: SessionListing, kg_title: str = "") -> tuple[str, ...]:
    """One session's cells, in the order of HEADER: the KG by its own name (`kg_title`, what
    `kontest compare --kg` and the explorer call it), with the file it was read from when
    that is another name (`kinawley (/tmp/qa/evil.json)`)."""
    kg = row["kg_name"]
    if kg_title and kg_title != kg:
        kg = f"{kg_title} ({kg})"
    return (
        row["id"],
        row["status"],
        row["created"][:19].replace("T", " "),
        kg,
        row["model"],
        f"{row['answered']}/{row['planned']}",
        str(row["failed"]),
        stopped_cell(row["stopped_length"], row["stopped_timeout"]),
        headline_cell(row),
    )


def headline_cell(row: SessionListing) -> str:
    """`29.1% hallucination rate`: a session row's headline rate and what it is
    (oracles.measures.headline_of; a row stored before headlines: its KONTEST error rate)."""
    measure, rate = row.get("headline_measure"), row.get("headline_rate")
    if not measure:
        measure, rate = "kontest", row.get("oracle_error_rate")
    return "-" if rate is None else f"{100 * rate:.1f}% {headline_title(str(measure))}"


def stopped_cell(length: int, timeout: int) -> str:
    """Answers cut by the token limit and by the timeout, "-" when none was."""
    parts = [f"{length} length"] if length else []
    parts += [f"{timeout} timeout"] if timeout else []
    return ", ".join(parts) or "-"
