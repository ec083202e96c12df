"""Load and save the KG JSON file (docs/knowledge-graphs.md); find the bundled samples by name.

File format: `{"name", "domain", "source", "built", "nodes": [{"id", "label", "aliases",
"type"}], "edges": [{"parent", "child", "relation"}]}`. Saving is deterministic (same graph
-> byte-identical UTF-8 file, one node or edge per line); loading validates every record and
raises one `GraphError` naming the file and the record. Records are counted from 1.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kontest_tui.errors import GraphError
from kontest_tui.gc_pause import paused_gc
from kontest_tui.paths import write_text_atomic
from kontest_tui.resources import SAMPLE_KGS_DIR
from kontest_tui.validate_input import is_name, loads_json

from .csv_import import import_csv
from .graph import Edge, KnowledgeGraph, Node, printable, printable_line
from .textfile import read_text
from .validate import RecordNames, check_edges

__all__ = [
    "dumps_graph",
    "graph_from_dict",
    "graph_to_dict",
    "import_csv",
    "list_samples",
    "load_graph",
    "resolve_source",
    "sample_path",
    "save_graph",
]

_TOP_FIELDS = ("name", "domain", "source", "built")


def list_samples() -> list[str]:
    """Names of the bundled sample KGs (`places`, `music`, `subdivisions`), sorted."""
    if not SAMPLE_KGS_DIR.is_dir():
        return []
    return sorted(path.stem for path in SAMPLE_KGS_DIR.glob("*.json"))


def sample_path(name: str) -> Path:
    """The file of a bundled sample KG; unknown names raise a `GraphError` listing the samples."""
    samples = list_samples()
    if name not in samples:
        known = ", ".join(samples) or "none installed"
        raise GraphError(f"unknown sample KG '{name}' (samples: {known})")
    return SAMPLE_KGS_DIR / f"{name}.json"


def resolve_source(source: str | Path) -> Path:
    """A KG file path for `source`: an existing path, or a sample name such as `places`.

    A string that is not an existing file, has no directory part and no suffix is taken as a
    sample name; anything else must be a file.
    """
    if isinstance(source, Path):
        return source
    text = str(source).strip()
    if not text:
        raise GraphError("no KG given (a KG file, a CSV edge list or a sample name)")
    path = Path(text)
    if path.is_file():
        return path
    if "/" not in text and os.sep not in text and not path.suffix:
        samples = list_samples()
        if text not in samples:
            known = ", ".join(samples) or "none installed"
            raise GraphError(f"{text}: no such KG file or sample (samples: {known})")
        return sample_path(text)
    return path


def load_graph(source: str | Path) -> KnowledgeGraph:
    """Load a KG from a JSON file, a CSV edge list (`.csv`) or a sample name; validate it."""
    path = resolve_source(source)
    if path.suffix.lower() == ".csv":
        return import_csv(path)
    origin = str(path)
    text = read_text(path, origin)
    with paused_gc():
        data = loads_json(text, origin, GraphError)
        return graph_from_dict(data, origin=origin, default_name=path.stem)


def _type_name(value: object) -> str:
    return {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _get_text(
    record: dict[str, Any], key: str, where: str, *, required: bool, nonempty: bool = False
) -> str:
    if key not in record:
        if required:
            raise GraphError(f"{where}: missing field '{key}'")
        return ""
    value = record[key]
    if not isinstance(value, str):
        raise GraphError(f"{where}: field '{key}' must be a string, not {_type_name(value)}")
    if nonempty and not value.strip():
        raise GraphError(f"{where}: field '{key}' is empty")
    return value


def _read_node(record: object, where: str) -> Node:
    if not isinstance(record, dict):
        raise GraphError(f"{where}: must be an object, not {_type_name(record)}")
    node_id = printable_line(_get_text(record, "id", where, required=True, nonempty=True))
    if not node_id:
        raise GraphError(f"{where}: field 'id' has only control characters")
    where = f"{where} ({node_id})"
    label = printable(_get_text(record, "label", where, required=True, nonempty=True))
    if not label.strip():
        raise GraphError(f"{where}: field 'label' has only control characters")
    aliases = record.get("aliases", [])
    if aliases is None:
        aliases = []
    if not isinstance(aliases, list) or not all(isinstance(alias, str) for alias in aliases):
        raise GraphError(f"{where}: field 'aliases' must be a list of strings")
    node_type = printable_line(_get_text(record, "type", where, required=False))
    return Node(id=node_id, label=label, aliases=tuple(map(printable, aliases)), type=node_type)


def _well_formed_node(record: object) -> Node | None:
    """The node of a record that passes every check of `_read_node`, else None.

    A fast path for large files: it accepts a subset of what `_read_node` accepts and builds
    the same node, so `_read_node` still gives the message for any record it declines.
    """
    if type(record) is not dict:
        return None
    node_id = record.get("id")
    label = record.get("label")
    node_type = record.get("type", "")
    aliases = record.get("aliases")
    if not (
        type(node_id) is str
        and type(label) is str
        and type(node_type) is str
        and node_id.strip()
        and node_id.isprintable()
        and node_type.isprintable()
        and label.strip()
        and label.isprintable()
    ):
        return None
    if not aliases:
        if aliases is not None and type(aliases) is not list:
            return None
        return Node(id=node_id, label=label, type=node_type)
    if type(aliases) is not list or not all(
        type(alias) is str and alias.isprintable() for alias in aliases
    ):
        return None
    return Node(id=node_id, label=label, aliases=tuple(aliases), type=node_type)


def _well_formed_edge(record: object) -> Edge | None:
    """The edge of a record that passes every check of `_read_edge`, else None."""
    if type(record) is not dict:
        return None
    parent = record.get("parent")
    child = record.get("child")
    relation = record.get("relation", "")
    if (
        type(parent) is str
        and type(child) is str
        and type(relation) is str
        and parent.strip()
        and child.strip()
        and parent.isprintable()
        and child.isprintable()
        and relation.isprintable()
    ):
        return Edge(parent=parent, child=child, relation=relation)
    return None


def _read_edge(record: object, where: str) -> Edge:
    if not isinstance(record, dict):
        raise GraphError(f"{where}: must be an object, not {_type_name(record)}")
    parent = printable_line(_get_text(record, "parent", where, required=True, nonempty=True))
    child = printable_line(_get_text(record, "child", where, required=True, nonempty=True))
    relation = _get_text(record, "relation", f"{where} ({parent} -> {child})", required=False)
    return Edge(parent=parent, child=child, relation=printable_line(relation))


def graph_from_dict(
    data: object, origin: str = "<graph>", default_name: str = "graph"
) -> KnowledgeGraph:
    """Build and validate a `KnowledgeGraph` from the parsed KG JSON; errors name `origin`."""
    if not isinstance(data, dict):
        raise GraphError(
            f"{origin}: the top level must be a JSON object with 'nodes' and 'edges', "
            f"not {_type_name(data)}"
        )
    meta = {
        key: printable_line(_get_text(data, key, origin, required=False)) for key in _TOP_FIELDS
    }
    if meta["domain"] and not is_name(meta["domain"]):
        raise GraphError(
            f"{origin}: field 'domain' must be a domain name such as places or music "
            f"(letters, digits, '_' and '-'), not {meta['domain'][:80]!r}"
        )
    for key in ("nodes", "edges"):
        if key not in data:
            raise GraphError(f"{origin}: missing field '{key}'")
        if not isinstance(data[key], list):
            raise GraphError(f"{origin}: field '{key}' must be a list, not {_type_name(data[key])}")
    nodes: dict[str, Node] = {}
    for number, record in enumerate(data["nodes"], start=1):
        node = _well_formed_node(record) or _read_node(record, f"{origin}: node {number}")
        if node.id in nodes:
            first = list(nodes).index(node.id) + 1
            raise GraphError(
                f"{origin}: node {number} ({node.id}): duplicate id, already used by node {first}"
            )
        nodes[node.id] = node
    edges = [
        _well_formed_edge(record) or _read_edge(record, f"{origin}: edge {number}")
        for number, record in enumerate(data["edges"], start=1)
    ]
    check_edges(origin, nodes.keys(), edges, RecordNames("edge", len(edges)))
    return KnowledgeGraph(
        name=meta["name"] or default_name,
        domain=meta["domain"],
        nodes=nodes,
        edges=edges,
        source=meta["source"],
        built=meta["built"],
    )


def graph_to_dict(kg: KnowledgeGraph) -> dict[str, Any]:
    """The KG file's JSON object (fixed key order; nodes and edges in graph order)."""
    return {
        "name": kg.name,
        "domain": kg.domain,
        "source": kg.source,
        "built": kg.built,
        "nodes": [
            {"id": node.id, "label": node.label, "aliases": list(node.aliases), "type": node.type}
            for node in kg.nodes.values()
        ],
        "edges": [
            {"parent": edge.parent, "child": edge.child, "relation": edge.relation}
            for edge in kg.edges
        ],
    }


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def dumps_graph(kg: KnowledgeGraph) -> str:
    """The file text: a top-level object with one node / edge per line, ending in a newline."""
    data = graph_to_dict(kg)
    lines = ["{"]
    for key in _TOP_FIELDS:
        lines.append(f"  {_dump(key)}: {_dump(data[key])},")
    for key, trailer in (("nodes", ","), ("edges", "")):
        records = data[key]
        if not records:
            lines.append(f"  {_dump(key)}: []{trailer}")
            continue
        lines.append(f"  {_dump(key)}: [")
        lines.extend(
            f"    {_dump(record)}{',' if number < len(records) else ''}"
            for number, record in enumerate(records, start=1)
        )
        lines.append(f"  ]{trailer}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def save_graph(kg: KnowledgeGraph, path: str | Path) -> Path:
    """Write `kg` to `path` atomically (parent folders created); return the path."""
    target = Path(path)
    try:
        write_text_atomic(target, dumps_graph(kg), newline="\n")
    except OSError as error:
        raise GraphError(f"{target}: cannot write: {error.strerror or error}") from None
    return target
