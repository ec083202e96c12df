"""The bundled WordNet corpus: complete, readable by NLTK, and never downloaded."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from kontest_tui.generate.wordnet_data import WORDNET_DIR, WORDNET_ZIP, load_wordnet


@pytest.fixture(scope="module")
def wordnet():
    return load_wordnet()


def test_bundle_has_licence_and_lf_files() -> None:
    assert (WORDNET_DIR / "LICENSE").read_text().startswith("WordNet Release 3.0")
    with zipfile.ZipFile(WORDNET_ZIP) as archive:
        names = set(archive.namelist())
        assert {"wordnet/lexnames", "wordnet/index.sense", "wordnet/data.noun"} <= names
        assert b"\r" not in archive.read("wordnet/index.adv")


def test_synset_count_is_wordnet_30(wordnet) -> None:
    """WordNet 3.0 has 117,659 synsets: one line each in the four data files (after the
    licence's lines, which start with two spaces), each line starting with its own byte
    offset, the offset NLTK seeks to; NLTK reads the first and last synset of each file."""
    count = 0
    with zipfile.ZipFile(WORDNET_ZIP) as archive:
        for pos, letter in (("noun", "n"), ("verb", "v"), ("adj", "a"), ("adv", "r")):
            offsets = []
            offset = 0
            for line in archive.read(f"wordnet/data.{pos}").split(b"\n"):
                if line and not line.startswith(b"  "):
                    assert int(line[:8]) == offset, (pos, line[:40])
                    offsets.append(offset)
                offset += len(line) + 1
            count += len(offsets)
            for seek in (offsets[0], offsets[-1]):
                assert wordnet.synset_from_pos_and_offset(letter, seek).offset() == seek
    assert count == 117659


def test_lemma_lookup(wordnet) -> None:
    first = wordnet.synsets("have", "v")[0]
    assert first.name() == "have.v.01"
    assert [lemma.name() for lemma in first.lemmas()] == ["have", "have_got", "hold"]
    assert wordnet.synset("dog.n.01").definition().startswith("a member of the genus Canis")


def test_loads_without_nltk_data(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NLTK_DATA"}
    env["HOME"] = str(tmp_path)
    code = (
        "from kontest_tui.generate.wordnet_data import load_wordnet;"
        "print(load_wordnet().synsets('capital', 'n')[0].name())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=str(WORDNET_DIR.parent.parent.parent),
    )
    assert done.stdout.strip() == "capital.n.01"


def test_wordnet_lookups_from_many_threads_at_once() -> None:
    """NLTK's reader shares file handles; concurrent lookups (the explorer's preview and its
    variant counts run in two workers) once failed with AssertionError inside NLTK."""
    import threading

    from kontest_tui.generate.synonyms import wordnet_synonyms
    from kontest_tui.generate.wordnet_data import wordnet_reader

    with wordnet_reader() as wordnet:
        verbs = []
        for synset in wordnet.all_synsets("v"):
            verbs.append(synset.lemma_names()[0])
            if len(verbs) == 1200:
                break
    wordnet_synonyms.cache_clear()
    errors: list[str] = []

    def look_up(words: list[str]) -> None:
        try:
            for word in words:
                wordnet_synonyms(word, "v", 2)
                wordnet_synonyms(word, "n", 2)
        except Exception as error:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(error))

    threads = [threading.Thread(target=look_up, args=(verbs[i::6],)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert "situated" in wordnet_synonyms("located", "v", senses=2)
