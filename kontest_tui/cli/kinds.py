"""`kontest generate --kind ...`: add FactChecker questions and logic-rule tests (and any
other registered test kind) to the generated conversations."""

from __future__ import annotations

from typing import cast

import click

from kontest_tui.domain.records import Conversation, TestKind
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import Suite
from kontest_tui.kinds.registry import KindOptions, build_kind_conversations, parse_kinds
from kontest_tui.probes.templates import LOGIC_RULES

from .generate import GenerateRequest, add_generate_extension


def _with_kinds(
    request: GenerateRequest, suite: Suite, conversations: list[Conversation]
) -> list[Conversation]:
    chosen = request.extras.get("kinds") or ()
    if not chosen:
        return conversations
    kinds = parse_kinds(chosen)  # type: ignore[arg-type]
    options = KindOptions(
        seed=int(cast("int | str", request.extras.get("kind_seed") or 0)),
        probes=cast("str | None", request.extras.get("probes")),
        rules=parse_rules(cast("str | None", request.extras.get("rules"))),
    )
    others = [k for k in kinds if k != TestKind.KONTEST]
    kept = (
        conversations
        if TestKind.KONTEST in kinds
        else [c for c in conversations if c.test_kind != TestKind.KONTEST]
    )
    return kept + build_kind_conversations(suite, request.kg, others, options)


PROBES_OPTION = click.Option(
    ["--probes", "probes"],
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="A probe file (TOML, as assets/probes/<domain>.toml) for the FactChecker and logic "
    "questions instead of the domain's: e.g. symmetric = true turns the symmetric rule on.",
)
RULES_OPTION = click.Option(
    ["--rules", "rules"],
    default=None,
    metavar="RULE[,RULE]",
    help=f"Logic rules to ask (default all: {', '.join(LOGIC_RULES)}).",
)


def parse_rules(value: str | None) -> tuple[str, ...] | None:
    """ "negation,transitive" -> ("negation", "transitive"); None: every rule."""
    if value is None or not value.strip():
        return None
    rules = tuple(part.strip().lower() for part in value.split(",") if part.strip())
    unknown = [rule for rule in rules if rule not in LOGIC_RULES]
    if unknown:
        raise InvalidInputError(
            f"--rules: unknown rule {unknown[0]!r} (choose from {', '.join(LOGIC_RULES)})"
        )
    return rules


def register(cli: click.Group) -> None:
    """Add --kind and --kind-seed to `kontest generate`."""
    add_generate_extension(
        [
            click.Option(
                ["--kind", "kinds"],
                multiple=True,
                help="Test kinds to generate: kontest, factcheck, logic (repeat or comma-separate; "
                "default kontest).",
            ),
            PROBES_OPTION,
            RULES_OPTION,
            click.Option(
                ["--kind-seed"],
                type=int,
                default=0,
                show_default=True,
                help="Seed for distractors and option order (factcheck).",
            ),
        ],
        _with_kinds,
    )
