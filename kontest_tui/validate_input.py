"""Checks every input passes at the boundary, so bad input is one readable line, never a traceback.

Input files (KG JSON, replay and question JSONL, IPM JSON, template / domain / profile TOML)
must be regular files of at most `max_input_bytes()` (256 MiB; `KONTEST_MAX_INPUT_MB`
changes it): a device (`/dev/zero`), a pipe or a larger file is one error line, never an
unbounded read (`check_input_file`). They are decoded with `read_input_text` (strict UTF-8),
parsed with `loads_json` / `loads_toml`
(nesting depth, number size, NaN and infinities, lone surrogates) and their fields then
checked by the loaders. CLI arguments pass `check_argv` (UTF-8) and the bounded number types
of `kontest_tui.cli.params`. Each check raises the error class its caller names (a
`KontestError` subclass), so a KG problem stays a `GraphError`, a replay problem an
`InvalidInputError`, and so on.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from kontest_tui.errors import InvalidInputError, KontestError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1  # the largest integer SQLite (and TOML) holds
MAX_NUMBER_DIGITS = 40  # no input number needs more; Python refuses 4,300+ with a traceback
MAX_TOML_DEPTH = 32  # nested tables, arrays and dotted-key parts in one TOML config file
MAX_TOML_BYTES = 4 * 1024 * 1024
MAX_INPUT_MB = 256  # an input file's size limit unless KONTEST_MAX_INPUT_MB says otherwise
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
# Lone UTF-16 surrogates: what "\ud800" in JSON or non-UTF-8 bytes in argv decode to.
_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON escape of a surrogate; only texts holding one can decode to a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# TOML strings and comments (removed before counting brackets and dotted keys).
_TOML_SKIP = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
)
_TOML_BRACKET = re.compile(r"[\[\]{}]")
_TOML_DOTTED = re.compile(r"(?:[\w-]+\s*\.\s*){" + str(MAX_TOML_DEPTH) + ",}")

ErrorType = Callable[[str], KontestError]


def max_input_bytes() -> int:
    """The size limit of an input file: `KONTEST_MAX_INPUT_MB` megabytes (MiB) when it is a
    positive whole number, else MAX_INPUT_MB."""
    given = os.environ.get("KONTEST_MAX_INPUT_MB", "").strip()
    megabytes = int(given) if given.isdigit() and 0 < int(given) < 2**31 else MAX_INPUT_MB
    return megabytes * 1024 * 1024


def _megabytes(size: int) -> str:
    return f"{size / 2**20:,.1f} MB" if size >= 2**20 else f"{size:,} bytes"


def check_input_file(
    path: str | Path, origin: str | None = None, error: ErrorType = InvalidInputError
) -> int:
    """The size of `path` when it is a regular file (a link to one counts) of at most
    `max_input_bytes()`; one `error` line otherwise: missing, a directory, a device, a pipe
    or a socket (reading one may never end: `/dev/zero`), or too large."""
    origin = origin or str(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"{origin}: no such file") from None
    except OSError as problem:
        raise error(f"{origin}: cannot read file: {problem.strerror or problem}") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{origin}: is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{origin}: not a regular file (a device, pipe or socket); give a file")
    limit = max_input_bytes()
    if info.st_size > limit:
        raise error(
            f"{origin}: the file is {_megabytes(info.st_size)}, more than the {_megabytes(limit)}"
            " an input file may be (KONTEST_MAX_INPUT_MB raises the limit)"
        )
    return info.st_size


def read_input_text(
    path: str | Path, origin: str | None = None, error: ErrorType = InvalidInputError
) -> str:
    """A file's UTF-8 text (a leading BOM dropped); one `error` line when it cannot be read,
    is no regular file or is larger than `max_input_bytes()` (check_input_file)."""
    path = Path(path)
    origin = origin or str(path)
    check_input_file(path, origin, error)
    limit = max_input_bytes()
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except FileNotFoundError:
        raise error(f"{origin}: no such file") from None
    except IsADirectoryError:
        raise error(f"{origin}: is a directory, not a file") from None
    except OSError as problem:
        raise error(f"{origin}: cannot read file: {problem.strerror or problem}") from None
    if len(raw) > limit:  # it grew since it was looked at
        raise error(
            f"{origin}: the file is more than the {_megabytes(limit)} an input file may be"
            " (KONTEST_MAX_INPUT_MB raises the limit)"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as problem:
        raise error(f"{origin}: not UTF-8 text (bad byte at offset {problem.start})") from None


# -- JSON ------------------------------------------------------------------------------------


class _NumberError(ValueError):
    """A JSON number this tool will not read (raised from the decoder's hooks)."""


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise _NumberError(f"a number with {len(text.lstrip('-'))} digits is too large")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS * 2:
        raise _NumberError(f"a number of {len(text)} characters is too large")
    value = float(text)
    if not math.isfinite(value):
        raise _NumberError(f"the number {text[:20]} is out of range")
    return value


def _parse_constant(text: str) -> float:
    raise _NumberError(f"{text} is not valid JSON")


_DECODER = json.JSONDecoder(
    parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
)


def _json_problem(text: str, problem: json.JSONDecodeError) -> str:
    """What is wrong and where: "Expecting ',' delimiter at line 3, column 7"; a text that
    stops before its JSON is complete says so with its last line and column."""
    if not text.strip():
        return "it is empty"
    single = "\n" not in text.strip()
    if problem.pos >= len(text.rstrip()):
        last = text.rstrip()
        line = last.count("\n") + 1
        column = len(last) - (last.rfind("\n") + 1)
        where = f"column {column}" if single else f"line {line}, column {column}"
        return f"it ends at {where} before the JSON is complete (cut off?)"
    where = (
        f"column {problem.colno}" if single else f"line {problem.lineno}, column {problem.colno}"
    )
    if problem.msg.startswith("Unterminated string"):
        return f"a string starting at {where} never ends (cut off?)"
    return f"{problem.msg} at {where}"


def loads_json(
    text: str, origin: str, error: ErrorType = InvalidInputError, *, surrogates: bool = False
) -> Any:
    """Parse JSON text strictly: no NaN/Infinity, no huge numbers, bounded nesting, no lone
    surrogates (`"\\ud800"`; allowed with `surrogates`, for a reader that repairs them).
    Any problem is one `error` line starting with `origin`."""
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as problem:
        raise error(f"{origin}: not JSON: {_json_problem(text, problem)}") from None
    except _NumberError as problem:
        raise error(f"{origin}: not JSON: {problem}") from None
    except RecursionError:
        raise error(f"{origin}: not JSON: nested too deeply") from None
    if not surrogates and _SURROGATE_ESCAPE.search(text):
        where = find_lone_surrogate(value)
        if where is not None:
            raise error(f"{origin}: {where or 'a string'} holds a lone surrogate (not text)")
    return value


T = TypeVar("T")


def read_jsonl(path: Path, parse: Callable[[Any], T], *, what: str, line_is: str) -> Iterator[T]:
    """`parse` of each non-blank line of a JSONL file, in order. An unreadable file, text that
    is not UTF-8, or a line that is not JSON or that `parse` rejects (KeyError, TypeError or
    AttributeError) is one InvalidInputError naming the file and line: "not `line_is`".
    The file must be a regular one within the size limit (check_input_file)."""
    check_input_file(path, f"cannot read {what} {path}")
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise InvalidInputError(f"cannot read {what} {path}: {error.strerror or error}") from None
    with handle:
        try:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                # bounded depth, no huge numbers (lone surrogates: the caller's to repair)
                value = loads_json(line, f"{path} line {number}", surrogates=True)
                try:
                    item = parse(value)
                except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
                    raise InvalidInputError(f"{path} line {number}: not {line_is}") from None
                yield item
        except UnicodeDecodeError:
            raise InvalidInputError(f"{path}: not UTF-8 text") from None


def find_lone_surrogate(value: object) -> str | None:
    """The path (`nodes[2].label`) of the first string in `value` holding a lone surrogate,
    "" for `value` itself, None when there is none. Iterative: any depth is fine."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return path
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                if _SURROGATE.search(key):
                    return f"{path}.{key!a}".lstrip(".")
                stack.append((f"{path}.{key}".lstrip("."), child))
        elif isinstance(item, list | tuple):
            stack.extend(
                (f"{path}[{index}]", child) for index, child in reversed(list(enumerate(item)))
            )
    return None


# -- TOML ------------------------------------------------------------------------------------


def loads_toml(text: str, origin: str, error: ErrorType = InvalidInputError) -> dict[str, Any]:
    """Parse a TOML config file with bounded size and nesting, 64-bit integers and finite
    floats only; any problem is one `error` line starting with `origin`."""
    if len(text) > MAX_TOML_BYTES:
        raise error(f"{origin}: too large for a config file ({len(text):,} characters)")
    bare = _TOML_SKIP.sub("_", text)
    depth = deepest = 0
    for match in _TOML_BRACKET.finditer(bare):
        depth = max(depth + (1 if match.group() in "[{" else -1), 0)
        deepest = max(deepest, depth)
    if deepest > MAX_TOML_DEPTH or _TOML_DOTTED.search(bare):
        raise error(f"{origin}: malformed TOML: nested more than {MAX_TOML_DEPTH} levels")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        raise error(f"{origin}: malformed TOML: {problem}") from None
    except (ValueError, RecursionError):
        raise error(f"{origin}: malformed TOML: a number too large or nesting too deep") from None
    where = _find_bad_number(data)
    if where is not None:
        raise error(f"{origin}: {where}: numbers must be finite and fit in 64 bits")
    return data


def _find_bad_number(value: object, path: str = "") -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return path or "value"
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not INT64_MIN <= value <= INT64_MAX
    ):
        return path or "value"
    if isinstance(value, dict):
        for key, child in value.items():
            found = _find_bad_number(child, f"{path}.{key}".lstrip("."))
            if found is not None:
                return found
    if isinstance(value, list):
        for index, child in enumerate(value):
            found = _find_bad_number(child, f"{path}[{index}]")
            if found is not None:
                return found
    return None


# -- single values ---------------------------------------------------------------------------


def check_text(value: str, where: str, error: ErrorType = InvalidInputError) -> str:
    """`value` unchanged when it is text SQLite and UTF-8 can hold (no lone surrogate)."""
    if _SURROGATE.search(value):
        raise error(f"{where}: not valid UTF-8 text")
    return value


def check_port(port: int | None, where: str, error: ErrorType = InvalidInputError) -> None:
    """A TCP port must be 1..65535 (None: the scheme's default)."""
    if port is not None and not 1 <= port <= 65535:
        raise error(f"{where}: port {port} is out of range (1-65535)")


def is_name(text: str) -> bool:
    """True for a domain-style name (`places`, `my-music_2`): letters, digits, `_`, `-`."""
    return bool(_NAME.fullmatch(text))


def check_name(value: str, what: str, error: ErrorType = InvalidInputError) -> str:
    """`value` unchanged when it is a name (never a path): letters, digits, `_` and `-`."""
    if not is_name(value):
        raise error(
            f"{what} {value[:80]!r} is not a name (letters, digits, '_' and '-'; not a path)"
        )
    return value


def check_argv(argv: Sequence[str]) -> None:
    """Every command-line argument must be UTF-8 text (Python decodes other bytes to lone
    surrogates, which no file, database or terminal can take)."""
    for index, argument in enumerate(argv):
        if _SURROGATE.search(argument):
            option = argument.partition("=")[0] if argument.startswith("-") else None
            if option is None and index > 0 and argv[index - 1].startswith("-"):
                option = argv[index - 1]
            named = f"the value of {option}" if option else f"argument {index + 1}"
            raise InvalidInputError(f"{named} is not valid UTF-8 text")
