"""What a session was asked with, and where several sessions differ (`kontest compare`).

Sessions are comparable when they asked the same relations (`scope_differences`: the same
KG, known by its name and content, not by the path it was read from; the same part of it,
depth, per-path mode and relations) the same way (`setting_differences`: the same templates,
ids and texts, system prompt, temperature, max tokens, seeds, test kinds and their options,
the ontological rule, sampling and conversation mode, `--fresh-conversations`). The model and the run options
(concurrency, retries, cache) are what a comparison compares or do not change the questions.
`session_settings(row)` and `session_scope(row, kg, relation_ids)` read them from a stored
session row (its KG snapshot and relation ids beside it); a `Difference` describes itself on one line with every value: "depth: 2 (S1) vs 1 (S2)".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

SETTINGS: tuple[str, ...] = (
    "templates",
    "system prompt",
    "temperature",
    "max tokens",
    "seed",
    "model seed",
    "kinds",
    "kind options",
    "ontological rule",
    "sampling",
    "fresh conversations",
)
# Where the questions come from: a difference here means other relations were asked.
SCOPE: tuple[str, ...] = ("KG", "graph", "depth", "per path", "relations")
SHOWN_CHARS = 60  # a value's text in a difference line (each template's text in "templates")
ROOTS_SHOWN = 3  # top nodes a "graph" value names


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
        """`temperature: 0.0 (S1) vs 0.7 (S2)`: each value once, with the sessions that have
        it (values shortened to SHOWN_CHARS; templates by id and text)."""
        groups: dict[str, list[str]] = {}
        for session, value in self.values.items():
            groups.setdefault(show_value(value, self.setting), []).append(session)
        shown = " vs ".join(f"{value} ({', '.join(ids)})" for value, ids in groups.items())
        return f"{self.setting}: {shown}"


def show_value(value: object, setting: str = "") -> str:
    """A setting's value on one short line: `t1 “Does {parent} have a {child}?”, t3 “…”` for
    templates, `yes`/`no` for a switch, `none` for no value."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if setting == "templates" and isinstance(value, Mapping):
        return ", ".join(f"{tid} “{_short(str(text))}”" for tid, text in value.items()) or "none"
    text = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )
    return _short(str(text))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def session_settings(row: Mapping[str, object]) -> dict[str, object]:
    """The SETTINGS of a stored session row (store.sessions.get)."""
    ids = [str(tid) for tid in _list(row.get("template_ids"))]
    templates = _mapping(row.get("templates_json"))
    texts = {
        str(entry.get("id")): _template_text(entry.get("texts"))
        for entry in _list(templates.get("templates"))
        if isinstance(entry, Mapping) and str(entry.get("id")) in ids
    }
    options = _mapping(row.get("options_json"))
    kinds = _mapping(row.get("kinds_json"))
    options_of_kinds = _mapping(kinds.get("options"))
    asked = list(_list(kinds.get("kinds"))) or ["kontest"]
    kind_options = {  # the builders' options: none matter to KONTEST questions alone
        key: value
        for key, value in options_of_kinds.items()
        if key not in ("seed", "ontological_rule") and asked != ["kontest"]
    }
    return {
        "templates": {tid: texts.get(tid, "") for tid in ids},
        "system prompt": options.get("system_prompt"),
        "temperature": options.get("temperature"),
        "max tokens": options.get("max_tokens"),
        "seed": int(str(row.get("seed") or 0)),
        "model seed": options.get("seed"),
        "kinds": asked,
        "kind options": kind_options or None,
        "ontological rule": str(options_of_kinds.get("ontological_rule") or "paper"),
        "sampling": kinds.get("sample"),
        # a column of the session row (run.session reads it there), not a chat option
        "fresh conversations": bool(row.get("fresh_conversations")),
    }


def setting_differences(rows: Sequence[Mapping[str, object]]) -> list[Difference]:
    """Every setting whose value differs between the sessions (rows of the same sessions, in
    order), with each session's value."""
    settings = [(str(row.get("id")), session_settings(row)) for row in rows]
    return _differing(settings, SETTINGS)


