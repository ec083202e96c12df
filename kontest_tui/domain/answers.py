"""Answer parsing: a model's raw reply -> yes / no / invalid, and clean text for display.

The rule (docs/oracles-and-metrics.md): strip, lower-case, strip leading punctuation and
markup; a reply whose first word is "yes" is YES, "no" is NO, anything else is INVALID (kept,
shown, never guessed).
Only the start of a reply is read, so a 1 MB answer parses as fast as a short one; only the
first MAX_ANSWER_CHARS of it are kept (`cut_answer`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from kontest_tui.domain.records import Answer
from kontest_tui.safe_text import FORMAT_CHARACTERS

# How much of a reply is looked at (after a leading <think> block, if any).
HEAD_CHARS = 256
# How much of a reply is kept: the first 64 Ki characters are stored (and are the context of
# the next turn); the rest is dropped and the number of dropped characters recorded.
MAX_ANSWER_CHARS = 65_536

# ANSI / VT escape sequences: CSI (ESC [ ... or the C1 byte 0x9b), OSC (ESC ] ... BEL or ST),
# DCS/SOS/PM/APC strings (ESC P/X/^/_ ... ST) and two-byte escapes (ESC + one char).
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# Control characters other than newline and tab (CR is dropped: CRLF becomes LF), and
# format characters (bidi overrides such as U+202E, zero-width spaces and joiners, tags).
_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{FORMAT_CHARACTERS}]")
# What may precede the answer word: whitespace, punctuation, markdown and quote marks,
# HTML-ish tags such as <b> or <answer>, and list bullets.
_LEADING = re.compile(
    r"(?:\s|<[a-z/][a-z0-9_ /=\"'-]*>|[*_#>`~\"'“”‘’«»„‚\[\](){}:;,.!?\-–—•·|=+]|&[a-z]+;)*"
)
# The answer word: "yes" or "no" as a whole word (not "yesterday", "not", "nope", "no-one").
_ANSWER_WORD = re.compile(r"(yes|no)(?![^\W_])(?!['’-][^\W_])")
# A refusal: "I don't know", "not sure", "I cannot say" ... at the start of the reply.
_REFUSAL = re.compile(
    r"^(i\s+(do\s*n[o']?t|don't|dont|really\s+don't)\s+know|idk\b|i('m|\s+am)\s+(not\s+sure|unsure)"
    r"|not\s+sure|unsure|no\s+idea|unknown\b|i\s+(can(no|')t|cannot)\s+(say|tell|determine|answer|be\s+sure)"
    r"|i\s+have\s+no\s+(idea|information|knowledge))"
)
_REFUSAL_NOISE = re.compile(r"^[\s\"'`*_#>\[\](){}.,:;!-]+")
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"


def cut_answer(text: str, limit: int = MAX_ANSWER_CHARS) -> tuple[str, int]:
    """(`text` up to `limit` characters, how many characters were dropped)."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def clean_text(text: str) -> str:
    """`text` without ANSI/OSC escape sequences, control or format characters (bidi
    overrides, zero-width characters; newline and tab kept)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text.replace("\r\n", "\n")))


def _head(text: str) -> str:
    """The start of the reply that decides the answer, past a leading <think>...</think>."""
    head = text[: HEAD_CHARS * 2].lstrip()
    if head[: len(_THINK_OPEN)].lower() == _THINK_OPEN:
        end = text.lower().find(_THINK_CLOSE)
        if end < 0:
            return ""
        return text[end + len(_THINK_CLOSE) : end + len(_THINK_CLOSE) + HEAD_CHARS * 2]
    return head


def parse_answer(text: str | None) -> Answer:
    """YES when the reply's first word is "yes", NO when it is "no", INVALID otherwise."""
    if not text:
        return Answer.INVALID
    if len(text) <= _CACHED_TEXT:  # models repeat their short replies: read each once
        return _parse_short(text)
    return _parse(text)


_CACHED_TEXT = 200


@lru_cache(maxsize=4096)
def _parse_short(text: str) -> Answer:
    return _parse(text)


def _parse(text: str) -> Answer:
    head = clean_text(_head(text))[:HEAD_CHARS].lower()
    start = _LEADING.match(head)
    word = _ANSWER_WORD.match(head, start.end() if start else 0)
    if word is None:
        return Answer.INVALID
    return Answer.YES if word.group(1) == "yes" else Answer.NO


def is_refusal(text: str | None) -> bool:
    """Does the reply start by declining to answer ("I don't know", "not sure", ...)?

    Refusals are counted on their own in every report (never as errors); for yes/no
    questions they are also invalid answers (neither yes nor no)."""
    if not text:
        return False
    start = clean_text(_head(text)[:400]).replace("\u2019", "'").strip().casefold()
    return _REFUSAL.match(_REFUSAL_NOISE.sub("", start)) is not None


# Special tokens of chat templates (ChatML, Llama 3, Gemma, Mistral, Phi): a reply holding
# one is a model continuing the template as text, i.e. a base model asked in chat mode.
CHAT_TEMPLATE_MARKERS = (
    "<|im_start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "[INST]",
    "[/INST]",
    "<|user|>",
    "<|assistant|>",
    "<|endoftext|>",
)
_ECHO_MIN_CHARS = 8


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def echoes_prompt(question: str, reply: str) -> bool:
    """Does the reply continue the prompt instead of answering it: a chat template's special
    token in it, or the question itself at its start (what base models do in chat mode)?"""
    head = reply[: HEAD_CHARS * 2]
    if any(marker in head for marker in CHAT_TEMPLATE_MARKERS):
        return True
    said, asked = _words(head), _words(question)
    if len(said) < _ECHO_MIN_CHARS or not asked:
        return False
    return asked.startswith(said) or said.startswith(asked)
