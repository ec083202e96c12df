"""The JSON shape of a rerun plan (`kontest rerun --format json`): made by run.rerun,
printed by report.delta, so it lives below both."""

from __future__ import annotations

from typing import TypedDict


class RerunPlanJSON(TypedDict):
    """A plan as `kontest rerun --format json` prints it."""

    parent: str
    session: str | None
    turns: int
    reused: int
    asked: int
    changed: int
    after_changed: int
    missing: int
    requests: int
    asked_by_kind: dict[str, int]
    changed_templates: list[str]
