"""SPARQL text for the Wikidata builder: validated ids in, standard SPARQL 1.1 out.

Only validated QIDs, property ids and language tags are ever written into a query (there is
no other user text in them), and the prefixes are explicit, so the same text runs on
query.wikidata.org and on any SPARQL 1.1 store loaded with Wikidata-shaped triples.

For Blazegraph (the Wikidata Query Service) the queries carry the optimizer hint the KONTEST
prototype used, `hint:Query hint:optimizer "None"`: Blazegraph then joins the patterns in the
order written (the VALUES list of parents first, then the link to the children, then the
class check `wdt:P31/wdt:P279*` walked upwards from each child) instead of possibly starting
the class path from the class end (every instance of every subclass of, say, administrative
territorial entity), which runs into the service's 60 s limit. Any other SPARQL store reads
the hint as an ordinary triple pattern that matches nothing, so the builder sends it only to
Blazegraph endpoints (`sparql_client.is_blazegraph`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kontest_tui.errors import InvalidInputError

from .domains import PID_PATTERN, QID_PATTERN, Level

ENTITY_IRI = "http://www.wikidata.org/entity/"
PREFIXES = (
    "PREFIX wd: <http://www.wikidata.org/entity/>\n"
    "PREFIX wdt: <http://www.wikidata.org/prop/direct/>\n"
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\n"
)
HINT_IRI = "http://www.bigdata.com/queryHints#"
HINT_PREFIX = f"PREFIX hint: <{HINT_IRI}>\n"
OPTIMIZER_HINT = '  hint:Query hint:optimizer "None" .\n'
_LANG_PATTERN = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$")


def validate_qid(text: str) -> str:
    """Return `text` stripped if it is a Wikidata item id (Q42), else raise InvalidInputError."""
    qid = text.strip() if isinstance(text, str) else ""
    if not QID_PATTERN.fullmatch(qid):
        raise InvalidInputError(
            f"not a Wikidata item id (expected Q followed by digits, e.g. Q27): {text!r}"
        )
    return qid


def validate_lang(text: str) -> str:
    """Return a language tag (en, de, pt-br) if valid, else raise InvalidInputError."""
    lang = text.strip().lower() if isinstance(text, str) else ""
    if not _LANG_PATTERN.fullmatch(lang):
        raise InvalidInputError(f"not a language tag (expected e.g. en, de, pt-br): {text!r}")
    return lang


def qid_number(qid: str) -> int:
    """The numeric part of a QID, for sorting (Q2 before Q10)."""
    return int(qid[1:])


def qid_from_iri(iri: str) -> str | None:
    """The QID of a Wikidata entity IRI, or None for anything else (lexemes, properties...)."""
    if not iri.startswith(ENTITY_IRI):
        return None
    qid = iri[len(ENTITY_IRI) :]
    return qid if QID_PATTERN.fullmatch(qid) else None


def _values(qids: Iterable[str]) -> str:
    checked = [validate_qid(qid) for qid in qids]
    return " ".join(f"wd:{qid}" for qid in checked)


def _head(optimizer_hint: bool) -> str:
    return PREFIXES + HINT_PREFIX if optimizer_hint else PREFIXES


def build_children_query(
    level: Level, parents: list[str], limit: int, *, optimizer_hint: bool = True
) -> str:
    """One query for the children of a chunk of parents: `?parent ?child` rows.

    The patterns are written in the order Blazegraph should join them (see the module
    docstring); `optimizer_hint` adds the hint that makes it keep that order.
    """
    if not PID_PATTERN.fullmatch(level.property):
        raise InvalidInputError(f"not a Wikidata property id: {level.property!r}")
    if level.direction == "child_to_parent":
        link = f"  ?child wdt:{level.property} ?parent .\n"
    else:
        link = f"  ?parent wdt:{level.property} ?child .\n"
    lines = [_head(optimizer_hint), "SELECT DISTINCT ?parent ?child WHERE {\n"]
    if optimizer_hint:
        lines.append(OPTIMIZER_HINT)
    lines += [f"  VALUES ?parent {{ {_values(parents)} }}\n", link]
    classes = [validate_qid(qid) for qid in level.instance_of]
    if len(classes) == 1:
        lines.append(f"  ?child wdt:P31/wdt:P279* wd:{classes[0]} .\n")
    elif classes:
        lines.append(f"  VALUES ?class {{ {_values(classes)} }}\n")
        lines.append("  ?child wdt:P31/wdt:P279* ?class .\n")
    for prop in level.exclude_properties:
        if not PID_PATTERN.fullmatch(prop):
            raise InvalidInputError(f"not a Wikidata property id: {prop!r}")
        lines.append(f"  FILTER NOT EXISTS {{ ?child wdt:{prop} ?excluded{prop} . }}\n")
    lines.append("}\n")
    lines.append(f"LIMIT {int(limit)}\n")
    return "".join(lines)


def build_labels_query(
    items: list[str], lang: str, limit: int, *, optimizer_hint: bool = True
) -> str:
    """One query for the labels and aliases of a chunk of items: `?item ?kind ?text` rows."""
    lang = validate_lang(lang)
    return (
        f"{_head(optimizer_hint)}"
        "SELECT ?item ?kind ?text WHERE {\n"
        f"{OPTIMIZER_HINT if optimizer_hint else ''}"
        f"  VALUES ?item {{ {_values(items)} }}\n"
        "  {\n"
        "    ?item rdfs:label ?text .\n"
        '    BIND("label" AS ?kind)\n'
        "  } UNION {\n"
        "    ?item skos:altLabel ?text .\n"
        '    BIND("alias" AS ?kind)\n'
        "  }\n"
        f'  FILTER(LANG(?text) = "{lang}")\n'
        "}\n"
        f"LIMIT {int(limit)}\n"
    )
