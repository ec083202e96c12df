"""The bundled WordNet 3.0 corpus (kontest_tui/data/wordnet/) and NLTK's reader over it.

Nothing is ever downloaded: `load_wordnet()` puts the bundled folder first on `nltk.data.path`
and opens NLTK's `wordnet` corpus reader on `corpora/wordnet.zip` (rebuilt by
scripts/build_wordnet.py). The reader is loaded once per process and shared. NLTK's reader is not thread-safe (its
lookups seek and read shared file handles), so every query goes through `wordnet_reader()`,
which holds a lock while the caller uses the reader.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kontest_tui.errors import KontestError

WORDNET_DIR = Path(__file__).resolve().parent.parent / "data" / "wordnet"
WORDNET_ZIP = WORDNET_DIR / "corpora" / "wordnet.zip"

_lock = threading.Lock()
_query_lock = threading.RLock()
_reader: Any = None


class WordNetMissingError(KontestError):
    """The bundled WordNet corpus is not where the package expects it."""

    title = "WordNet"


def wordnet_available() -> bool:
    """Whether the bundled corpus file is present."""
    return WORDNET_ZIP.is_file()


def load_wordnet() -> Any:
    """Return NLTK's WordNet corpus reader over the bundled corpus (loaded once)."""
    global _reader
    with _lock:
        if _reader is not None:
            return _reader
        if not wordnet_available():
            raise WordNetMissingError(
                f"bundled WordNet not found at {WORDNET_ZIP}; run scripts/build_wordnet.py"
            )
        import nltk.data
        from nltk.corpus.reader.wordnet import WordNetCorpusReader

        root = str(WORDNET_DIR)
        if root not in nltk.data.path:
            nltk.data.path.insert(0, root)
        # Open the reader on the zip directly so no other NLTK_DATA location can shadow it.
        corpus_root = nltk.data.find("corpora/wordnet.zip/wordnet/", paths=[root])

        class EnglishWordNetReader(WordNetCorpusReader):  # type: ignore[misc]
            def map_wn(self, version: str = "wordnet") -> None:
                """No map from another WordNet version: NLTK builds one at start (index.sense
                read twice, 60% of the reader's start) for the multilingual data only, which
                this reader never loads."""
                return None

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "multilingual functions are not available"
            _reader = EnglishWordNetReader(corpus_root, None)
        return _reader


@contextmanager
def wordnet_reader() -> Iterator[Any]:
    """The shared reader, for this thread alone until the block ends (see the module doc)."""
    reader = load_wordnet()
    with _query_lock:
        yield reader