def session_scope(
    row: Mapping[str, object], kg: Mapping[str, object], relation_ids: Sequence[str]
) -> dict[str, object]:
    """The SCOPE of a stored session row (store.sessions.get), its KG snapshot's JSON
    (store.sessions.kg_snapshot) and its relation ids: the KG by its name, the graph
    asked (its snapshot, one per content: the same file under two paths is one graph) by its
    size and top nodes, the depth, per-path mode and the relations."""
    graph = kg
    nodes = [node for node in _list(graph.get("nodes")) if isinstance(node, Mapping)]
    edges = [edge for edge in _list(graph.get("edges")) if isinstance(edge, Mapping)]
    children = {str(edge.get("child")) for edge in edges}
    roots = [
        str(node.get("label") or node.get("id"))
        for node in nodes
        if str(node.get("id")) not in children
    ]
    top = ", ".join(roots[:ROOTS_SHOWN]) + (", …" if len(roots) > ROOTS_SHOWN else "")
    depth = row.get("depth")
    return {
        "KG": str(graph.get("name") or row.get("kg_name") or ""),
        "graph": _Shown(f"{len(nodes)} nodes under {top or 'nothing'}", row.get("kg_snapshot")),
        "depth": "all" if depth is None else depth,
        "per path": bool(row.get("per_path")),
        "relations": _Shown(f"{len(relation_ids)} relations", _digest(sorted(relation_ids))),
    }


def scope_differences(scopes: Sequence[tuple[str, Mapping[str, object]]]) -> list[Difference]:
    """Where the sessions' scopes (session id, `session_scope`) differ. A difference of KG
    leaves out the graph's and the relations' (they follow from it), one of graph, depth or
    per-path mode the relations'."""
    found = _differing(scopes, SCOPE)
    settings = {difference.setting for difference in found}
    implied = {
        "KG": ("graph", "relations"),
        "graph": ("relations",),
        "depth": ("relations",),
        "per path": ("relations",),
    }
    hidden = {name for cause, names in implied.items() if cause in settings for name in names}
    return [difference for difference in found if difference.setting not in hidden]


def identity(values: Mapping[str, object]) -> str:
    """A key equal for two sessions exactly when their `session_scope` (or
    `session_settings`) values are: what groups sessions that compare as they are."""
    return json.dumps(
        {name: value.key if isinstance(value, _Shown) else value for name, value in values.items()},
        sort_keys=True,
    )


@dataclass(frozen=True, slots=True)
class _Shown:
    """A value shown by its text and compared by its key (a graph by its snapshot)."""

    text: str
    key: object


def _differing(
    chosen: Sequence[tuple[str, Mapping[str, object]]], names: Sequence[str]
) -> list[Difference]:
    found: list[Difference] = []
    for name in names:
        values = {session: given[name] for session, given in chosen}
        keys = {
            json.dumps(value.key if isinstance(value, _Shown) else value, sort_keys=True)
            for value in values.values()
        }
        if len(keys) > 1:
            shown = {
                session: value.text if isinstance(value, _Shown) else value
                for session, value in values.items()
            }
            if len({json.dumps(text, sort_keys=True) for text in shown.values()}) == 1:
                shown = _told_apart(values)  # shown alike: "10 relations" twice, other ones
            found.append(Difference(name, shown))
    return found


def _told_apart(values: Mapping[str, object]) -> dict[str, object]:
    """Values shown alike that differ ("10 relations" twice, not the same ones): the first
    one's sessions keep the text, the others' say "other"."""
    first_key: object = None
    shown: dict[str, object] = {}
    for index, (session, value) in enumerate(values.items()):
        key = value.key if isinstance(value, _Shown) else value
        text = value.text if isinstance(value, _Shown) else str(value)
        if index == 0:
            first_key = key
        shown[session] = text if key == first_key else f"{text}, other ones"
    return shown


def _digest(ids: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def _template_text(texts: object) -> str:
    """A stored template's text: its one text, or each relation type's joined by " / "."""
    per_type = _mapping(texts)
    if len(per_type) == 1:
        return str(next(iter(per_type.values())))
    return " / ".join(f"{kind}: {value}" for kind, value in per_type.items())


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []
