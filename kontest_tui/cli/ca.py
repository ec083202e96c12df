"""CLI: `kontest ca` (a t-way covering array for an IPM file; `kontest generate --variants`
asks the variants kind of the registry, kinds/variant.py, for the covering arrays of a KG's
questions).

`kontest ca` reads `{"parameters": [{"name": str, "values": [str, ...]}, ...],
"forbidden"?: [{name: value}]}` and prints `{"rows": [[value, ...], ...]}` (values in
parameter order, row 0 the original).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from kontest_tui.cli.output import echo_out
from kontest_tui.errors import InvalidInputError
from kontest_tui.validate_input import loads_json, read_input_text


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


def register(cli: click.Group) -> None:
    """Attach `kontest ca`."""

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
