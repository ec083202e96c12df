"""A generated corpus of malformed inputs, each given to the `kontest` command it feeds.

Input classes: KG JSON files, KG CSV edge lists, template files (given with --templates and
as the user's own set), synonym lists, replay files, batch results, probe files, annotated
questions, covering-array IPMs, Wikidata domain files, special files (devices, pipes,
folders) and odd command-line values. Each case is run in a driver process (`--driver`:
limited to 3 GB of address space, 30 s a case, `run_cli` in process, output captured) and
sorted into: a clear error (non-zero exit, one `kontest: error:` line), accepted (exit 0),
unclear (non-zero exit without exactly one error line), traceback (an exception escaped the
command or "Traceback" was printed), hung (past the time limit) or out of memory. Every
output is also checked for terminal escapes (`safe_text.has_unsafe`) and for the API key in
any encoding. No case reaches the network: model URLs are 127.0.0.1 ports nothing listens
on, and Wikidata domain files are malformed before a query could be sent.

    .venv/bin/python benchmarks/hostile_inputs.py [--seed 7] [--per-class 0]

prints the counts per class and in total; `benchmarks/faults.py` runs it as one of its cases.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SECRET = "sk-hostile-" + "Zk3mP9qW2xL7vB4nR8tY"  # a fake key, given to every case
CASE_TIMEOUT_S = 30
ADDRESS_SPACE = 3 * 1024**3
CLOSED = "http://127.0.0.1:9"  # discard port: nothing listens, the connection is refused
OUTCOMES = ("clear error", "accepted", "unclear", "traceback", "hung", "out of memory")


def secret_forms(key: str) -> dict[str, str]:
    """The key as servers and proxies echo it: raw, percent-encoded once and twice, hex,
    HTML character references, JSON escapes and base64 of a Basic credential."""
    data = key.encode()
    return {
        "raw": key,
        "percent": "".join(f"%{byte:02X}" for byte in data),
        "percent twice": "".join(f"%25{byte:02X}" for byte in data),
        "hex": data.hex(),
        "hex bytes": " ".join(f"{byte:02x}" for byte in data),
        "html decimal": "".join(f"&#{ord(char)};" for char in key),
        "html hex": "".join(f"&#x{ord(char):x};" for char in key),
        "json": "".join(f"\\u{ord(char):04x}" for char in key),
        "base64": base64.b64encode(f"user:{key}".encode()).decode(),
    }


def count_secrets(text: str, key: str = SECRET) -> int:
    """Copies of `key` in `text`, in any of its forms."""
    return sum(text.count(form) for form in secret_forms(key).values())


# -- the corpus ------------------------------------------------------------------------------


def places() -> dict[str, Any]:
    return json.loads((ROOT / "kontest_tui" / "sample_kgs" / "places.json").read_text("utf-8"))


HOSTILE_LABEL = "Ire\u202eland\x1b]52;c;aGk=\x07\x1b[2J\u200b\x9b31m"


def kg_json_cases(rng: random.Random) -> list[tuple[str, bytes]]:
    """(name, file bytes) of malformed or hostile KG JSON files."""
    good = places()
    text = json.dumps(good)

    def dumped(data: object) -> bytes:
        return json.dumps(data, ensure_ascii=False).encode()

    def changed(path: str, value: object) -> bytes:
        data = json.loads(text)
        where: Any = data
        keys = path.split(".")
        for key in keys[:-1]:
            where = where[int(key)] if key.isdigit() else where[key]
        last = keys[-1]
        if value is KeyError:
            del where[int(last) if last.isdigit() else last]
        elif last.isdigit():
            where[int(last)] = value
        else:
            where[last] = value
        return dumped(data)

    first, second = good["nodes"][0]["id"], good["nodes"][1]["id"]
    chain = {
        "name": "chain",
        "nodes": [{"id": f"n{i}", "label": f"N{i}"} for i in range(3000)],
        "edges": [{"parent": f"n{i}", "child": f"n{i + 1}"} for i in range(2999)],
    }
    ladder_nodes = [{"id": f"l{i}", "label": f"L{i}"} for i in range(90)]
    ladder_edges = [
        {"parent": f"l{i}", "child": f"l{j}"} for i in range(0, 88, 2) for j in (i + 2, i + 3)
    ] + [{"parent": f"l{i}", "child": f"l{i + 1}"} for i in range(0, 88, 2)]
    cases = [
        ("empty file", b""),
        ("whitespace", b"  \n"),
        ("null", b"null"),
        ("a list", b"[]"),
        ("a string", b'"kg"'),
        ("no nodes", dumped({"edges": []})),
        ("no edges", dumped({"nodes": []})),
        ("nodes an object", changed("nodes", {})),
        ("edges a string", changed("edges", "x")),
        ("node a list", changed("nodes.0", [1, 2])),
        ("node id a number", changed("nodes.0.id", 5)),
        ("node id empty", changed("nodes.0.id", "")),
        ("node id null", changed("nodes.0.id", None)),
        ("label missing", changed("nodes.0.label", KeyError)),
        ("label a list", changed("nodes.0.label", ["x"])),
        ("label 1 MB", changed("nodes.0.label", "x" * 1_000_000)),
        ("label hostile", changed("nodes.0.label", HOSTILE_LABEL)),
        ("aliases a string", changed("nodes.0.aliases", "x")),
        ("aliases of numbers", changed("nodes.0.aliases", [1, 2])),
        ("aliases hostile", changed("nodes.0.aliases", [HOSTILE_LABEL, "\u2066x\u2069"])),
        ("type a number", changed("nodes.0.type", 3)),
        ("type hostile", changed("nodes.0.type", "\x1b[31mregion\u202e")),
        ("duplicate id", changed("nodes.1.id", first)),
        ("edge to nowhere", changed("edges.0.child", "nowhere")),
        ("edge a list", changed("edges.0", ["a", "b"])),
        ("self loop", changed("edges.0.child", good["edges"][0]["parent"])),
        ("cycle", dumped({**good, "edges": [*good["edges"], {"parent": second, "child": first}]})),
        ("relation a dict", changed("edges.0.relation", {"x": 1})),
        ("name a number", changed("name", 7)),
        ("name hostile", changed("name", "\x1b]0;pwned\x07kg\u202e")),
        ("domain a path", changed("domain", "../../etc")),
        ("domain hostile", changed("domain", "places\u202e")),
        ("nested deeply", b'{"nodes": ' + b"[" * 50_000 + b"]" * 50_000 + b', "edges": []}'),
        ("number 5000 digits", b'{"nodes": [], "edges": [], "built": ' + b"9" * 5000 + b"}"),
        ("NaN", b'{"nodes": [], "edges": [], "built": NaN}'),
        ("lone surrogate", text.replace('"label": "', '"label": "\\ud800', 1).encode()),
        ("not UTF-8", text.encode().replace(b"Ireland", b"Ir\xffland", 1)),
        ("UTF-16", text.encode("utf-16")),
        ("BOM", b"\xef\xbb\xbf" + text.encode()),
        ("NUL bytes", text.encode().replace(b"Ireland", b"Ire\x00land", 1)),
        ("deep chain of 3,000 nodes", dumped(chain)),
        ("diamond ladder (2^44 paths)", dumped({"nodes": ladder_nodes, "edges": ladder_edges})),
    ]
    encoded = text.encode()
    for index in range(12):  # cut at random places
        cut = rng.randrange(1, len(encoded))
        cases.append((f"cut at byte {cut} ({index})", encoded[:cut]))
    for index in range(12):  # random bytes changed
        data = bytearray(encoded)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        cases.append((f"bytes flipped ({index})", bytes(data)))
    return cases


def kg_csv_cases(rng: random.Random) -> list[tuple[str, bytes]]:
    good = (
        "parent_id,parent_label,child_id,child_label\nQ1,Ireland,Q2,Ulster\nQ2,Ulster,Q3,Kinawley\n"
    )
    cases = [
        ("empty", b""),
        ("header only", b"parent_id,parent_label,child_id,child_label\n"),
        ("three cells", b"a,b,c\n"),
        ("six cells", b"a,b,c,d,e,f\n"),
        ("unknown column", b"parent_id,child_id,colour\na,b,red\n"),
        ("unbalanced quote", b'a,"Ire,b,c\n'),
        ("cycle", b"a,A,b,B\nb,B,a,A\n"),
        ("self loop", b"a,A,a,A\n"),
        ("two labels", b"a,A,b,B\na,Other,c,C\n"),
        ("empty id", b",A,b,B\n"),
        ("hostile labels", f"a,{HOSTILE_LABEL},b,Ul\u200bster\n".encode()),
        ("NUL", b"a,A\x00,b,B\n"),
        ("not UTF-8", b"a,\xff\xfe,b,B\n"),
        ("BOM and CRLF", b"\xef\xbb\xbfa,A,b,B\r\n"),
        ("huge cell", b"a," + b"x" * 2_000_000 + b",b,B\n"),
        ("only commas", b",,,\n,,,\n"),
    ]
    encoded = good.encode()
    for index in range(6):
        data = bytearray(encoded)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.choice(b',"\n\x00\xff')
        cases.append((f"bytes flipped ({index})", bytes(data)))
    return cases


TEMPLATE_HEAD = 'domain = "places"\n'
TWO = (
    '[[templates]]\nid = "t1"\ntexts = {contains = "Does {parent} have a {child}?"}\n'
    '[[templates]]\nid = "t2"\ntexts = {contains = "Is there a {child} in {parent}?"}\n'
)


def template_cases(rng: random.Random) -> list[tuple[str, bytes]]:
    bodies = {
        "empty": "",
        "not TOML": "domain = \n[[",
        "no domain": TWO,
        "domain a number": "domain = 5\n" + TWO,
        "domain a path": 'domain = "../x"\n' + TWO,
        "no templates": TEMPLATE_HEAD,
        "templates a string": TEMPLATE_HEAD + 'templates = "x"\n',
        "template a number": TEMPLATE_HEAD + "templates = [5]\n",
        "texts a number": TEMPLATE_HEAD + '[[templates]]\nid = "t1"\ntexts = 5\n',
        "text a list": TEMPLATE_HEAD + '[[templates]]\nid = "t1"\ntexts = {contains = [1]}\n',
        "one template": TEMPLATE_HEAD
        + TWO.split("[[templates]]\n")[1].join(["[[templates]]\n", ""]),
        "missing placeholder": TEMPLATE_HEAD + TWO.replace("{child}?", "?", 1),
        "unknown placeholder": TEMPLATE_HEAD + TWO.replace("{parent}", "{country}", 1),
        "stray brace": TEMPLATE_HEAD + TWO.replace("?", "}?", 1),
        "duplicate id": TEMPLATE_HEAD + TWO.replace('"t2"', '"t1"'),
        "id a number": TEMPLATE_HEAD + TWO.replace('"t1"', "1"),
        "temperature negative": TEMPLATE_HEAD + "temperature = -1\n" + TWO,
        "temperature a string": TEMPLATE_HEAD + 'temperature = "hot"\n' + TWO,
        "temperature inf": TEMPLATE_HEAD + "temperature = inf\n" + TWO,
        "integer past 64 bits": TEMPLATE_HEAD + "temperature = 99999999999999999999\n" + TWO,
        "system prompt a table": TEMPLATE_HEAD + "system_prompt = {a = 1}\n" + TWO,
        "words wrong": TEMPLATE_HEAD + TWO + 'words = {have = "colour"}\n',
        "fixed a string": TEMPLATE_HEAD + TWO + 'fixed = "x"\n',
        "unknown key": TEMPLATE_HEAD + TWO + "colour = 1\n",
        "aliases wrong": TEMPLATE_HEAD + 'aliases = ["../x"]\n' + TWO,
        "nested deeply": TEMPLATE_HEAD + "x = " + "[" * 2000 + "]" * 2000 + "\n" + TWO,
        "hostile texts": TEMPLATE_HEAD
        + TWO.replace("Does", "\x1b[2JDoes\u202e").replace("Is there", "Is\u200b there\x07"),
        "default type unknown": TEMPLATE_HEAD + 'default_type = "orbits"\n' + TWO,
    }
    cases = [(name, body.encode()) for name, body in bodies.items()]
    cases.append(("not UTF-8", (TEMPLATE_HEAD + TWO).encode().replace(b"Does", b"D\xffes")))
    good = (TEMPLATE_HEAD + TWO).encode()
    for index in range(6):
        data = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.choice(b'{}[]"=\n#')
        cases.append((f"bytes flipped ({index})", bytes(data)))
    return cases


def synonym_cases() -> list[tuple[str, bytes]]:
    bodies = {
        "not TOML": "[synonyms\n",
        "synonyms a string": 'synonyms = "x"\n',
        "values a string": '[synonyms]\nhave = "own"\n',
        "values numbers": "[synonyms]\nhave = [1, 2]\n",
        "stopwords a number": "stopwords = 5\n",
        "stopwords tables": "stopwords = [{a = 1}]\n",
        "bans a list": "bans = [1]\n",
        "blocklist wrong": "[blocklist]\nhave = 5\n",
        "hostile values": '[synonyms]\nhave = ["ow\u202ens", "\x1b[2J", "\u200b"]\n',
        "empty values": '[synonyms]\nhave = ["", " "]\n',
        "nested deeply": "x = " + "[" * 2000 + "]" * 2000 + "\n",
    }
    return [(name, body.encode()) for name, body in bodies.items()]


def replay_cases(rng: random.Random) -> list[tuple[str, bytes]]:
    line = {"query": "Does Luxembourg have a Canton of Capellen?", "answer": "Yes"}
    bodies = {
        "empty": b"",
        "not JSON": b"yes\n",
        "a list line": b"[1, 2]\n",
        "answer a number": json.dumps({**line, "answer": 5}).encode(),
        "answer missing": json.dumps({"query": line["query"]}).encode(),
        "query a list": json.dumps({**line, "query": [1]}).encode(),
        "messages a string": json.dumps({"messages": "x", "answer": "Yes"}).encode(),
        "messages numbers": json.dumps({"messages": [1, 2], "answer": "Yes"}).encode(),
        "kind unknown": json.dumps({"messages": ["x"], "answer": "Yes", "kind": "z"}).encode(),
        "lone surrogate": b'{"query": "x", "answer": "yes \\udc80"}\n',
        "nested deeply": b'{"query": "x", "answer": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        "number 5000 digits": b'{"query": "x", "answer": "Yes", "n": ' + b"9" * 5000 + b"}",
        "not UTF-8": b'{"query": "x", "answer": "\xff"}\n',
        "hostile answer": json.dumps({**line, "answer": "\x1b[2JYes\u202e\x9b1m"}).encode(),
        "answer 2 MB": json.dumps({**line, "answer": "Yes " + "x" * 2_000_000}).encode(),
        "NUL line": b"\x00\x00\n",
    }
    cases = list(bodies.items())
    encoded = json.dumps(line).encode()
    for index in range(4):
        cut = rng.randrange(1, len(encoded))
        cases.append((f"cut at byte {cut} ({index})", encoded[:cut]))
    return cases


def batch_cases(custom_id: str) -> list[tuple[str, bytes]]:
    """Results files for a session waiting for batch results; `custom_id` is one of its
    requests (each case gets a copy of the session)."""
    answer = {"choices": [{"message": {"role": "assistant", "content": "Yes"}}]}
    ok = {"custom_id": custom_id, "response": {"status_code": 200, "body": answer}}
    hostile = {"choices": [{"message": {"content": "\x1b[2JYes\u202e\x9b31m\x00"}}]}
    bodies: dict[str, object] = {
        "empty": "",
        "not JSON": "results\n",
        "a list line": [1],
        "one good answer": ok,
        "a hostile answer": {**ok, "response": {"status_code": 200, "body": hostile}},
        "twice the same custom_id": json.dumps(ok) + "\n" + json.dumps(ok),
        "custom_id missing": {"response": {}},
        "custom_id a number": {**ok, "custom_id": 5},
        "custom_id unknown": {**ok, "custom_id": "x"},
        "content a number": {
            **ok,
            "response": {"status_code": 200, "body": {"choices": [{"message": {"content": 5}}]}},
        },
        "choices empty": {**ok, "response": {"status_code": 200, "body": {"choices": []}}},
        "response a string": {**ok, "response": "x"},
        "body a list": {**ok, "response": {"status_code": 200, "body": []}},
        "status a string": {**ok, "response": {"status_code": "ok", "body": {}}},
        "error a number": {**ok, "response": None, "error": 5},
        "error with the key": {**ok, "response": None, "error": {"message": f"key {SECRET}"}},
        "nested deeply": "[" * 50_000 + "]" * 50_000,
    }
    return [
        (name, (body if isinstance(body, str) else json.dumps(body)).encode() + b"\n")
        for name, body in bodies.items()
    ]


def probe_cases() -> list[tuple[str, bytes]]:
    bodies = {
        "not TOML": "[factcheck\n",
        "prompts a string": 'prompts = "x"\n',
        "logic a number": "logic = 5\n",
        "factcheck entry a number": "[factcheck]\ncontains = 5\n",
        "factcheck a list": "factcheck = [1]\n",
        "question type unknown": '[factcheck.contains]\nriddle = "Is {child} in {parent}?"\n',
        "question a list": '[factcheck.contains]\nyes_no = ["x"]\n',
        "question without placeholders": '[factcheck.contains]\nyes_no = "Is it?"\n',
        "asks for the parent and names it": '[factcheck.contains]\nwh = "{parent} {child}?"\n',
        "logic entry a string": '[logic]\ncontains = "x"\n',
        "logic unknown key": "[logic.contains]\ncolour = 1\n",
        "symmetric a string": '[logic.contains]\nsymmetric = "yes"\n',
        "words a string": '[logic.contains]\nwords = "in"\n',
        "domain a number": "domain = 5\n",
        "topic a list": "topic = [1]\n",
        "prompt a number": "[prompts]\nyes_no = 5\n",
        "hostile texts": '[factcheck.contains]\nyes_no = "Is {child}\u202e in {parent}?\x1b[2J"\n',
    }
    return [(name, body.encode()) for name, body in bodies.items()]


def question_cases() -> list[tuple[str, bytes]]:
    ok = {"question": "is ireland an island", "answer": True, "passage": "p"}
    bodies: dict[str, object] = {
        "empty": "",
        "not JSON": "question?\n",
        "a list line": [1],
        "question a number": {**ok, "question": 5},
        "question empty": {**ok, "question": "  "},
        "answer a string": {**ok, "answer": "yes"},
        "passage a number": {**ok, "passage": 5},
        "hostile question": {**ok, "question": "is \u202eireland\x1b[2J an island\u200b"},
        "nested deeply": '{"question": ' + "[" * 50_000 + "]" * 50_000 + "}",
    }
    return [
        (name, (body if isinstance(body, str) else json.dumps(body)).encode() + b"\n")
        for name, body in bodies.items()
    ]


def ipm_cases() -> list[tuple[str, bytes]]:
    bodies: dict[str, object] = {
        "empty": "",
        "a list": [],
        "parameters a string": {"parameters": "x"},
        "values empty": {"parameters": [{"name": "a", "values": []}]},
        "values a number": {"parameters": [{"name": "a", "values": 5}]},
        "name missing": {"parameters": [{"values": ["x"]}]},
        "a million rows": {
            "parameters": [{"name": f"p{i}", "values": list(range(50))} for i in range(40)]
        },
        "nested deeply": "[" * 50_000 + "]" * 50_000,
    }
    return [
        (name, (body if isinstance(body, str) else json.dumps(body)).encode())
        for name, body in bodies.items()
    ]


def domain_cases() -> list[tuple[str, bytes]]:
    bodies = {
        "empty": "",
        "not TOML": "[domain\n",
        "name a number": "name = 5\n",
        "nested deeply": "x = " + "[" * 2000 + "]" * 2000 + "\n",
        "levels a string": 'name = "x"\nlevels = "country"\n',
    }
    return [(name, body.encode()) for name, body in bodies.items()]


def odd_cli_cases(db: str) -> list[tuple[str, list[str]]]:
    """(name, argv) of odd command-line values; `db` holds one done places session."""
    run = ["run", "--kg", "places", "--limit", "1", "--db", db, "-q"]
    cases: list[tuple[str, list[str]]] = []
    for option, values in {
        "--limit": ["-1", "abc", str(2**70), "1e3"],
        "--depth": ["0", "-3", str(2**64)],
        "--concurrency": ["0", "-1", "100000"],
        "--timeout": ["0", "-1", "nan", "inf", "1e309"],
        "--max-attempts": ["0", "-5"],
        "--temperature": ["-1", "nan", "1e400", "hot"],
        "--max-tokens": ["0", "-1"],
        "--rate-limit": ["0", "-1", "inf"],
        "--sample": ["0", "-1", "abc", "1.5", "99999999"],
        "--kind": ["bogus", ",", "kontest,,logic"],
        "--template-ids": [",,", "t9", " "],
        "--entity": ["Nowhere", "", "\x1b[2J"],
        "--variant-limit": ["0"],
        "--strength": ["0", "9"],
        "--system-prompt": ["\x1b]0;x\x07", ""],
        "--seed": ["-1", str(2**70)],
    }.items():
        for value in values:
            cases.append((f"run {option} {value!r}", [*run, option, value]))
    for spec in (
        "",
        ":",
        "sim:nope",
        "openai:",
        "openai:m@ftp://127.0.0.1:9",
        f"openai:m@{CLOSED}",
        f"ollama:m@{CLOSED}",
        "ollama:m@http://[::1",
        "ollama:m@http://127.0.0.1:99999",
        f"openai:m@http://user:{SECRET}@127.0.0.1:9/v1",
        "replay:",
        "replay:/nowhere.jsonl",
        "local:nope",
        "nope:x",
        "sim:" + "x" * 5000,
    ):
        cases.append(
            (
                f"run --model {spec[:40]!r}",
                ["run", "--kg", "places", "--limit", "1", "--db", db, "-q", "--model", spec],
            )
        )
    for argv in (
        ["report", "nope", "--db", db],
        ["report", "--db", db, "--format", "bogus"],
        ["report", "--db", db, "--errors-only"],
        ["report", "--db", db, "--format", "html", "--entity", "Nowhere"],
        ["export", "--db", db, "--format", "xml"],
        ["export", "nope", "--db", db],
        ["explain", "--db", db, "--error", "0"],
        ["explain", "--db", db, "--error", "-1"],
        ["explain", "--db", db, "--error", "99999"],
        ["explain", "--db", db, "--relation", "nope>nope"],
        ["explain", "--db", db, "--kind", "bogus"],
        ["compare", "--db", db],
        ["compare", "nope", "nope2", "--db", db],
        ["ensemble", "nope", "--db", db],
        ["probe", "--kg", "places", "--relation", "nope", "--model", "sim"],
        [
            "probe",
            "--kg",
            "places",
            "--relation",
            "Ulster>Kinawley",
            "--model",
            f"openai:m@{CLOSED}/v1",
        ],
        ["kg", "info", "places", "--depth", "0"],
        ["kg", "info", "nope"],
        ["kg", "info", ""],
        ["kg", "search", "", "--offline"],
        ["kg", "search", "\x1b[2J\u202e", "--offline"],
        ["generate", "--kg", "places", "--limit", "-1"],
        ["generate", "--kg", "places", "--format", "yaml"],
        ["generate", "--kg", "places", "--per-path", "--depth", str(2**63)],
        ["sessions", "--db", "/dev/null"],
        ["sessions", "--db", "/"],
        ["sessions", "--db", str(ROOT / "README.md")],
        ["run", "--resume", "nope", "--db", db],
        ["run", "--resume", "--db", db, "--add-template", "t9"],
        ["run", "--kg", "places", "--retry-errors", "--db", db],
        ["run", "--kg", "places", "--batch-in", "x.jsonl", "--db", db],
        ["run", "--kg", "places", "--limit", "1", "--db", db, "-q", "--out", "/dev/full"],
        ["export", "--db", db, "--out", "/"],
        ["export", "--db", db, "--out", "/dev/full"],
        ["report", "--db", db, "--out", "/proc/version"],
        ["sim", "serve", "--port", "70000"],
        ["ca", "--strength", "9", "--ipm", "nope.json"],
        ["--db", db, "nope"],
        ["run", "--kg", "places", "--limit", "1", "--db", db, "-q", "--seed", "1.5"],
    ):
        cases.append((" ".join(argv)[:60], argv))
    return cases


class Corpus:
    """The cases being built: files written under `folder`, one case per (input, command)."""

    def __init__(self, folder: Path, seed: int) -> None:
        self.folder = folder
        self.rng = random.Random(seed)
        self.cases: list[dict[str, Any]] = []
        self.home = str(folder / "home")
        self.run = ["run", "--limit", "2", "--db", str(folder / "corpus.db"), "-q"]

    def files(
        self, kind: str, items: list[tuple[str, bytes]], suffix: str
    ) -> list[tuple[str, str]]:
        """Write each (name, bytes) as a file; (name, path) of each."""
        written = []
        for index, (name, data) in enumerate(items):
            path = self.folder / kind / f"{index:03d}{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            written.append((name, str(path)))
        return written

    def add(self, kind: str, name: str, argv: list[str], home: str | None = None) -> None:
        self.cases.append({"class": kind, "name": name, "argv": argv, "home": home or self.home})

    def user_file(self, path: str, where: str) -> str:
        """A KONTEST_HOME of its own holding `path` at `where` (under its config folder)."""
        home = str(self.folder / "homes" / f"h{len(self.cases)}")
        target = Path(home) / "config" / where
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(Path(path).read_bytes())
        return home


def add_graph_cases(corpus: Corpus) -> None:
    run = corpus.run
    for name, path in corpus.files("kg-json", kg_json_cases(corpus.rng), ".json"):
        corpus.add("KG JSON", f"{name}: kg info", ["kg", "info", path])
        corpus.add("KG JSON", f"{name}: generate", ["generate", "--kg", path, "--limit", "3"])
        corpus.add("KG JSON", f"{name}: run", [*run, "--kg", path])
    for name, path in corpus.files("kg-csv", kg_csv_cases(corpus.rng), ".csv"):
        corpus.add("KG CSV", f"{name}: import", ["kg", "import", path, "--out", f"{path}.json"])
        corpus.add("KG CSV", f"{name}: kg info", ["kg", "info", path])
    for name, path in corpus.files("domains", domain_cases(), ".toml"):
        argv = ["kg", "build", "--domain", path, "--seed", "Q27", "--out", f"{path}.json"]
        corpus.add("domain files", name, argv)


def add_text_cases(corpus: Corpus) -> None:
    run = corpus.run
    generate = ["generate", "--kg", "places", "--limit", "2"]
    for name, path in corpus.files("templates", template_cases(corpus.rng), ".toml"):
        corpus.add("templates", f"{name}: generate", [*generate, "--templates", path])
        corpus.add("templates", f"{name}: run", [*run, "--kg", "places", "--templates", path])
    for name, path in corpus.files("user-templates", template_cases(corpus.rng)[:12], ".toml"):
        home = corpus.user_file(path, "templates/places.toml")
        corpus.add("user templates", f"{name}: generate", generate, home)
    for name, path in corpus.files("synonyms", synonym_cases(), ".toml"):
        home = corpus.user_file(path, "synonyms/places.toml")
        corpus.add("synonyms", f"{name}: generate --variants", [*generate, "--variants"], home)
    for name, path in corpus.files("probes", probe_cases(), ".toml"):
        argv = [*generate, "--kind", "factcheck,logic", "--probes", path]
        corpus.add("probe files", name, argv)
    for name, path in corpus.files("questions", question_cases(), ".jsonl"):
        corpus.add("annotated questions", name, [*run, "--questions", path, "--model", "sim"])
    for name, path in corpus.files("ipm", ipm_cases(), ".json"):
        corpus.add("IPM", name, ["ca", "--ipm", path])


def add_run_cases(corpus: Corpus, db: str, batch: tuple[str, str, str]) -> None:
    run = corpus.run
    batch_db, batch_session, custom_id = batch

    def resume(path: str) -> list[str]:
        """`run --resume --batch-in path` on a copy of the session waiting for results."""
        copy = corpus.folder / "batch-dbs" / f"{len(corpus.cases)}.db"
        copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(batch_db, copy)
        return ["run", "--resume", batch_session, "--db", str(copy), "-q", "--batch-in", path]

    for name, path in corpus.files("replay", replay_cases(corpus.rng), ".jsonl"):
        corpus.add("replay", name, [*run, "--kg", "places", "--model", f"replay:{path}"])
    for name, path in corpus.files("batch", batch_cases(custom_id), ".jsonl"):
        corpus.add("batch", name, resume(path))
    fifo = corpus.folder / "pipe.json"
    os.mkfifo(fifo)
    for name, path in (
        ("a device", "/dev/zero"),
        ("a pipe", str(fifo)),
        ("a folder", str(corpus.folder)),
    ):
        corpus.add("special files", f"{name}: kg info", ["kg", "info", path])
        corpus.add(
            "special files",
            f"{name}: replay",
            [*run, "--kg", "places", "--model", f"replay:{path}"],
        )
        corpus.add(
            "special files",
            f"{name}: templates",
            ["generate", "--kg", "places", "--templates", path],
        )
        corpus.add("special files", f"{name}: questions", [*run, "--questions", path])
        corpus.add("special files", f"{name}: batch", resume(path))
    for name, argv in odd_cli_cases(db):
        corpus.add("command line", name, argv)


def build_corpus(
    folder: Path, seed: int, db: str, batch: tuple[str, str, str]
) -> list[dict[str, Any]]:
    """Write the corpus files under `folder`; the cases (class, name, argv, home). `db`
    holds a done session, `batch` is (database, session, one request's custom_id) of a
    session waiting for batch results."""
    corpus = Corpus(folder, seed)
    add_graph_cases(corpus)
    add_text_cases(corpus)
    add_run_cases(corpus, db, batch)
    return corpus.cases


# -- the driver (a child process) ------------------------------------------------------------


class CaseTimeout(BaseException):
    """Raised by SIGALRM when a case runs past CASE_TIMEOUT_S."""


def _alarm(_signum: int, _frame: object) -> None:
    raise CaseTimeout


def drive(cases_file: Path) -> None:
    """Run each case of `cases_file` with `run_cli`, printing one JSON result per line."""
    from kontest_tui.cli import run_cli
    from kontest_tui.safe_text import has_unsafe

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    signal.signal(signal.SIGALRM, _alarm)
    results = sys.stdout
    for case in json.loads(cases_file.read_text("utf-8")):
        os.environ["KONTEST_HOME"] = case["home"]
        out, err = io.StringIO(), io.StringIO()
        outcome, code = None, None
        started = time.perf_counter()
        signal.alarm(CASE_TIMEOUT_S)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = run_cli(case["argv"])
        except CaseTimeout:
            outcome = "hung"
        except MemoryError:
            outcome = "out of memory"
        except BaseException as error:  # what run_cli let through: a traceback
            outcome = "traceback"
            err.write(f"Traceback: {type(error).__name__}: {error}\n")
        finally:
            signal.alarm(0)
        printed = out.getvalue() + err.getvalue()
        lines = [
            line for line in err.getvalue().splitlines() if line.startswith("kontest: error: ")
        ]
        if outcome is None:
            if "Traceback" in printed:
                outcome = "traceback"
            elif code == 0:
                outcome = "accepted"
            elif len(lines) == 1:
                outcome = "clear error"
            else:
                outcome = "unclear"
        escapes = sum(1 for line in printed.splitlines() if has_unsafe(line))
        result = {
            "class": case["class"],
            "name": case["name"],
            "outcome": outcome,
            "code": code,
            "seconds": round(time.perf_counter() - started, 3),
            "escapes": escapes,
            "secrets": count_secrets(printed),
            "said": (lines or printed.strip().splitlines()[-1:] or [""])[0][:160],
        }
        results.write(json.dumps(result) + "\n")
        results.flush()


# -- the parent --------------------------------------------------------------------------------


def prepare_databases(folder: Path, env: dict[str, str]) -> tuple[str, tuple[str, str, str]]:
    """A database with one done places session (for report/export/explain cases) and one
    with a session waiting for batch results: (the first's path, (the second's path, its
    session, the custom_id of its first request))."""
    db, batch_db = str(folder / "sessions.db"), str(folder / "batch.db")
    command = [sys.executable, "-m", "kontest_tui.cli"]
    done = subprocess.run(
        [*command, "run", "--kg", "places", "--limit", "3", "--db", db, "-q"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    batch = subprocess.run(
        [
            *command,
            "run",
            "--kg",
            "places",
            "--limit",
            "2",
            "--db",
            batch_db,
            "-q",
            "--batch-out",
            str(folder / "batch-out"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert batch.returncode == 0, batch.stderr
    session = batch.stderr.split()[1].rstrip(":")
    requests = next((folder / "batch-out").glob("*.jsonl")).read_text("utf-8")
    return db, (batch_db, session, json.loads(requests.splitlines()[0])["custom_id"])


def run_corpus(folder: Path, seed: int, per_class: int = 0) -> list[dict[str, Any]]:
    """Build the corpus in `folder`, run it in a driver process; one result per case."""
    env = {
        **os.environ,
        "OPENAI_API_KEY": SECRET,
        "PYTHONPATH": str(ROOT),
        "KONTEST_HOME": str(folder / "home"),
    }
    db, batch = prepare_databases(folder, env)
    cases = build_corpus(folder, seed, db, batch)
    if per_class:
        kept: Counter[str] = Counter()
        sampled = []
        for case in cases:
            if kept[case["class"]] < per_class:
                kept[case["class"]] += 1
                sampled.append(case)
        cases = sampled
    cases_file = folder / "cases.json"
    cases_file.write_text(json.dumps(cases), "utf-8")
    results: list[dict[str, Any]] = []
    remaining = cases
    while remaining:  # a driver killed by the kernel leaves the rest to a new one
        cases_file.write_text(json.dumps(remaining), "utf-8")
        done = subprocess.run(
            [sys.executable, __file__, "--driver", str(cases_file)],
            env=env,
            capture_output=True,
            text=True,
            timeout=CASE_TIMEOUT_S * (len(remaining) + 5),
            check=False,
        )
        got = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        results += got
        if len(got) == len(remaining):
            break
        lost = remaining[len(got)]
        results.append(
            {
                "class": lost["class"],
                "name": lost["name"],
                "outcome": "out of memory" if done.returncode in (-9, 137) else "traceback",
                "code": done.returncode,
                "seconds": 0,
                "escapes": 0,
                "secrets": count_secrets(done.stderr),
                "said": done.stderr.strip().splitlines()[-1:]
                and done.stderr.strip().splitlines()[-1][:160]
                or "",
            }
        )
        remaining = remaining[len(got) + 1 :]
    return results


def summarise(results: list[dict[str, Any]]) -> dict[str, int]:
    totals: Counter[str] = Counter(result["outcome"] for result in results)
    return {
        "tried": len(results),
        **{outcome: totals[outcome] for outcome in OUTCOMES},
        "escapes": sum(result["escapes"] for result in results),
        "secrets": sum(result["secrets"] for result in results),
    }


def print_summary(results: list[dict[str, Any]], *, details: bool = True) -> dict[str, int]:
    from kontest_tui.safe_text import escape_unsafe

    by_class: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        by_class.setdefault(result["class"], []).append(result)
    for kind, items in by_class.items():
        counts = Counter(item["outcome"] for item in items)
        shown = ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts[o])
        print(f"  {kind:<20} {len(items):4d} tried: {shown}")
    if details:
        for result in results:
            if result["outcome"] in ("traceback", "hung", "out of memory", "unclear"):
                said = f"{result['class']} / {result['name']}: {result['said']}"
                print(f"    {result['outcome']}: {escape_unsafe(said)}")
    summary = summarise(results)
    print(
        f"malformed inputs: {summary['tried']} tried, {summary['clear error']} one clear line, "
        f"{summary['accepted']} accepted, {summary['unclear']} unclear, "
        f"{summary['traceback']} tracebacks, {summary['hung']} hung, "
        f"{summary['out of memory']} out of memory; escapes printed {summary['escapes']}, "
        f"secrets printed {summary['secrets']}"
    )
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--per-class", type=int, default=0, help="at most N cases a class (0: all)")
    parser.add_argument("--driver", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver is not None:
        drive(args.driver)
        return
    with tempfile.TemporaryDirectory(prefix="kontest-hostile-") as tmp:
        started = time.perf_counter()
        results = run_corpus(Path(tmp), args.seed, args.per_class)
        summary = print_summary(results)
        print(f"{time.perf_counter() - started:.0f} s")
    if (
        summary["traceback"]
        or summary["hung"]
        or summary["out of memory"]
        or summary["escapes"]
        or summary["secrets"]
    ):
        sys.exit(1)


if __name__ == "__main__":
    main()
