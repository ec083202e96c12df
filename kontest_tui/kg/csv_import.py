"""Import a KG from a CSV edge list: `parent_id,parent_label,child_id,child_label[,relation]`.

One edge a row. A header row is optional: when the first row names the columns
(`parent_id`, `child_id`, ... in any order; `parent`/`child` also accepted) it is used to
map them, otherwise columns are positional. Nodes get no aliases and no type. Every error
names the file and the line it comes from.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from pathlib import Path

from kontest_tui.errors import GraphError
from kontest_tui.validate_input import check_name

from .graph import Edge, KnowledgeGraph, Node, printable, printable_line
from .textfile import read_text
from .validate import check_edges

COLUMNS = ("parent_id", "parent_label", "child_id", "child_label", "relation")
_REQUIRED = COLUMNS[:4]
_HEADER_ALIASES = {"parent": "parent_id", "child": "child_id", "type": "relation"}
_LAYOUT = ",".join(_REQUIRED) + "[,relation]"


def _normalise_header(cell: str) -> str:
    name = cell.strip().lower().replace(" ", "_").replace("-", "_")
    return _HEADER_ALIASES.get(name, name)


def detect_header(row: list[str]) -> bool:
    """True when `row` names the columns rather than holding an edge."""
    names = {_normalise_header(cell) for cell in row}
    return "parent_id" in names and "child_id" in names


def _read_header(row: list[str], where: str) -> dict[str, int]:
    positions: dict[str, int] = {}
    for index, cell in enumerate(row):
        name = _normalise_header(cell)
        if name not in COLUMNS:
            raise GraphError(f"{where}: unknown column '{cell.strip()}' (expected {_LAYOUT})")
        if name in positions:
            raise GraphError(f"{where}: column '{cell.strip()}' appears twice")
        positions[name] = index
    missing = [name for name in _REQUIRED if name not in positions]
    if missing:
        raise GraphError(f"{where}: header lacks column {', '.join(missing)} (expected {_LAYOUT})")
    return positions


def _read_rows(text: str, origin: str) -> list[tuple[int, list[str]]]:
    """Non-blank rows with the line each starts on."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append((start, row))
            start = reader.line_num + 1
    except csv.Error as error:
        raise GraphError(f"{origin}: line {start}: {error}") from None
    return rows


def import_csv(
    path: str | Path,
    name: str | None = None,
    domain: str | None = None,
    built: str | None = None,
) -> KnowledgeGraph:
    """Read an edge-list CSV into a validated `KnowledgeGraph`.

    `name` defaults to the file name without suffix, `domain` to "", `built` to today's UTC date.
    """
    path = Path(path)
    origin = str(path)
    if domain:
        check_name(domain, "domain", GraphError)
    rows = _read_rows(read_text(path, origin), origin)
    if not rows:
        raise GraphError(f"{origin}: no rows (expected {_LAYOUT})")
    positions: dict[str, int] | None = None
    if detect_header(rows[0][1]):
        positions = _read_header(rows[0][1], f"{origin}: line {rows[0][0]}")
        rows = rows[1:]
        if not rows:
            raise GraphError(f"{origin}: no edge rows after the header")
    nodes: dict[str, Node] = {}
    label_line: dict[str, int] = {}
    edges: list[Edge] = []
    where: list[str] = []
    for line, row in rows:
        here = f"{origin}: line {line}"
        cells = [cell.strip() for cell in row]
        if positions is None:
            if len(cells) not in (4, 5):
                raise GraphError(f"{here}: expected 4 or 5 columns ({_LAYOUT}), got {len(cells)}")
            values = dict(zip(COLUMNS, cells, strict=False))
        else:
            if len(cells) != len(positions):
                raise GraphError(
                    f"{here}: expected {len(positions)} columns as in the header, got {len(cells)}"
                )
            values = {column: cells[index] for column, index in positions.items()}
        for column in _REQUIRED:
            if not values[column]:
                raise GraphError(f"{here}: {column} is empty")
        for id_column, label_column in (("parent_id", "parent_label"), ("child_id", "child_label")):
            node_id, label = printable_line(values[id_column]), printable(values[label_column])
            known = nodes.get(node_id)
            if known is None:
                nodes[node_id] = Node(id=node_id, label=label)
                label_line[node_id] = line
            elif known.label != label:
                raise GraphError(
                    f"{here}: node {node_id} is labelled '{label}' here "
                    f"but '{known.label}' on line {label_line[node_id]}"
                )
        edges.append(
            Edge(
                parent=printable_line(values["parent_id"]),
                child=printable_line(values["child_id"]),
                relation=printable_line(values.get("relation", "")),
            )
        )
        where.append(f"line {line}")
    check_edges(origin, list(nodes), edges, where)
    return KnowledgeGraph(
        name=printable_line(name or path.stem),
        domain=domain or "",
        nodes=nodes,
        edges=edges,
        source=f"imported from {path.name}",
        built=built if built is not None else datetime.now(UTC).date().isoformat(),
    )
