"""What a new session can be made of, as a front end offers it: KG sources (the samples, a
built Wikidata graph, the KG an entity was found in), the test kinds and the names of their
options, the model presets (the providers' hints: models/registry.py) and the models a
server offers, each with a few words saying what it is.

Each is a plain function over the engine's registries; the explorer's wizard lists them
and a session spec (run.spec) takes what was chosen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kontest_tui.kg.cache import built_kgs_dir
from kontest_tui.kg.io import list_samples, save_graph
from kontest_tui.kinds.registry import KindOptions, all_kinds, kind_of, kind_options
from kontest_tui.probes.templates import LOGIC_RULES, QUESTION_TYPES

if TYPE_CHECKING:
    from kontest_tui.kg.search import EntityMatch
    from kontest_tui.models.provider import ModelProvider

__all__ = [
    "LOGIC_RULES",
    "QUESTION_TYPES",
    "KindChoice",
    "build_wikidata_source",
    "built_graph_name",
    "describe_model_choice",
    "discover_server_models",
    "finder_title",
    "list_server_models",
    "KindControl",
    "kind_of",
    "kind_options_from",
    "list_test_kinds",
    "loaded_first",
    "model_presets",
    "model_spec_patterns",
    "sample_sources",
    "server_title",
    "source_of_match",
]


@dataclass(frozen=True, slots=True)
class KindControl:
    """A control of the explorer's Kinds step for one option of a kind (kinds.base.KindOption):
    a tick box ("flag"), a number ("int": blank for none) or a tick box per name ("names")."""

    key: str
    type: str
    label: str
    hint: str
    control_id: str
    choices: tuple[str, ...] = ()
    item: str = "name"


@dataclass(frozen=True, slots=True)
class KindChoice:
    """One test kind a session built from a KG can ask (kinds.registry), with the controls of
    its options the Kinds step shows on one row while it is ticked (`with_questions`: also
    while an annotated-questions file is in the plan, asked with these options)."""

    value: str  # its name: kontest | variant | factcheck | logic | a plugin kind's
    title: str
    description: str
    oracles: tuple[str, ...]
    controls_label: str = ""
    controls: tuple[KindControl, ...] = ()
    with_questions: bool = False


def list_test_kinds() -> list[KindChoice]:
    """The test kinds built from a KG, in registry order (annotated questions come from a
    file: SessionSpec.questions). An option several kinds declare has its control on the
    first one's row."""
    kinds = all_kinds().values()
    from_files = [{o.key for o in info.options} for info in kinds if info.build is None]
    shown: set[str] = set()
    choices = []
    for info in kinds:
        if info.build is None:
            continue
        controls = []
        for option in info.options:
            if option.wizard and option.key not in shown:
                shown.add(option.key)
                controls.append(
                    KindControl(
                        option.key,
                        option.type,
                        option.label,
                        option.hint or option.help,
                        option.control_id,
                        option.choices,
                        option.item,
                    )
                )
        keys = {control.key for control in controls}
        choices.append(
            KindChoice(
                info.name,
                info.title,
                info.description,
                tuple(info.oracles),
                info.controls_label or info.title,
                tuple(controls),
                bool(keys) and any(keys <= declared for declared in from_files),
            )
        )
    return choices


def kind_options_from(values: Mapping[str, object], **fixed: Any) -> KindOptions:
    """The kinds' options of the Kinds step's values (by option key) and `fixed` ones (the
    Variants step's strength): a "names" option with every name ticked is None (all, the
    engine's default), a blank number None."""
    fields: dict[str, Any] = dict(fixed)
    extra: list[tuple[str, object]] = []
    for option in kind_options():
        if option.key not in values:
            continue
        value = values[option.key]
        if (
            option.type == "names"
            and value is not None
            and set(option.choices) <= set(cast("Iterable[str]", value))
        ):
            value = None
        if option.key in KindOptions.__dataclass_fields__:
            fields[option.key] = value
        elif value is not None:
            extra.append((option.key, value))
    return KindOptions(**fields, extra=tuple(sorted(extra)))


def sample_sources() -> list[str]:
    """The bundled sample KGs (`places`, `music`, `subdivisions`)."""
    return list_samples()


LOADED_BONUS = 10.0  # points a match from the KG loaded gains over another KG's


def loaded_first(found: Sequence[EntityMatch], current: str | None) -> list[EntityMatch]:
    """`found` ranked again with the matches from the KG loaded (`current`, a source as
    `source_of_match` names it) LOADED_BONUS points better: a name two KGs hold (Ireland in
    places and in subdivisions) picks the loaded KG's entity first, while a close match in
    another KG still beats a poor one in the loaded KG ("Kinawly" finds places' Kinawley
    before music's King)."""
    if not current:
        return list(found)
    order = {id(match): index for index, match in enumerate(found)}
    return sorted(
        found,
        key=lambda match: (
            -(match.score + (LOADED_BONUS if source_of_match(match, current) == current else 0)),
            order[id(match)],
        ),
    )


