"""CLI commands `kontest kg build` (a KG from Wikidata) and `kontest kg search` (find seeds).

A thin layer over `kg.wikidata.build_graph` and `kg.search.search_entities`; progress goes to
stderr only when it is a terminal, so scripted runs see one result line.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import click

from kontest_tui.cli.output import echo_out
from kontest_tui.errors import InvalidInputError
from kontest_tui.kg.wikidata import DEFAULT_MAX_NODES, MAX_DEPTH, BuildProgress, BuildResult

from .kg import kg_group


def _default_out(domain: str, seeds: tuple[str, ...], depth: int) -> Path:
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(domain).stem).strip("-") or "kg"
    seed_part = "-".join(seeds[:3]) + ("-etc" if len(seeds) > 3 else "")
    return Path(f"{stem}-{seed_part}-d{depth}.json")


def _some(qids: tuple[str, ...], most: int = 5) -> str:
    shown = ", ".join(qids[:most])
    return shown + (f" and {len(qids) - most} more" if len(qids) > most else "")


def _plural(count: int, word: str, words: str = "") -> str:
    return f"{count} {word if count == 1 else words or word + 's'}"


def summary_line(path: Path, result: BuildResult, requests: int, cached: int, lang: str) -> str:
    """The one line `kontest kg build` prints: sizes, requests, and what was left out and why."""
    kg = result.graph
    line = f"wrote {path}: {len(kg.nodes)} nodes, {len(kg.edges)} edges ({requests} requests, {cached} cached)"
    notes: list[str] = []
    if result.unlabelled:
        them = "it" if len(result.unlabelled) == 1 else "them"
        below = (
            f" and {_plural(result.dropped_below, 'item')} below {them}"
            if result.dropped_below
            else ""
        )
        notes.append(
            f"skipped {_plural(len(result.unlabelled), 'item')} without a label in {lang!r} "
            f"({_some(result.unlabelled)}){below}"
        )
    elif result.dropped_below:
        notes.append(f"skipped {_plural(result.dropped_below, 'item')} below unnamed items")
    if result.splits:
        notes.append(
            f"{_plural(result.splits, 'query', 'queries')} split in halves after a timeout"
        )
    if result.timed_out:
        notes.append(
            f"gave up on {_plural(len(result.timed_out), 'item')} whose query timed out alone "
            f"({_some(result.timed_out)}; children or label missing)"
        )
    return line + "".join(f"; {note}" for note in notes)


def _progress_printer(enabled: bool) -> Callable[[BuildProgress], None]:
    def show(step: BuildProgress) -> None:
        if not enabled:
            return
        if step.phase == "children":
            text = f"depth {step.level}: parents {step.done}/{step.total}, nodes {step.nodes}"
        else:
            text = f"labels: {step.done}/{step.total} nodes"
        sys.stderr.write(f"\r\033[K{text}")
        sys.stderr.flush()

    return show


@click.command("build")
@click.option("--domain", required=True, help="Domain name (places, music) or a domain .toml file.")
@click.option(
    "--seed",
    "seeds",
    multiple=True,
    required=True,
    metavar="QID",
    help="Seed entity, e.g. Q27 (repeatable).",
)
@click.option(
    "--depth",
    type=click.IntRange(1, MAX_DEPTH),
    default=2,
    show_default=True,
    help="Longest path in edges.",
)
@click.option(
    "--endpoint", default=None, metavar="URL", help="SPARQL endpoint (default: query.wikidata.org)."
)
@click.option("--lang", default="en", show_default=True, help="Language of labels and aliases.")
@click.option(
    "--out",
    "out",
    default=None,
    metavar="FILE",
    help="KG JSON file (default: DOMAIN-SEEDS-dN.json).",
)
@click.option(
    "--refresh", is_flag=True, help="Ignore cached query results and ask the endpoint again."
)
@click.option(
    "--max-nodes",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_NODES,
    show_default=True,
    help="Stop with an error when the graph would grow beyond this.",
)
@click.option("--name", default=None, help="KG name (default: domain, seed labels and depth).")
@click.option(
    "--contact",
    default=None,
    metavar="EMAIL|URL",
    help="Your contact for the User-Agent, as Wikimedia asks (default: $KONTEST_CONTACT).",
)
@click.option(
    "--optimizer-hint/--no-optimizer-hint",
    "optimizer_hint",
    default=None,
    help="Send Blazegraph's optimizer hint (default: only to Wikidata/Blazegraph endpoints).",
)
def build_command(
    domain: str,
    seeds: tuple[str, ...],
    depth: int,
    endpoint: str | None,
    lang: str,
    out: str | None,
    refresh: bool,
    max_nodes: int,
    name: str | None,
    contact: str | None,
    optimizer_hint: bool | None,
) -> None:
    """Build a KG from Wikidata: the seeds and their descendants down to --depth.

    One SPARQL query per depth level per 200 parents, results cached on disk, so a rebuild
    is instant and works offline.
    """
    from kontest_tui.kg.cache import built_kgs_dir
    from kontest_tui.kg.domains import load_domain
    from kontest_tui.kg.io import save_graph
    from kontest_tui.kg.sparql import validate_lang, validate_qid
    from kontest_tui.kg.sparql_client import (
        WIKIDATA_ENDPOINT,
        SparqlClient,
        contact_warning,
        validate_contact,
    )
    from kontest_tui.kg.wikidata import build_with_summary

    qids = tuple(validate_qid(seed) for seed in seeds)
    lang = validate_lang(lang)
    dom = load_domain(domain)
    if contact is not None:
        contact = validate_contact(contact)
    client = SparqlClient(endpoint or WIKIDATA_ENDPOINT, refresh=refresh, contact=contact)
    warning = contact_warning(endpoint or WIKIDATA_ENDPOINT, contact)
    if warning is not None:
        click.echo(f"kontest: warning: {warning}", err=True)
    show = _progress_printer(sys.stderr.isatty())
    try:
        result = build_with_summary(
            dom,
            qids,
            depth,
            lang=lang,
            max_nodes=max_nodes,
            client=client,
            progress=show,
            name=name,
            optimizer_hint=optimizer_hint,
        )
    finally:
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
    path = Path(out) if out else _default_out(domain, qids, depth)
    if path.exists() and path.is_dir():
        raise InvalidInputError(f"--out {path} is a directory")
    save_graph(result.graph, path)
    save_graph(result.graph, built_kgs_dir() / path.name)
    click.echo(summary_line(path, result, client.requests, client.cache_hits, lang))


@click.command("search")
@click.argument("text")
@click.option("--offline", is_flag=True, help="Only search bundled and previously built KGs.")
@click.option(
    "--limit",
    type=click.IntRange(1, 50),
    default=10,
    show_default=True,
    help="Most matches to show.",
)
@click.option("--lang", default="en", show_default=True, help="Language of the Wikidata search.")
@click.option(
    "--api-url", default=None, metavar="URL", help="Wikidata API URL (default: www.wikidata.org)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the matches as JSON.")
def search_command(
    text: str, offline: bool, limit: int, lang: str, api_url: str | None, as_json: bool
) -> None:
    """Find seed entities by name: Wikidata's search online, fuzzy matching over local KGs offline."""
    from kontest_tui.kg.search import WIKIDATA_API, search_entities
    from kontest_tui.kg.sparql_client import contact_warning

    if not text.strip():
        raise InvalidInputError("the search text is empty")
    warning = None if offline else contact_warning(api_url or WIKIDATA_API)
    if warning is not None:
        click.echo(f"kontest: warning: {warning}", err=True)
    matches = search_entities(text, online=not offline, api_url=api_url, limit=limit, lang=lang)
    if as_json:
        echo_out(json.dumps([asdict(match) for match in matches], ensure_ascii=False, indent=2))
        return
    if not matches:
        click.echo(f"no entity matches {text!r}")
        return
    for match in matches:
        detail = f" - {match.description}" if match.description else ""
        echo_out(f"{match.id}\t{match.label}{detail} [{match.source}]")


def register(cli: click.Group) -> None:
    """Add `build` and `search` to the `kontest kg` group (cli/kg.py adds the group to `cli`)."""
    kg_group.add_command(build_command)
    kg_group.add_command(search_command)
