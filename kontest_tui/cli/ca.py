"""CLI: `kontest ca` (a t-way covering array for an IPM file) and the variant options of
`kontest generate` (`--variants --strength T`).

`kontest ca` reads `{"parameters": [{"name": str, "values": [str, ...]}, ...],
"forbidden"?: [{name: value}]}` and prints `{"rows": [[value, ...], ...]}` (values in
parameter order, row 0 the original).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from kontest_tui.cli.output import echo_out
from kontest_tui.domain.records import Conversation
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import Suite
from kontest_tui.validate_input import loads_json, read_input_text

from .generate import GenerateRequest, add_generate_extension


def read_ipm_file(path: Path) -> tuple[list[tuple[str, list[str]]], list[dict[str, str]]]:
    """Parse and check an IPM JSON file; every problem is one InvalidInputError line."""
    data = loads_json(read_input_text(path), str(path))
    if not isinstance(data, dict) or not isinstance(data.get("parameters"), list):
        raise InvalidInputError(f'{path}: expected an object with a "parameters" list')
    parameters: list[tuple[str, list[str]]] = []
    for i, item in enumerate(data["parameters"]):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise InvalidInputError(f'{path}: parameter {i} needs a string "name"')
        values = item.get("values")
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) for v in values)
        ):
            raise InvalidInputError(
                f'{path}: parameter {item["name"]!r} needs a non-empty "values" list of strings'
            )
        if len(set(values)) != len(values):
            raise InvalidInputError(f"{path}: parameter {item['name']!r} repeats a value")
        parameters.append((item["name"], list(values)))
    forbidden = data.get("forbidden", [])
    if not isinstance(forbidden, list) or not all(
        isinstance(rule, dict) and all(isinstance(v, str) for v in rule.values())
        for rule in forbidden
    ):
        raise InvalidInputError(f'{path}: "forbidden" must be a list of {{name: value}} objects')
    return parameters, forbidden


def add_variants(
    request: GenerateRequest, suite: Suite, conversations: list[Conversation]
) -> list[Conversation]:
    """The `kontest generate` step that appends covering-array variants when asked."""
    if not request.extras.get("variants"):
        return conversations
    from kontest_tui.generate.variants import build_variant_conversations

    limit = request.extras.get("variant_limit")
    return conversations + build_variant_conversations(
        request.kg,
        suite.relations,
        suite.template_set,
        suite.template_ids,
        strength=int(request.extras.get("strength") or 2),  # type: ignore[call-overload]
        seed=int(request.extras.get("variant_seed") or 0),  # type: ignore[call-overload]
        limit=int(limit) if limit is not None else None,  # type: ignore[call-overload]
        postfix=bool(request.extras.get("postfix")),
    )


VARIANT_OPTIONS = [
    click.Option(
        ["--variants"],
        is_flag=True,
        help="Add covering-array variants of every query (synonyms, aliases).",
    ),
    click.Option(
        ["--strength"],
        type=click.IntRange(1, 4),
        default=2,
        show_default=True,
        help="Covering-array strength t for --variants.",
    ),
    click.Option(
        ["--variant-seed"],
        type=int,
        default=0,
        show_default=True,
        help="Seed of the covering arrays.",
    ),
    click.Option(
        ["--variant-limit"],
        type=click.IntRange(min=1),
        default=None,
        help="At most N variants per query (the original included).",
    ),
    click.Option(
        ["--postfix"],
        is_flag=True,
        help='Variants end with "? Return a JSON Boolean." (true/false/undefined).',
    ),
]


def register(cli: click.Group) -> None:
    """Attach `kontest ca` and the variant options of `kontest generate`."""
    add_generate_extension(VARIANT_OPTIONS, add_variants)

    @cli.command("ca")
    @click.option(
        "--ipm",
        "ipm_path",
        required=True,
        type=click.Path(path_type=Path),
        help='IPM JSON file: {"parameters": [{"name", "values"}, ...]}.',
    )
    @click.option(
        "--strength",
        "-t",
        default=2,
        show_default=True,
        type=int,
        help="Interaction strength t (1-4).",
    )
    @click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
    @click.option(
        "--effort",
        default=None,
        type=click.IntRange(min=0),
        help="Annealing budget (0 = greedy only).",
    )
    def ca_command(ipm_path: Path, strength: int, seed: int, effort: int | None) -> None:
        """Print a t-way covering array for an input-parameter model as JSON rows."""
        from kontest_tui.generate.covering import DEFAULT_EFFORT, build_value_rows

        parameters, forbidden = read_ipm_file(ipm_path)
        if not parameters:
            raise InvalidInputError(f"{ipm_path}: no parameters")
        rows = build_value_rows(
            parameters,
            strength,
            seed,
            forbidden,
            effort=DEFAULT_EFFORT if effort is None else effort,
        )
        echo_out(json.dumps({"rows": rows}, ensure_ascii=False))
