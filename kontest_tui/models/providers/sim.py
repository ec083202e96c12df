"""The simulated model (`sim[:PROFILE]`, PROFILE a profile name or a .toml file): built in,
deterministic, no server needed (models/sim/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kontest_tui.models.provider import ModelProvider, ModelSpec, OpenContext, ProviderHints

if TYPE_CHECKING:
    from kontest_tui.models.base import ChatModel

PREFIX = "sim"
DEFAULT_PROFILE = "default"


def parse(rest: str, text: str) -> ModelSpec:
    return ModelSpec(PREFIX, rest or DEFAULT_PROFILE)


def spec_text(spec: ModelSpec) -> str:
    return PREFIX if spec.name == DEFAULT_PROFILE else f"{PREFIX}:{spec.name}"


def open_sim(spec: ModelSpec, context: OpenContext) -> ChatModel:
    from kontest_tui.models.sim import SimulatedModel

    return SimulatedModel(spec.name, seed=context.seed, kg=context.kg)


def check(spec: ModelSpec) -> None:
    """The profile must exist (a name or a .toml path; an unknown one says so)."""
    from kontest_tui.models.sim import load_profile

    load_profile(spec.name)


async def list_profiles(spec: ModelSpec) -> list[str]:
    from kontest_tui.models.sim import list_profiles

    return list_profiles()


def presets() -> list[str]:
    """The profiles as specs (`sim`, `sim:careful`, ...)."""
    from kontest_tui.models.sim import list_profiles

    return [spec_text(ModelSpec(PREFIX, name)) for name in list_profiles() or [DEFAULT_PROFILE]]


PROVIDER = ModelProvider(
    prefix=PREFIX,
    parse=parse,
    text=spec_text,
    open=open_sim,
    check=check,
    list_models=list_profiles,
    batch=True,  # `kontest sim batch` runs batch files
    hints=ProviderHints(
        title="simulated",
        description="simulated",
        pattern="sim:PROFILE",
        featured=True,
        presets=presets,
    ),
)
