"""Rebuild the bundled sample KGs in sample_kgs/: places, music and subdivisions.

    .venv/bin/python scripts/build_sample_kgs.py [--out DIR] [--check]

places.json and music.json come from exactly the paths in scripts/data/paths_*.tsv (labels
only, root first, tab-separated). A node is identified by its chain of ancestors, so the
same label under another parent is another entity; its id is the chain of label slugs
joined by "." (e.g. "luxembourg.canton-of-capellen.garnich.garnich"), not a Wikidata QID;
"." because "/", ">", ":" and "+" are separators in relation and conversation ids.
subdivisions.json is the ISO 3166-2 country -> subdivision hierarchy from pycountry for the
countries in SUBDIVISION_COUNTRIES; ids are ISO codes. Output is deterministic: running the
script twice gives byte-identical files. `--check` compares instead of writing.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import sys
import unicodedata
from pathlib import Path

import pycountry

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node  # noqa: E402
from kontest_tui.kg.io import dumps_graph  # noqa: E402
from kontest_tui.kg.validate import check_graph  # noqa: E402

DATA_DIR = ROOT / "scripts" / "data"
# Fixed so that rebuilding gives identical bytes; bump it when the inputs change.
BUILT = "2026-11-22"

PLACE_TYPES = ("country", "region", "district", "locality")
MUSIC_TYPES = ("artist", "album", "song")
MUSIC_RELATIONS = ("artist->album", "album->song")

# Countries with nested subdivisions first (GB, FR, ES, IT, IE, ...), then the countries of
# the places sample and a spread of others.
SUBDIVISION_COUNTRIES = (
    "GB", "FR", "ES", "IT", "IE", "BE", "CZ", "LT", "EE", "IS", "PH", "ID", "RS", "MA",
    "DE", "PT", "NL", "PL", "DK", "NO", "SE", "FI", "GR", "AT", "CH", "LU",
    "US", "CA", "AU", "JP", "QA", "SG",
)  # fmt: skip

_TRANSLITERATE = str.maketrans(
    {
        "ø": "o",
        "æ": "ae",
        "œ": "oe",
        "ß": "ss",
        "ð": "d",
        "þ": "th",
        "ł": "l",
        "đ": "d",
        "&": " and ",
    }
)


def slugify(label: str) -> str:
    """A readable ASCII slug of a label: "Sørfold" -> "sorfold", "Hüslers (AI-1755)" -> "huslers-ai-1755"."""
    text = unicodedata.normalize("NFKD", label.lower().translate(_TRANSLITERATE))
    text = text.encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    if not slug:
        raise ValueError(f"label {label!r} has no readable characters for an id")
    return slug


def read_paths(tsv: Path) -> list[list[str]]:
    """One path a line, labels kept exactly as written (only the line ending is dropped)."""
    paths = []
    for number, line in enumerate(tsv.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        labels = line.split("\t")
        if any(not label for label in labels):
            raise ValueError(f"{tsv}: line {number}: empty label")
        paths.append(labels)
    return paths


def build_path_graph(
    paths: list[list[str]],
    *,
    name: str,
    domain: str,
    source: str,
    node_type,
    edge_relation,
    aliases=None,
) -> KnowledgeGraph:
    """A KG whose nodes are the distinct ancestor chains of `paths` (in first-seen order).

    `node_type(level, is_leaf)` and `edge_relation(parent_level)` give types and relations.
    """
    chains: dict[tuple[str, ...], str] = {}
    edges: list[Edge] = []
    seen_edges: set[tuple[str, str]] = set()
    has_children: set[tuple[str, ...]] = set()
    for labels in paths:
        for level in range(len(labels)):
            chain = tuple(labels[: level + 1])
            if chain not in chains:
                chains[chain] = ".".join(slugify(label) for label in chain)
            if level:
                has_children.add(chain[:-1])
                key = (chains[chain[:-1]], chains[chain])
                if key not in seen_edges:
                    seen_edges.add(key)
                    edges.append(Edge(*key, relation=edge_relation(level - 1)))
    ids = list(chains.values())
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name}: two different chains give the same slug id")
    nodes = {
        node_id: Node(
            id=node_id,
            label=chain[-1],
            aliases=aliases(chain) if aliases else (),
            type=node_type(len(chain) - 1, chain not in has_children),
        )
        for chain, node_id in chains.items()
    }
    kg = KnowledgeGraph(
        name=name, domain=domain, nodes=nodes, edges=edges, source=source, built=BUILT
    )
    check_graph(kg, name)
    return kg


# Aliases of the places sample (KomMKonLLM, seed 004: entities vary by their aliases), all from
# one source that ships with the project, pycountry (ISO 3166): a country's ISO 3166-1 name,
# official name and common name; a region's or district's ISO 3166-2 subdivision name, when
# that subdivision is the node (its name is the label, or the label without its administrative
# words, or the pair is listed in ISO_SUBDIVISIONS below). No alias is made up from a label
# (an earlier version also took "the label without its administrative words" as an alias:
# "Luxembourg" for the Canton of Luxembourg, "St. Louis" for St. Louis County, "Queenstown" for
# Queenstown, Singapore, names of other places). An alias that is another node's label (the
# canton "Luxembourg" is an ISO 3166-2 name) is kept in the file and not used for that node
# (kontest_tui/kg/aliases.py).
ADMIN_PREFIXES = ("County ", "Canton of ")
ADMIN_SUFFIXES = (" Municipality", " Municality", " County", " Shire")
# Sample regions whose English label differs from the ISO 3166-2 name (checked against the
# ISO 3166-2:DK, :IS, :IE, :QA entries pycountry ships): (country code, label) -> ISO code.
ISO_SUBDIVISIONS = {
    ("DK", "North Denmark Region"): "DK-81",
    ("DK", "Central Denmark Region"): "DK-82",
    ("DK", "Southern Denmark"): "DK-83",
    ("IS", "Capital Region"): "IS-1",
    ("IS", "Westfjords"): "IS-4",
    ("IS", "Northeastern Region"): "IS-6",
    ("IS", "Reykjavík"): "IS-RKV",
    ("IE", "Connacht"): "IE-C",
    ("QA", "Ad Dawhah"): "QA-DA",
}


def short_name(label: str) -> str | None:
    """The label without its administrative words, or None when it has none (to find the
    ISO 3166-2 subdivision a label names: "County Cavan" is the subdivision "Cavan")."""
    for prefix in ADMIN_PREFIXES:
        if label.startswith(prefix) and len(label) > len(prefix):
            return label[len(prefix) :]
    for suffix in ADMIN_SUFFIXES:
        if label.endswith(suffix) and len(label) > len(suffix):
            return label[: -len(suffix)]
    if ", " in label:
        return label.split(", ", 1)[0]
    return None


def place_aliases(chain: tuple[str, ...]) -> tuple[str, ...]:
    """The aliases of a places node given its chain of labels (root = the country): pycountry's
    names of it (see the comment above)."""
    label = chain[-1]
    country = pycountry.countries.lookup(chain[0])
    found: list[str] = []
    if len(chain) == 1:
        found += [
            getattr(country, key, None) or "" for key in ("name", "official_name", "common_name")
        ]
    elif len(chain) <= 3:  # regions and districts: ISO 3166-2 subdivisions
        short = short_name(label)
        code = ISO_SUBDIVISIONS.get((country.alpha_2, label))
        wanted = {label.casefold(), (short or label).casefold()}
        for sub in pycountry.subdivisions.get(country_code=country.alpha_2):
            if sub.code == code or (code is None and sub.name.casefold() in wanted):
                found.append(sub.name)
    aliases: list[str] = []
    for alias in found:
        if alias and alias != label and alias not in aliases:
            aliases.append(alias)
    return tuple(aliases)


def place_type(level: int, is_leaf: bool) -> str:
    """country / region / district / locality by level; a leaf is always a locality."""
    return "locality" if is_leaf else PLACE_TYPES[level]


def build_places() -> KnowledgeGraph:
    return build_path_graph(
        read_paths(DATA_DIR / "paths_places.tsv"),
        name="places",
        domain="places",
        source=(
            "Wikidata labels (P131 located in), the 50 country -> region -> district -> place "
            "paths sampled by the KONTEST prototype (scripts/data/paths_places.tsv). Ids are not "
            "QIDs: each is the chain of slugged labels from the root, joined by '.', so the same label under "
            "another parent is another node. Types by level: country, region, district, "
            "locality (a leaf is always a locality). Aliases: pycountry's ISO 3166-1 names of the "
            "countries and ISO 3166-2 names of the regions and districts that are subdivisions, "
            "nothing else (scripts/build_sample_kgs.py)."
        ),
        node_type=place_type,
        aliases=place_aliases,
        edge_relation=lambda level: "contains",
    )


def read_aliases(tsv: Path, paths: list[list[str]]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Chain of labels -> aliases from a curated alias file (`# ` comments; chain " > " alias
    kind source, tab-separated, the source a page's address); a chain not in `paths`, a line
    without a source or a duplicate alias is an error."""
    chains = {tuple(labels[: level + 1]) for labels in paths for level in range(len(labels))}
    found: dict[tuple[str, ...], list[str]] = {}
    for number, line in enumerate(tsv.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 4 or not all(fields):
            raise ValueError(f"{tsv}: line {number}: expected chain, alias, kind and source")
        if not fields[3].startswith(("https://", "http://")):
            raise ValueError(f"{tsv}: line {number}: the source must be a page's address")
        chain = tuple(fields[0].split(" > "))
        if chain not in chains:
            raise ValueError(f"{tsv}: line {number}: no node {fields[0]!r} in the paths")
        aliases = found.setdefault(chain, [])
        if fields[1] in aliases or fields[1] == chain[-1]:
            raise ValueError(f"{tsv}: line {number}: alias {fields[1]!r} repeats a name")
        aliases.append(fields[1])
    return {chain: tuple(aliases) for chain, aliases in found.items()}


def build_music() -> KnowledgeGraph:
    paths = read_paths(DATA_DIR / "paths_music.tsv")
    aliases = read_aliases(DATA_DIR / "aliases_music.tsv", paths)
    return build_path_graph(
        paths,
        name="music",
        domain="music",
        source=(
            "Wikidata labels (P175 performer, P361 part of), the 50 artist -> album -> song "
            "paths sampled by the KONTEST prototype (scripts/data/paths_music.tsv). Ids are not "
            "QIDs: each is the chain of slugged labels from the root, joined by '.', so an album and a song "
            "with the same title are different nodes. Types by level: artist, album, song. Aliases: "
            "birth, former and other names of the artists and spellings of titles, each as a web "
            "page found by search writes it, cited per line in scripts/data/aliases_music.tsv "
            "(scripts/build_sample_kgs.py)."
        ),
        node_type=lambda level, is_leaf: MUSIC_TYPES[level],
        aliases=lambda chain: aliases.get(chain, ()),
        edge_relation=lambda level: MUSIC_RELATIONS[level],
    )


def _country_aliases(country) -> tuple[str, ...]:
    names = {getattr(country, key, None) for key in ("official_name", "common_name")}
    return tuple(sorted(alias for alias in names if alias and alias != country.name))


def build_subdivisions(countries: tuple[str, ...] = SUBDIVISION_COUNTRIES) -> KnowledgeGraph:
    """Country -> subdivision (-> nested subdivision) trees, depth first, children by code."""
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    for alpha_2 in sorted(countries):
        country = pycountry.countries.get(alpha_2=alpha_2)
        if country is None:
            raise ValueError(f"unknown country code {alpha_2}")
        subdivisions = {sub.code: sub for sub in pycountry.subdivisions.get(country_code=alpha_2)}
        children: dict[str, list[str]] = {alpha_2: []}
        for code, sub in subdivisions.items():
            parent = sub.parent_code or alpha_2
            if parent != alpha_2 and parent not in subdivisions:
                raise ValueError(f"{code}: parent {parent} is not a subdivision of {alpha_2}")
            children.setdefault(parent, []).append(code)
        nodes[alpha_2] = Node(
            id=alpha_2, label=country.name, aliases=_country_aliases(country), type="country"
        )
        stack = [alpha_2]
        while stack:
            parent = stack.pop()
            kids = sorted(children.get(parent, []))
            for code in kids:
                sub = subdivisions[code]
                nodes[code] = Node(id=code, label=sub.name, type=sub.type.lower())
                edges.append(Edge(parent, code, relation="contains"))
            stack.extend(reversed(kids))
    version = importlib.metadata.version("pycountry")
    kg = KnowledgeGraph(
        name="subdivisions",
        domain="places",
        nodes=nodes,
        edges=edges,
        source=(
            f"ISO 3166-2 subdivisions from pycountry {version} for {len(countries)} countries. "
            "Ids are ISO 3166-1 alpha-2 country codes and ISO 3166-2 subdivision codes; nested "
            "subdivisions hang under their parent_code; types are pycountry's subdivision types "
            "lower-cased."
        ),
        built=BUILT,
    )
    check_graph(kg, "subdivisions")
    return kg


def build_all() -> dict[str, KnowledgeGraph]:
    return {"places": build_places(), "music": build_music(), "subdivisions": build_subdivisions()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "kontest_tui" / "sample_kgs", help="output folder"
    )
    parser.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for name, kg in build_all().items():
        target = args.out / f"{name}.json"
        text = dumps_graph(kg)
        summary = f"{name}: {len(kg.nodes)} nodes, {len(kg.edges)} edges, {len(kg.roots())} roots"
        if args.check:
            same = target.is_file() and target.read_text(encoding="utf-8") == text
            print(f"{summary}: {'up to date' if same else 'DIFFERS'}")
            if not same:
                stale.append(name)
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
            print(f"{summary} -> {target}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