def source_of_match(match: EntityMatch, current: str) -> str | None:
    """The KG source an entity found by kg.search belongs to: a sample's name, a built
    graph's file, `current` for the KG loaded; None for a Wikidata entity (a seed to build
    a KG from)."""
    found_in = match.source
    if found_in.startswith("sample:"):
        return found_in.removeprefix("sample:")
    if found_in.startswith("built:"):
        return str(built_kgs_dir() / f"{found_in.removeprefix('built:')}.json")
    if found_in == "kg":
        return current
    return None


def built_graph_name(domain: str, seeds: Sequence[str], depth: int) -> str:
    """`places-Q27-Q31-d2.json`: the file name `kontest kg build` gives a built KG."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(domain).stem).strip("-") or "kg"
    seed_part = "-".join(seeds[:3]) + ("-etc" if len(seeds) > 3 else "")
    return f"{stem}-{seed_part}-d{depth}.json"


def build_wikidata_source(
    domain: str,
    seeds: Sequence[str],
    depth: int,
    progress: Callable[[object], None] | None = None,
) -> str:
    """Build the KG of `seeds` from Wikidata down to `depth` (queries cached) and keep it
    with the built KGs, as `kontest kg build` does; its file is a session's KG source."""
    from kontest_tui.kg.wikidata import build_graph

    graph = build_graph(domain, list(seeds), depth, progress=progress)
    return str(save_graph(graph, built_kgs_dir() / built_graph_name(domain, seeds, depth)))


def model_presets() -> list[str]:
    """The specs the model pickers offer without asking anyone, from each provider's hints:
    the simulated model's profiles (`sim`, `sim:careful`, ...), `local:gemma3-270m` when the
    [local] extra is installed, and a plugin's."""
    from kontest_tui.models.registry import all_providers

    return [
        spec
        for provider in all_providers()
        if provider.hints.presets is not None
        for spec in provider.hints.presets()
    ]


def describe_model_choice(spec: str) -> str:
    """A few words for a model spec in a list (`a real small model, offline`)."""
    from kontest_tui.models.registry import find_provider

    provider = find_provider(spec.partition(":")[0].strip().lower())
    return provider.hints.description if provider is not None else ""


def model_spec_patterns() -> list[str]:
    """The spec shapes a model field shows (`sim:PROFILE`, `ollama:MODEL[@URL]`, ...)."""
    from kontest_tui.models.specs import featured_patterns

    return featured_patterns()


def _server_provider(typed: str, session_model: str = "") -> tuple[ModelProvider, str]:
    """Whose models "Find models" lists, and the spec naming the server: `typed`'s provider
    when it lists a server, else `session_model`'s when it is the provider looked for by
    default (Ollama), else that provider's default server."""
    from kontest_tui.models.registry import all_providers, find_provider

    for spec, default_only in ((typed.strip(), False), (session_model.strip(), True)):
        provider = find_provider(spec.partition(":")[0].lower()) if spec else None
        if provider is None or not provider.hints.lists_server:
            continue
        if provider.hints.default_server or not default_only:
            return provider, spec
    default = next(p for p in all_providers() if p.hints.default_server)
    return default, f"{default.prefix}:"


def server_title(typed: str, session_model: str = "") -> str:
    """The name of the server `list_server_models(typed, session_model)` asks: `Ollama`."""
    return _server_provider(typed, session_model)[0].hints.title


def finder_title() -> str:
    """The name of the server "Find models" asks when no spec names one: `Ollama`."""
    return server_title("")


def discover_server_models(session_model: str = "") -> list[str]:
    """The models of the server looked for by default (the local Ollama; the session's
    server when its model is on one), [] when none answers: for lists that offer them when
    present, with nothing said otherwise. Blocking: a worker thread."""
    from kontest_tui.errors import KontestError

    try:
        return list_server_models("", session_model)
    except (KontestError, OSError):
        return []


def list_server_models(typed: str, session_model: str = "") -> list[str]:
    """The models of the server `typed` names (`ollama:MODEL@URL`, `openai:@URL`; else as
    `_server_provider` says) as full specs that keep that server's URL. Blocking: a worker
    thread."""
    from kontest_tui.models.specs import ModelSpec, list_models

    provider, spec = _server_provider(typed, session_model)
    name, at, _ = spec.partition(":")[2].partition("@")
    url: str | None = None
    if at:  # a server named: its URL stays in every spec listed
        rest = spec.partition(":")[2].strip()
        url = provider.parse(rest if name.strip() else f"list{rest}", spec).url
    prefix = provider.prefix
    specs = []
    for found in list_models(spec):
        found = found.removeprefix(f"{prefix}:")
        specs.append(ModelSpec(prefix, found, url).spec if url else f"{prefix}:{found}")
    return specs
