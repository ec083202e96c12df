"""Property: mutated KG, replay, IPM and batch files (results for
`run --batch-in`, requests for `sim batch`) and any values of the environment variables kontest
reads, given to the CLI, end in exactly one `kontest: error: ...` line and a non-zero exit, or
in success; never a traceback.

Mutations are structural (any value of the parsed file replaced by any JSON value: deep
nesting, huge or non-finite numbers, lone surrogates, wrong types) and textual (a slice of
the text replaced by bytes that break JSON: brackets, escapes, invalid UTF-8). Bounded:
a few dozen examples per file kind, no deadline, so the suite stays fast.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kontest_tui.cli import run_cli

KG: dict[str, Any] = {
    "name": "tiny",
    "domain": "places",
    "source": "test",
    "built": "2026-01-01",
    "nodes": [
        {"id": "Q27", "label": "Ireland", "aliases": ["Éire"], "type": "country"},
        {"id": "Q1", "label": "Ulster", "aliases": [], "type": "province"},
        {"id": "Q2", "label": "Kinawley", "aliases": [], "type": "village"},
    ],
    "edges": [
        {"parent": "Q27", "child": "Q1", "relation": "contains"},
        {"parent": "Q1", "child": "Q2", "relation": "contains"},
    ],
}
REPLAY: list[dict[str, Any]] = [
    {"query": "Does Ireland have a Ulster?", "answer": "Yes"},
    {"messages": ["Is there a Ulster in Ireland?"], "answer": "no", "kind": "atomic"},
    {"messages": [{"role": "user", "content": "Does Ulster have a Kinawley?"}], "answer": "yes"},
]
IPM: dict[str, Any] = {
    "parameters": [
        {"name": "have", "values": ["have", "contain", "include"]},
        {"name": "Ireland", "values": ["Ireland", "Éire"]},
        {"name": "a", "values": ["a"]},
    ],
    "forbidden": [{"have": "include", "Ireland": "Éire"}],
}

DEEP = "[" * 50_000 + "]" * 50_000
BIG = "9" * 5000
# Stand-ins json.dumps can write, swapped for a 50,000-deep array and a 5,000-digit number.
DEEP_MARK, BIG_MARK = "@@deep@@", "@@big@@"

# Half the replacements are the values that broke loaders before (deep nesting, 5,000-digit
# numbers, NaN / Infinity, lone surrogates written as "\ud800" escapes, a path as a domain),
# half any JSON value at all.
nasty: st.SearchStrategy[object] = st.sampled_from(
    [
        DEEP_MARK,
        BIG_MARK,
        "\ud800",
        "a\udfff",
        "/proc/self/environ",
        "",
        " ",
        "{parent}",
        float("nan"),
        float("inf"),
        2**63,
        -(2**63) - 1,
        10**45,
        None,
        [],
        {},
        True,
    ]
)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
anything = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
values = nasty | anything
breakers = st.sampled_from(
    [
        "[",
        "]",
        "{",
        "}",
        '"',
        ",",
        ":",
        "\\",
        "\\ud800",
        "\\udc00",
        "NaN",
        "-Infinity",
        "1e999",
        BIG,
        DEEP,
        "\x00",
        "é",
        "\ufeff",
        "\n",
    ]
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


@st.composite
def structural(draw: st.DrawFn, base: Any) -> Any:
    """`base` with one value (or the whole document) replaced by any JSON value."""
    data = json.loads(json.dumps(base))
    path = draw(st.sampled_from(_paths(data)))
    new = draw(values)
    if not path:
        return new
    target = data
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return data


@st.composite
def textual(draw: st.DrawFn, text: str) -> bytes:
    """`text` with one slice replaced by JSON-breaking pieces, sometimes by invalid UTF-8."""
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, min(len(text), start + 20)))
    piece = "".join(draw(st.lists(breakers, min_size=1, max_size=3)))
    raw = (text[:start] + piece + text[end:]).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + raw[at:]
    return raw


def mutated(base: Any, jsonl: bool = False) -> st.SearchStrategy[bytes]:
    def dump(value: Any) -> bytes:
        if jsonl and isinstance(value, list):
            text = "".join(json.dumps(line) + "\n" for line in value)
        else:
            text = json.dumps(value)
        return text.replace(f'"{DEEP_MARK}"', DEEP).replace(f'"{BIG_MARK}"', BIG).encode()

    text = dump(base).decode()
    return structural(base).map(dump) | textual(text)


def assert_one_line_or_success(argv: list[str]) -> None:
    """Exactly: success with no error line, or a non-zero exit with one `kontest: error:` line."""
    # Strict UTF-8 streams, as a terminal or a pipe: text they cannot encode fails here too.
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_cli(argv)  # any exception here is the traceback the property forbids
        out.flush()
        err.flush()
    text = err.buffer.getvalue().decode("utf-8")
    errors = [line for line in text.splitlines() if line.startswith("kontest: error: ")]
    if code == 0:
        assert errors == [], text
    else:
        assert len(errors) == 1, text
        assert text.rstrip("\n").endswith(errors[0]), text


PROPERTY = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@PROPERTY
@given(mutated(KG))
def test_mutated_kg(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kg.json"
        path.write_bytes(content)
        assert_one_line_or_success(["kg", "info", str(path), "--json"])
        assert_one_line_or_success(
            ["run", "--kg", str(path), "--limit", "1", "--db", f"{folder}/s.db", "-q"]
        )


@PROPERTY
@given(mutated(REPLAY, jsonl=True))
def test_mutated_replay(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        kg = Path(folder) / "kg.json"
        kg.write_text(json.dumps(KG), encoding="utf-8")
        replay = Path(folder) / "replay.jsonl"
        replay.write_bytes(content)
        assert_one_line_or_success(
            ["run", "--kg", str(kg), "--model", f"replay:{replay}", "--db", f"{folder}/s.db", "-q"]
        )


@PROPERTY
@given(mutated(IPM))
def test_mutated_ipm(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ipm.json"
        path.write_bytes(content)
        assert_one_line_or_success(["ca", "--ipm", str(path), "--effort", "0"])


# -- batch files and environment values ------------------------------------------------------

RESULT_LINE: dict[str, Any] = {
    "custom_id": "k",
    "response": {
        "status_code": 200,
        "body": {"choices": [{"message": {"content": "Yes"}}], "usage": {"completion_tokens": 1}},
    },
    "error": None,
}
REQUEST_LINE: dict[str, Any] = {
    "custom_id": "k",
    "method": "POST",
    "url": "/v1/chat/completions",
    "body": {
        "model": "default",
        "messages": [{"role": "user", "content": "Does Ireland have a Ulster?"}],
        "max_tokens": 64,
        "seed": 0,
    },
}


def _batch_session(folder: str) -> str:
    """A session waiting for its first batch phase (the id)."""
    kg = Path(folder) / "kg.json"
    kg.write_text(json.dumps(KG), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = run_cli(
            ["run", "--kg", str(kg), "--db", f"{folder}/s.db", "--batch-out", folder, "-q"]
        )
    assert code == 0
    (first,) = Path(folder).glob("*-turn1.jsonl")
    return first.name.removesuffix("-turn1.jsonl")


@PROPERTY
@given(mutated([RESULT_LINE, RESULT_LINE | {"custom_id": "j"}], jsonl=True))
def test_mutated_batch_results(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        session = _batch_session(folder)
        results = Path(folder) / "results.jsonl"
        results.write_bytes(content)
        assert_one_line_or_success(
            ["run", "--resume", session, "--batch-in", str(results), "--db", f"{folder}/s.db"]
        )


@PROPERTY
@given(mutated([REQUEST_LINE], jsonl=True))
def test_mutated_batch_requests(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        requests = Path(folder) / "requests.jsonl"
        requests.write_bytes(content)
        assert_one_line_or_success(["sim", "batch", str(requests), f"{folder}/out.jsonl"])


ENVIRONMENT = ("KONTEST_HOME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "KONTEST_CONTACT")
env_values = st.sampled_from(
    ["", " ", "/", "/dev/null", "/proc/self/environ", "~", "..", "x" * 5000, "a\nb", "é", "::"]
) | st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=30)


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """Run in `path` (made), then back where the test was."""
    path.mkdir()
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@PROPERTY
@given(st.dictionaries(st.sampled_from(ENVIRONMENT), env_values, min_size=1))
def test_environment_values(values: dict[str, str]) -> None:
    """Whatever these variables hold, a command succeeds or says what is wrong in one line."""
    with tempfile.TemporaryDirectory() as folder, working_directory(Path(folder) / "cwd"):
        # a relative KONTEST_HOME ("~", "..", "a\nb") lands in the temporary folder, not in
        # the checkout (or beside it)
        if "KONTEST_HOME" in values and not values["KONTEST_HOME"].strip():
            values["KONTEST_HOME"] = f"{folder}/{values['KONTEST_HOME']}"
        with environment(values):
            assert_one_line_or_success(["sessions", "--db", f"{folder}/none.db"])
            assert_one_line_or_success(["sessions"])
            assert_one_line_or_success(
                ["run", "--kg", "places", "--limit", "1", "--db", f"{folder}/s.db", "-q"]
            )
