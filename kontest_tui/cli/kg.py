"""CLI commands: `kontest kg import` (CSV edge list -> KG JSON) and `kontest kg info`.

`kg_group` is the `kontest kg` group; cli/kg_wikidata.py adds `kg build` / `kg search` to it.
"""

from __future__ import annotations

import json

import click

from kontest_tui.cli.output import echo_out
from kontest_tui.cli.scope_options import entity_option
from kontest_tui.generate.summary import describe_graph, format_summary
from kontest_tui.kg.io import import_csv, load_graph, save_graph
from kontest_tui.kg.scope import apply_scope


@click.group("kg")
def kg_group() -> None:
    """Knowledge graphs: import, inspect (and build from Wikidata)."""


@kg_group.command("import")
@click.argument("edges_csv", metavar="EDGES.csv")
@click.option("--out", "out", required=True, metavar="KG.json", help="KG JSON file to write.")
@click.option("--name", default=None, help="KG name (default: the CSV file name).")
@click.option("--domain", default=None, help="Template domain, e.g. places or music.")
def import_command(edges_csv: str, out: str, name: str | None, domain: str | None) -> None:
    """Import a CSV edge list as a KG JSON file.

    Rows are `parent_id,parent_label,child_id,child_label[,relation]`; a header row is
    optional. Errors name the CSV line.
    """
    kg = import_csv(edges_csv, name=name, domain=domain)
    path = save_graph(kg, out)
    click.echo(
        f"wrote {path}: {len(kg.nodes)} nodes, {len(kg.edges)} edges, {len(kg.roots())} roots"
    )


@kg_group.command("info")
@click.argument("kg_source", metavar="KG")
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=None,
    help="Longest path in edges (default: all).",
)
@entity_option
@click.option("--per-path", is_flag=True, help="Count relations on every path, as the paper does.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def info_command(
    kg_source: str, depth: int | None, entities: tuple[str, ...], per_path: bool, as_json: bool
) -> None:
    """Summarise a KG: nodes, edges, roots, depth, paths, relations by type.

    KG is a KG JSON file, a CSV edge list or a sample name (places, music, subdivisions).
    """
    kg, depth = apply_scope(load_graph(kg_source), entities, depth)
    summary = describe_graph(kg, depth=depth, per_path=per_path)
    if as_json:
        echo_out(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2))
    else:
        echo_out(format_summary(summary))


def register(cli: click.Group) -> None:
    """Attach `kontest kg` to the main group."""
    cli.add_command(kg_group)
