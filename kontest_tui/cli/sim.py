"""CLI commands: `kontest sim serve` (the simulated model over HTTP), `kontest sim batch` (as a
batch engine) and `kontest sim profiles`."""

from __future__ import annotations

import asyncio
import contextlib
import sys

import click

from kontest_tui.cli.output import echo_out
from kontest_tui.errors import InvalidInputError


@click.group(name="sim")
def sim_group() -> None:
    """The built-in simulated model (no model installed needed)."""


@sim_group.command(name="serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--port", type=int, default=11435, show_default=True, help="Port; 0 picks a free one."
)
@click.option("--profile", default="default", show_default=True, help="Profile name or .toml file.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every decision.")
@click.option(
    "--kg",
    "kg_source",
    default=None,
    help="KG file or sample: recognise its relations in non-template wording (variants).",
)
@click.option(
    "--latency-ms",
    type=float,
    default=0.0,
    show_default=True,
    help="Added before every answer's first byte (a slower replica).",
)
@click.option(
    "--reasoning",
    type=click.Choice(["first", "only"]),
    default=None,
    help="Answer as a thinking model: reasoning first, then the answer; or reasoning only "
    "(its budget spent thinking, no answer).",
)
@click.option(
    "--reasoning-field",
    type=click.Choice(["reasoning_content", "reasoning"]),
    default="reasoning_content",
    show_default=True,
    help="The OpenAI wire's field for the reasoning (Ollama's is message.thinking).",
)
@click.option(
    "--reject",
    default=None,
    metavar="STATUS[:MESSAGE]",
    help="Answer every chat with this HTTP error and message, e.g. "
    "'400:model does not support thinking'.",
)
@click.option(
    "--ndjson",
    is_flag=True,
    help='Answer /api/chat in NDJSON lines even when asked for one object ("stream": false), '
    "as some proxies do.",
)
@click.option(
    "--default-temperature-only",
    is_flag=True,
    help="Answer 400 to a request sending a temperature other than 1, as reasoning models do.",
)
def serve_command(
    host: str,
    port: int,
    profile: str,
    seed: int,
    kg_source: str | None,
    latency_ms: float,
    reasoning: str | None,
    reasoning_field: str,
    reject: str | None,
    ndjson: bool,
    default_temperature_only: bool,
) -> None:
    """Serve the simulated model over the Ollama (/api/chat) and OpenAI (/v1/...) wire formats.

    The first output line is the base URL, e.g. http://127.0.0.1:11435; point clients at
    ollama:MODEL@URL or openai:MODEL@URL/v1. MODEL is `sim` (the --profile), or a profile's
    name to select that profile; any other name is answered 404, as real servers do.
    """
    from kontest_tui.models.sim import load_profile
    from kontest_tui.models.sim.server import run_server
    from kontest_tui.models.sim.switches import ServeSwitches, parse_reject

    if not 0 <= port <= 65535:
        raise InvalidInputError(f"--port must be 0..65535, not {port}")
    load_profile(profile)  # a bad profile fails here with one line
    status, message = parse_reject(reject) if reject is not None else (None, "")
    switches = ServeSwitches(
        latency_ms=latency_ms,
        reasoning=reasoning,
        reasoning_field=reasoning_field,
        reject_status=status,
        reject_message=message,
        ndjson=ndjson,
        default_temperature_only=default_temperature_only,
    )
    kg = None
    if kg_source:
        from kontest_tui.kg.io import load_graph

        kg = load_graph(kg_source)

    def ready(url: str) -> None:
        click.echo(url)
        if host not in ("127.0.0.1", "localhost", "::1"):
            click.echo(f"kontest sim server: warning: listening on {host}, not loopback", err=True)
        click.echo(
            f"kontest sim server: profile {profile}, seed {seed}; "
            f"ollama:sim@{url} or openai:sim@{url}/v1; Ctrl-C stops",
            err=True,
        )
        sys.stdout.flush()

    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(
                run_server(
                    profile=profile,
                    seed=seed,
                    host=host,
                    port=port,
                    on_ready=ready,
                    kg=kg,
                    switches=switches,
                )
            )
    except OSError as error:
        raise InvalidInputError(
            f"cannot listen on {host}:{port}: {error.strerror or error}"
        ) from None


@sim_group.command(name="batch")
@click.argument("source", type=click.Path(dir_okay=False))
@click.argument("target", type=click.Path(dir_okay=False))
@click.option(
    "--profile",
    default="default",
    show_default=True,
    help="Profile for models that are not a built-in profile's name.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed when a line has none.")
@click.option(
    "--kg",
    "kg_source",
    default=None,
    help="KG file or sample: recognise its relations in non-template wording.",
)
def batch_command(source: str, target: str, profile: str, seed: int, kg_source: str | None) -> None:
    """Answer an OpenAI Batch API input file SOURCE into TARGET, as a batch engine would."""
    from pathlib import Path

    from kontest_tui.models.sim import load_profile
    from kontest_tui.models.sim.batch import answer_batch

    load_profile(profile)  # a bad profile fails here with one line
    kg = None
    if kg_source:
        from kontest_tui.kg.io import load_graph

        kg = load_graph(kg_source)
    count = answer_batch(Path(source), Path(target), profile=profile, seed=seed, kg=kg)
    click.echo(f"kontest sim batch: answered {count} requests into {target}", err=True)


@sim_group.command(name="profiles")
def profiles_command() -> None:
    """List the built-in simulated-model profiles."""
    from kontest_tui.models.sim import list_profiles, load_profile

    for name in list_profiles():
        echo_out(f"{name:12} {load_profile(name).description}")


def register(cli: click.Group) -> None:
    """Attach this module's commands to the main group."""
    cli.add_command(sim_group)
