"""What a session was asked with, and where several sessions differ (`kontest compare`).

Sessions are comparable when they asked the same questions in the same way: the same
templates (ids and texts), system prompt, temperature, max tokens, test kinds and their
options, sampling and conversation mode (`--fresh-conversations`). The model, its seed and
run options (concurrency, retries, cache) are what a comparison compares or does not change
the questions. `session_settings(row)` reads them from a stored session row,
`setting_differences(rows)` lists the settings whose values differ.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

SETTINGS: tuple[str, ...] = (
    "template ids",
    "template texts",
    "system prompt",
    "temperature",
    "max tokens",
    "kinds",
    "kind options",
    "sampling",
    "fresh conversations",
)
SHOWN_CHARS = 60  # a value's text in a difference line


class DifferenceJSON(TypedDict):
    """One entry of the compare JSON's `differences`."""

    setting: str
    values: dict[str, object]


@dataclass(frozen=True, slots=True)
class Difference:
    """A setting whose value is not the same in every compared session."""

    setting: str
    values: dict[str, object]  # session id -> its value

    def to_json(self) -> DifferenceJSON:
        return {"setting": self.setting, "values": dict(self.values)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Difference:
        values = data.get("values")
        return cls(
            str(data.get("setting", "")), dict(values) if isinstance(values, Mapping) else {}
        )

    def describe(self) -> str:
        """`temperature differs: S1 0.0, S2 0.7` (values shortened to SHOWN_CHARS)."""
        shown = ", ".join(
            f"{session} {show_value(value)}" for session, value in self.values.items()
        )
        return f"{self.setting} differs: {shown}"


def show_value(value: object) -> str:
    """A setting's value on one short line."""
    if value is None:
        return "none"
    text = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )
    text = " ".join(str(text).split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def session_settings(row: Mapping[str, object]) -> dict[str, object]:
    """The SETTINGS of a stored session row (store.sessions.get)."""
    ids = [str(tid) for tid in _list(row.get("template_ids"))]
    templates = _mapping(row.get("templates_json"))
    texts = {
        str(entry.get("id")): entry.get("texts")
        for entry in _list(templates.get("templates"))
        if isinstance(entry, Mapping) and str(entry.get("id")) in ids
    }
    options = _mapping(row.get("options_json"))
    kinds = _mapping(row.get("kinds_json"))
    kind_options = dict(_mapping(kinds.get("options")))
    return {
        "template ids": ids,
        "template texts": {tid: texts.get(tid) for tid in ids},
        "system prompt": options.get("system_prompt"),
        "temperature": options.get("temperature"),
        "max tokens": options.get("max_tokens"),
        "kinds": list(_list(kinds.get("kinds"))) or ["kontest"],
        "kind options": kind_options or None,
        "sampling": kinds.get("sample"),
        "fresh conversations": bool(options.get("fresh_conversations", False)),
    }


def setting_differences(rows: Sequence[Mapping[str, object]]) -> list[Difference]:
    """Every setting whose value differs between the sessions (rows of the same sessions, in
    order), with each session's value."""
    found: list[Difference] = []
    settings = [(str(row.get("id")), session_settings(row)) for row in rows]
    for name in SETTINGS:
        if name == "template texts" and found and found[-1].setting == "template ids":
            continue  # other templates: their texts differ as a matter of course
        values = {session: chosen[name] for session, chosen in settings}
        if len({json.dumps(value, sort_keys=True) for value in values.values()}) > 1:
            found.append(Difference(name, values))
    return found


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []
