"""The bundled sample KGs: built from exactly the TSV paths, same label = different entity, ISO ids."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pycountry
import pytest

from kontest_tui.generate.summary import describe_graph
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kg.io import load_graph

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "scripts" / "data"


def tsv_paths(name: str) -> list[list[str]]:
    lines = (DATA / f"paths_{name}.tsv").read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line]


def label_chain(kg: KnowledgeGraph, leaf: str) -> list[str]:
    parents = {edge.child: edge.parent for edge in kg.edges}
    chain = [leaf]
    while chain[-1] in parents:
        chain.append(parents[chain[-1]])
    return [kg.label(node_id) for node_id in reversed(chain)]


@pytest.mark.parametrize("name", ["places", "music"])
def test_nodes_are_the_distinct_ancestor_chains(name: str) -> None:
    paths = tsv_paths(name)
    assert len(paths) == 50
    prefixes = {tuple(path[: i + 1]) for path in paths for i in range(len(path))}
    links = {(tuple(path[:i]), tuple(path[: i + 1])) for path in paths for i in range(1, len(path))}
    kg = load_graph(name)
    assert len(kg.nodes) == len(prefixes)
    assert len(kg.edges) == len(links)
    # every node's chain of labels up to its root is one of the TSV prefixes, labels untouched
    assert {tuple(label_chain(kg, node_id)) for node_id in kg.nodes} == prefixes
    leaves = [node_id for node_id in kg.nodes if not kg.children(node_id)]
    assert sorted(label_chain(kg, leaf) for leaf in leaves) == sorted(paths)


def test_places_and_music_sizes_by_hand() -> None:
    # places: 10 countries, 31 regions, 43 districts, 50 leaves; music: 45 artists, 50 albums, 48 songs
    places, music = load_graph("places"), load_graph("music")
    assert (len(places.nodes), len(places.edges), len(places.roots())) == (134, 124, 10)
    assert (len(music.nodes), len(music.edges), len(music.roots())) == (143, 98, 45)


def test_relation_counts_match_the_paper() -> None:
    places, music = load_graph("places"), load_graph("music")
    assert describe_graph(places).paths == 50
    assert describe_graph(places).relations == 265
    assert describe_graph(places, per_path=True).relations == 294
    assert describe_graph(music).paths == 50
    assert describe_graph(music).relations == 146
    assert describe_graph(music, per_path=True).relations == 146


def nodes_labelled(kg: KnowledgeGraph, label: str) -> list[str]:
    return [node.id for node in kg.nodes.values() if node.label == label]


def test_garnich_commune_and_village_are_two_nodes() -> None:
    kg = load_graph("places")
    commune, village = nodes_labelled(kg, "Garnich")
    assert kg.nodes[commune].type == "district"
    assert kg.nodes[village].type == "locality"
    assert kg.children(commune) == [village]
    assert label_chain(kg, village) == ["Luxembourg", "Canton of Capellen", "Garnich", "Garnich"]


@pytest.mark.parametrize("title", ["Butterfly", "Nobody but Me"])
def test_album_and_song_with_one_title_are_two_nodes(title: str) -> None:
    kg = load_graph("music")
    album, song = sorted(nodes_labelled(kg, title), key=lambda node_id: kg.nodes[node_id].type)
    assert (kg.nodes[album].type, kg.nodes[song].type) == ("album", "song")
    assert kg.children(album) == [song]
    assert [edge.relation for edge in kg.edges if edge.child == song] == ["album->song"]


def test_artist_and_album_named_il_divo() -> None:
    kg = load_graph("music")
    types = sorted(kg.nodes[node_id].type for node_id in nodes_labelled(kg, "Il Divo"))
    assert types == ["album", "artist"]


def test_awkward_labels_are_kept_exactly() -> None:
    places, music = load_graph("places"), load_graph("music")
    assert nodes_labelled(places, "Queenstown, Singapore")
    assert nodes_labelled(places, "Hüslers (AI-1755)")
    assert nodes_labelled(music, "When We All Fall Asleep, Where Do We Go?")
    assert nodes_labelled(music, "Don't Sit Down 'Cause I've Moved Your Chair")


def test_places_types_and_relations() -> None:
    kg = load_graph("places")
    vacy = kg.nodes[nodes_labelled(kg, "Vacy")[0]]
    assert vacy.type == "locality"  # a leaf at level 2 is still a locality
    assert {edge.relation for edge in kg.edges} == {"contains"}
    assert {kg.nodes[root].type for root in kg.roots()} == {"country"}


def test_music_relation_types() -> None:
    summary = describe_graph(load_graph("music"))
    # 50 artist->album links; 48 three-node paths give one album->song and one artist->song each
    assert summary.relations_by_type == {"album->song": 48, "artist->album": 50, "artist->song": 48}


def same_pycountry(kg: KnowledgeGraph) -> bool:
    """True when the installed pycountry is the one the sample was built from (its data changes)."""
    return f"pycountry {importlib.metadata.version('pycountry')} " in kg.source


def test_subdivisions_ids_are_iso_codes() -> None:
    kg = load_graph("subdivisions")
    roots = kg.roots()
    assert len(roots) >= 30
    assert {"GB", "FR", "ES", "IT", "IE"} <= set(roots)
    parent_of = {edge.child: edge.parent for edge in kg.edges}
    for node_id in kg.nodes:
        if node_id in roots:
            assert re.fullmatch(r"[A-Z]{2}", node_id)
        else:
            assert re.fullmatch(r"[A-Z]{2}-[A-Z0-9]{1,3}", node_id), node_id
            assert node_id.startswith(parent_of[node_id][:2] + "-")
    assert {edge.relation for edge in kg.edges} == {"contains"}


def test_subdivisions_is_the_iso_hierarchy() -> None:
    kg = load_graph("subdivisions")
    if not same_pycountry(kg):
        pytest.skip("installed pycountry differs from the one the sample was built from")
    roots = kg.roots()
    for root in roots:
        country = pycountry.countries.get(alpha_2=root)
        assert country is not None and kg.nodes[root].label == country.name
        assert kg.nodes[root].type == "country"
    parent_of = {edge.child: edge.parent for edge in kg.edges}
    for node_id, node in kg.nodes.items():
        if node_id in roots:
            continue
        sub = pycountry.subdivisions.get(code=node_id)
        assert sub is not None, node_id
        assert node.label == sub.name
        assert node.type == sub.type.lower()
        assert parent_of[node_id] == (sub.parent_code or sub.country_code)
    # every subdivision of every chosen country is there
    expected = sum(len(pycountry.subdivisions.get(country_code=root)) for root in roots)
    assert len(kg.nodes) == len(roots) + expected


def test_subdivisions_nesting_examples() -> None:
    kg = load_graph("subdivisions")
    assert "GB-ENG" in kg.children("GB")
    assert "GB-KEN" in kg.children("GB-ENG")
    assert kg.nodes["GB-KEN"].label == "Kent"
    assert "IE-D" in kg.children("IE-L")  # Dublin in Leinster
    assert describe_graph(kg).max_depth >= 2


def test_places_aliases_come_from_pycountry_only() -> None:
    kg = load_graph("places")
    aliases = {node.label: node.aliases for node in kg.nodes.values()}
    assert aliases["County Cavan"] == ("Cavan",)  # ISO 3166-2 IE-CN
    assert aliases["Canton of Capellen"] == ("Capellen",)  # ISO 3166-2 LU-CA
    assert aliases["Connacht"] == ("Connaught",)  # ISO 3166-2 IE-C
    assert aliases["Southern Denmark"] == ("Syddanmark",)  # ISO 3166-2 DK-83
    assert aliases["Norway"] == ("Kingdom of Norway",)  # ISO 3166-1 official name
    assert aliases["Canton of Luxembourg"] == ("Luxembourg",)  # ISO 3166-2 LU-LU
    # No short name made up from a label: these are other places' names.
    for label in ("St. Louis County", "Queenstown, Singapore", "Aalborg Municipality"):
        assert aliases[label] == (), label
    assert aliases["Ireland"] == aliases["Kinawley"] == ()
    assert sum(1 for node in kg.nodes.values() if node.aliases) == 26


def test_music_aliases_come_from_the_sourced_file() -> None:
    kg = load_graph("music")
    aliases = {node.id: node.aliases for node in kg.nodes.values()}
    assert aliases["the-weeknd"] == ("Abel Makkonen Tesfaye", "Abel Tesfaye")
    assert aliases["lady-a"] == ("Lady Antebellum",)
    assert aliases["brooks-and-dunn.steers-and-stripes"] == ("Steers and Stripes",)
    assert aliases["eminem"] == ("Marshall Bruce Mathers III",)  # not the persona Slim Shady
    assert aliases["johnny-cash"] == ("J. R. Cash",)  # not the nickname The Man in Black
    assert aliases["muse"] == ()
    assert sum(1 for node in kg.nodes.values() if node.aliases) == 16


def test_every_music_alias_cites_a_page() -> None:
    lines = [
        line.split("\t")
        for line in (ROOT / "scripts" / "data" / "aliases_music.tsv")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines and all(
        len(fields) == 4 and fields[3].startswith(("https://", "http://")) for fields in lines
    )


def test_music_alias_file_refuses_an_unknown_chain_or_no_source(tmp_path: Path) -> None:
    from scripts.build_sample_kgs import read_aliases

    tsv = tmp_path / "aliases.tsv"
    page = "https://example.org/muse"
    tsv.write_text(f"# comment\nMuse > Absolution\tAbs\ttitle\t{page}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no node 'Muse > Absolution'"):
        read_aliases(tsv, [["Muse", "The 2nd Law"]])
    tsv.write_text(f"Muse\tMuse\tsame\t{page}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="repeats a name"):
        read_aliases(tsv, [["Muse", "The 2nd Law"]])
    tsv.write_text("Muse > The 2nd Law\tThe Second Law\tspelling\n", encoding="utf-8")
    with pytest.raises(ValueError, match="expected chain, alias, kind and source"):
        read_aliases(tsv, [["Muse", "The 2nd Law"]])
    tsv.write_text("Muse > The 2nd Law\tThe Second Law\tspelling\tmemory\n", encoding="utf-8")
    with pytest.raises(ValueError, match="a page's address"):
        read_aliases(tsv, [["Muse", "The 2nd Law"]])
    tsv.write_text(f"Muse > The 2nd Law\tThe Second Law\tspelling\t{page}\n", encoding="utf-8")
    assert read_aliases(tsv, [["Muse", "The 2nd Law"]]) == {
        ("Muse", "The 2nd Law"): ("The Second Law",)
    }


def test_build_script_reproduces_the_committed_samples(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_sample_kgs.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    names = ["music"]
    if same_pycountry(load_graph("subdivisions")):  # places' aliases come from pycountry too
        names += ["places", "subdivisions"]
    for name in names:
        built = (tmp_path / f"{name}.json").read_bytes()
        assert built == (ROOT / "kontest_tui" / "sample_kgs" / f"{name}.json").read_bytes(), name
