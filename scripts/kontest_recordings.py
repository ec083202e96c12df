"""Turn the KONTEST prototype's recorded transcripts into replay files (`replay:FILE.jsonl`).

    .venv/bin/python scripts/kontest_recordings.py PROTOTYPE/ConvFiles [--out tests/data/recordings]

The prototype (github.com/sparkssss/KonTest, `ConvFiles/{Places,Music}/`) keeps, per model,
four text files of alternating question and answer lines: `<Model>Type1.txt` and
`<Model>Type2.txt` the atomic questions of its two templates, `<Model>Type12.txt` and
`<Model>Type21.txt` the sequential conversations (question, answer, question, answer), one
file per order. Its answers are one line each (it wrote them so). The model names of the
files: Query = Falcon, llama2, GPT35 = GPT-3.5, Gemini.

Each file gives replay lines in its own order (the prototype asked path by path, so the n-th
ask of a repeated question gets the n-th answer): atomic lines `{"kind": "atomic",
"messages": [q], "answer": a}`, sequential ones one line per turn, `{"kind": "sequential",
"messages": [q1], "answer": a1}` and `{"kind": "sequential", "messages": [q1, q2], "answer":
a2}`. A file the prototype does not have (music llama2 has no Type21) gives no lines: its
conversations are not in the recording, and a replay fails them instead of inventing answers.

The recordings hold the papers' texts: replay them with the template set `paper`
(`kontest run --kg places --per-path --templates paper --model replay:...`); the default
natural set words its questions otherwise and would find none of them in a recording.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

MODELS = {"Query": "falcon", "llama2": "llama2", "GPT35": "gpt35", "Gemini": "gemini"}
DOMAINS = {"Places": "places", "Music": "music"}


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """(question, answer) per two lines of a prototype file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) % 2:
        raise ValueError(f"{path}: an odd number of lines ({len(lines)})")
    return [(lines[i].strip(), lines[i + 1].strip()) for i in range(0, len(lines), 2)]


def recording_lines(folder: Path, model: str) -> Iterator[dict[str, object]]:
    """The replay lines of one model's files in `folder` (see the module docstring)."""
    for order in ("1", "2"):
        path = folder / f"{model}Type{order}.txt"
        if path.exists():
            for question, answer in read_pairs(path):
                yield {"kind": "atomic", "messages": [question], "answer": answer}
    for order in ("12", "21"):
        path = folder / f"{model}Type{order}.txt"
        if not path.exists():
            continue
        pairs = read_pairs(path)
        if len(pairs) % 2:
            raise ValueError(f"{path}: a conversation without its second turn")
        for i in range(0, len(pairs), 2):
            (first, answer1), (second, answer2) = pairs[i], pairs[i + 1]
            yield {"kind": "sequential", "messages": [first], "answer": answer1}
            yield {"kind": "sequential", "messages": [first, second], "answer": answer2}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("convfiles", type=Path, help="the prototype's ConvFiles folder")
    parser.add_argument(
        "--out", type=Path, default=Path("tests/data/recordings"), help="output folder"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for folder_name, domain in DOMAINS.items():
        for prefix, model in MODELS.items():
            folder = args.convfiles / folder_name
            lines = list(recording_lines(folder, prefix))
            if not lines:
                continue
            target = args.out / f"{domain}-{model}.jsonl"
            with target.open("w", encoding="utf-8", newline="\n") as out:
                for line in lines:
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
            print(f"{target}: {len(lines)} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
