"""`kontest generate --kind ...`: add FactChecker questions and logic-rule tests (and any
other registered test kind) to the generated conversations."""

from __future__ import annotations

from typing import cast

import click

from kontest_tui.domain.records import Conversation, TestKind
from kontest_tui.generate.conversations import Suite
from kontest_tui.kinds.registry import KindOptions, build_kind_conversations, parse_kinds

from .generate import GenerateRequest, add_generate_extension


def _with_kinds(
    request: GenerateRequest, suite: Suite, conversations: list[Conversation]
) -> list[Conversation]:
    chosen = request.extras.get("kinds") or ()
    if not chosen:
        return conversations
    kinds = parse_kinds(chosen)  # type: ignore[arg-type]
    options = KindOptions(seed=int(cast("int | str", request.extras.get("kind_seed") or 0)))
    others = [k for k in kinds if k != TestKind.KONTEST]
    kept = (
        conversations
        if TestKind.KONTEST in kinds
        else [c for c in conversations if c.test_kind != TestKind.KONTEST]
    )
    return kept + build_kind_conversations(suite, request.kg, others, options)


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
