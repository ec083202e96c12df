"""Wikidata domains as data: which property links a parent to its children, at each depth.

A domain file (assets/domains/NAME.toml, or any .toml path) lists levels: the Wikidata
property, its direction, the classes a child must be an instance of (subclasses followed),
properties that exclude a child (e.g. P576, dissolved), the node type and the relation type.
Every id is validated here, so nothing from a domain file reaches SPARQL unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kontest_tui.errors import InvalidInputError
from kontest_tui.resources import asset_path
from kontest_tui.validate_input import is_name, loads_toml, read_input_text

QID_PATTERN = re.compile(r"^Q[1-9][0-9]*$")
PID_PATTERN = re.compile(r"^P[1-9][0-9]*$")
_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
DIRECTIONS = ("child_to_parent", "parent_to_child")


class DomainError(InvalidInputError):
    """A domain name or file that cannot be used."""

    title = "Domain"


@dataclass(frozen=True, slots=True)
class Level:
    """How the children of a node one level down are found."""

    property: str
    direction: str = "child_to_parent"
    instance_of: tuple[str, ...] = ()
    exclude_properties: tuple[str, ...] = ()
    node_types: tuple[str, ...] = ()
    relation: str = ""
    repeat: bool = False

    def node_type(self, depth: int) -> str:
        """The type recorded for a node `depth` edges below a seed reached through this level."""
        if not self.node_types:
            return ""
        return self.node_types[min(depth - 1, len(self.node_types) - 1)] if depth > 0 else ""


@dataclass(frozen=True, slots=True)
class Domain:
    """A named set of levels plus the template set and the seed type."""

    name: str
    levels: tuple[Level, ...]
    description: str = ""
    templates: str = ""
    seed_type: str = ""
    origin: str = ""

    def level(self, depth: int) -> Level | None:
        """The rule that finds the nodes at `depth` (1 = children of the seeds), or None."""
        if depth < 1:
            return None
        if depth <= len(self.levels):
            return self.levels[depth - 1]
        last = self.levels[-1]
        return last if last.repeat else None


def list_domains() -> list[str]:
    """Names of the domains shipped in assets/domains/."""
    folder = asset_path("domains")
    return sorted(path.stem for path in folder.glob("*.toml")) if folder.is_dir() else []


def load_domain(name_or_path: str | Path) -> Domain:
    """Load a shipped domain by name (`places`, `music`) or a domain .toml file by path."""
    text = str(name_or_path)
    if text.endswith(".toml") or "/" in text or "\\" in text:
        path = Path(text)
    else:
        if not _NAME_PATTERN.fullmatch(text):
            raise DomainError(f"unknown domain {text!r} (known: {', '.join(list_domains())})")
        path = asset_path("domains", f"{text}.toml")
        if not path.is_file():
            raise DomainError(f"unknown domain {text!r} (known: {', '.join(list_domains())})")
    if not path.exists():
        raise DomainError(f"{path}: domain file not found")
    text = read_input_text(path, f"{path}: cannot read domain file", DomainError)
    data = loads_toml(text, f"{path}: cannot read domain file", DomainError)
    return parse_domain(data, origin=str(path))


def parse_domain(data: Mapping[str, Any], origin: str = "<domain>") -> Domain:
    """Check and convert the parsed TOML of a domain file."""
    name = data.get("name") or Path(origin).stem
    if not isinstance(name, str) or not is_name(name):
        raise DomainError(
            f"{origin}: 'name' must be a domain name (letters, digits, '_' and '-'), not {name!r}"
        )
    raw_levels = data.get("levels")
    if not isinstance(raw_levels, list) or not raw_levels:
        raise DomainError(f"{origin}: at least one [[levels]] table is required")
    levels = tuple(_parse_level(raw, f"{origin}: levels[{i}]") for i, raw in enumerate(raw_levels))
    for key in ("description", "templates", "seed_type"):
        if not isinstance(data.get(key, ""), str):
            raise DomainError(f"{origin}: {key!r} must be a string")
    return Domain(
        name=name,
        levels=levels,
        description=data.get("description", ""),
        templates=data.get("templates", "") or name,
        seed_type=data.get("seed_type", ""),
        origin=origin,
    )


def _parse_level(raw: object, where: str) -> Level:
    if not isinstance(raw, dict):
        raise DomainError(f"{where}: must be a table")
    prop = raw.get("property")
    if not isinstance(prop, str) or not PID_PATTERN.fullmatch(prop):
        raise DomainError(
            f"{where}: 'property' must be a Wikidata property id like P131, got {prop!r}"
        )
    direction = raw.get("direction", "child_to_parent")
    if direction not in DIRECTIONS:
        raise DomainError(f"{where}: 'direction' must be one of {', '.join(DIRECTIONS)}")
    instance_of = _id_list(raw.get("instance_of", []), QID_PATTERN, f"{where}: instance_of")
    excludes = _id_list(
        raw.get("exclude_properties", []), PID_PATTERN, f"{where}: exclude_properties"
    )
    node_type = raw.get("node_type", [])
    node_types = (node_type,) if isinstance(node_type, str) else node_type
    if not isinstance(node_types, list | tuple) or not all(isinstance(t, str) for t in node_types):
        raise DomainError(f"{where}: 'node_type' must be a string or a list of strings")
    relation = raw.get("relation", "")
    if not isinstance(relation, str):
        raise DomainError(f"{where}: 'relation' must be a string")
    repeat = raw.get("repeat", False)
    if not isinstance(repeat, bool):
        raise DomainError(f"{where}: 'repeat' must be true or false")
    return Level(prop, direction, instance_of, excludes, tuple(node_types), relation, repeat)


def _id_list(value: object, pattern: re.Pattern[str], where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(
        isinstance(v, str) and pattern.fullmatch(v) for v in value
    ):
        raise DomainError(f"{where}: expected a list of Wikidata ids, got {value!r}")
    return tuple(value)
