"""The simulated model's profile (assets/models/*.toml) and the seeded draws its decisions use.

Every part of the simulated model imports this module and nothing imports back: `draw` is
a uniform number from a seeded hash, so the same chat gets the same answer in-process and
over HTTP; `pick` chooses a reply style with it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from kontest_tui.errors import ModelSpecError
from kontest_tui.resources import asset_path
from kontest_tui.validate_input import loads_toml, read_input_text

DEFAULT_PROFILE = "default"
INVALID_UTF8 = "\udcff\udcfe"  # surrogate escapes: the bytes FF FE on the wire
MEGABYTE = "A" * (1 << 20)


@dataclass(frozen=True, slots=True)
class SimFaults:
    """Seeded fault probabilities per attempt (see assets/models/default.toml)."""

    rate_limit: float = 0.0
    retry_after: float = 1.0
    server_error: float = 0.0
    dropped_stream: float = 0.0
    slow_first_byte: float = 0.0
    slow_first_byte_ms: float = 1500.0
    max_repeats: int = 2


@dataclass(frozen=True, slots=True)
class SimProfile:
    """How the simulated model behaves; every rate is a probability in [0, 1]."""

    name: str
    description: str = ""
    knowledge: float = 0.78
    yes_bias: float = 0.15
    unsure_rate: float = 0.03
    refusal_rate: float = 0.25
    flip_rate: float = 0.10
    variant_error: float = 0.05
    first_byte_ms: float = 0.0
    token_ms: float = 0.0
    template_error: dict[str, float] = field(default_factory=dict)
    yes_styles: tuple[str, ...] = ("Yes.",)
    no_styles: tuple[str, ...] = ("No.",)
    unsure_styles: tuple[str, ...] = ("I'm not sure.",)
    refuse_styles: tuple[str, ...] = ("I don't know.",)
    choice_styles: tuple[str, ...] = ("{letter}",)
    wh_styles: tuple[str, ...] = ("{label}",)
    faults: SimFaults = field(default_factory=SimFaults)
    hostile_rate: float = 0.0
    hostile_answers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedQuestion:
    """A question recognised as a template text filled with two labels."""

    template_id: str
    relation_type: str
    parent: str
    child: str


# ---------------------------------------------------------------------------- profiles


def profiles_dir() -> Path:
    return asset_path("models")


def list_profiles() -> list[str]:
    """Names of the built-in profiles (assets/models/*.toml)."""
    folder = profiles_dir()
    return sorted(path.stem for path in folder.glob("*.toml")) if folder.is_dir() else []


def _merge(base: dict[str, object], override: dict[str, object]) -> dict[str, object]:
    merged = dict(base)
    for key, value in override.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[key] = _merge(old, value)
        else:
            merged[key] = value
    return merged


def _profile_path(name_or_path: str) -> Path:
    candidate = Path(name_or_path)
    if name_or_path.endswith(".toml") or candidate.is_file():
        if not candidate.is_file():
            raise ModelSpecError(f"simulated-model profile file not found: {name_or_path}")
        return candidate
    path = profiles_dir() / f"{name_or_path}.toml"
    if not path.is_file():
        known = ", ".join(list_profiles())
        raise ModelSpecError(f"unknown simulated-model profile {name_or_path!r} (known: {known})")
    return path


def _read_profile_data(name_or_path: str, seen: tuple[str, ...] = ()) -> dict[str, object]:
    path = _profile_path(name_or_path)
    if str(path) in seen:
        raise ModelSpecError(f"profile {path} extends itself")
    text = read_input_text(path, f"cannot read profile {path}", ModelSpecError)
    data: dict[str, object] = loads_toml(text, f"cannot read profile {path}", ModelSpecError)
    parent = data.pop("extends", None)
    if parent is not None:
        data = _merge(_read_profile_data(str(parent), (*seen, str(path))), data)
    data.setdefault("name", path.stem)
    return data


def _rate(data: dict[str, object], key: str, default: float, where: str) -> float:
    value = data.get(key, default)
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise ModelSpecError(f"profile {where}: {key} must be a number >= 0, not {value!r}")
    return float(value)


def _strings(
    data: dict[str, object], key: str, default: tuple[str, ...], where: str
) -> tuple[str, ...]:
    value = data.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ModelSpecError(f"profile {where}: {key} must be a list of strings")
    return tuple(value)


def _expand_hostile(text: str) -> str:
    return text.replace("{invalid_utf8}", INVALID_UTF8).replace("{megabyte}", MEGABYTE)


def profile_from_dict(data: dict[str, object]) -> SimProfile:
    """Build a profile from merged TOML data; ModelSpecError on bad values."""
    where = str(data.get("name", "?"))
    styles = data.get("styles", {})
    faults = data.get("faults", {})
    hostile = data.get("hostile", {})
    errors = data.get("template_error", {})
    if not all(isinstance(part, dict) for part in (styles, faults, hostile, errors)):
        raise ModelSpecError(
            f"profile {where}: styles, faults, hostile, template_error must be tables"
        )
    assert isinstance(styles, dict) and isinstance(faults, dict)
    assert isinstance(hostile, dict) and isinstance(errors, dict)
    profile = SimProfile(
        name=where,
        description=str(data.get("description", "")),
        knowledge=_rate(data, "knowledge", 0.78, where),
        yes_bias=_rate(data, "yes_bias", 0.15, where),
        unsure_rate=_rate(data, "unsure_rate", 0.03, where),
        refusal_rate=_rate(data, "refusal_rate", 0.25, where),
        flip_rate=_rate(data, "flip_rate", 0.10, where),
        variant_error=_rate(data, "variant_error", 0.05, where),
        first_byte_ms=_rate(data, "first_byte_ms", 0.0, where),
        token_ms=_rate(data, "token_ms", 0.0, where),
        template_error={str(key): _rate(errors, str(key), 0.0, where) for key in errors},
        yes_styles=_strings(styles, "yes", ("Yes.",), where),
        no_styles=_strings(styles, "no", ("No.",), where),
        unsure_styles=_strings(styles, "unsure", ("I'm not sure.",), where),
        refuse_styles=_strings(styles, "refuse", ("I don't know.",), where),
        choice_styles=_strings(styles, "choice", ("{letter}",), where),
        wh_styles=_strings(styles, "wh", ("{label}",), where),
        faults=SimFaults(
            rate_limit=_rate(faults, "rate_limit", 0.0, where),
            retry_after=_rate(faults, "retry_after", 1.0, where),
            server_error=_rate(faults, "server_error", 0.0, where),
            dropped_stream=_rate(faults, "dropped_stream", 0.0, where),
            slow_first_byte=_rate(faults, "slow_first_byte", 0.0, where),
            slow_first_byte_ms=_rate(faults, "slow_first_byte_ms", 1500.0, where),
            max_repeats=int(_rate(faults, "max_repeats", 2, where)),
        ),
        hostile_rate=_rate(hostile, "rate", 0.0, where),
        hostile_answers=tuple(
            _expand_hostile(text) for text in _strings(hostile, "answers", (), where)
        ),
    )
    if not all(
        (
            profile.yes_styles,
            profile.no_styles,
            profile.unsure_styles,
            profile.refuse_styles,
            profile.choice_styles,
            profile.wh_styles,
        )
    ):
        raise ModelSpecError(
            f"profile {where}: styles yes, no, unsure, refuse, choice and wh need at least one text"
        )
    if profile.hostile_rate > 0 and not profile.hostile_answers:
        raise ModelSpecError(f"profile {where}: hostile.rate > 0 needs hostile.answers")
    return profile


@lru_cache(maxsize=64)
def load_profile(name_or_path: str = DEFAULT_PROFILE) -> SimProfile:
    """A profile by built-in name (assets/models/NAME.toml) or by .toml file path."""
    return profile_from_dict(_read_profile_data(name_or_path or DEFAULT_PROFILE))


# ---------------------------------------------------------------------------- draws


def normalise(text: str) -> str:
    """Whitespace-collapsed, lower-cased text: the form every hash sees."""
    if len(text) <= 500:  # a question is normalised ~3 times per call: once is enough
        return _normalise_short(text)
    return " ".join(text.split()).lower()


@lru_cache(maxsize=16384)
def _normalise_short(text: str) -> str:
    return " ".join(text.split()).lower()


def draw(seed: int, *parts: str) -> float:
    """A uniform number in [0, 1) from a seeded hash of the parts."""
    digest = hashlib.blake2b(
        "\x1f".join((str(seed), *parts)).encode("utf-8", "surrogatepass"), digest_size=8
    )
    return int.from_bytes(digest.digest(), "big") / 2.0**64


def pick(options: Sequence[str], unit: float) -> str:
    return options[min(int(unit * len(options)), len(options) - 1)]


def template_error_rate(
    profile: SimProfile, question: str, parsed: ParsedQuestion | None
) -> tuple[str, float]:
    """The template key and its extra error rate for this question."""
    lowered = normalise(question)
    for key, rate in profile.template_error.items():
        if parsed is not None and key == parsed.template_id:
            return key, rate
        if parsed is None and not re.fullmatch(r"t\d+", key) and key.lower() in lowered:
            return key, rate
    return (parsed.template_id if parsed else ""), 0.0
