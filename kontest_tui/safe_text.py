"""Characters that must not reach a terminal or a reader as they are, and the escape every
way out applies to them.

Text from files and models may hold characters that act instead of showing: C0 and C1
control characters (ESC starts the sequences that clear a screen, retitle a window or write
the clipboard; 0x9b is a one-byte CSI), DEL, and Unicode format characters (category Cf:
bidirectional overrides and isolates such as U+202E, which make a label read reversed;
zero-width spaces and joiners; tag characters, which hide ASCII text), plus the line and
paragraph separators U+2028 / U+2029.

- `FORMAT_CHARACTERS` is the regex class of the format characters (category Cf, Unicode
  15), which `domain.answers.clean_text` removes with the control characters wherever text
  enters or is shown.
- `escape_unsafe(text)` writes each such character (tab and newline excepted) as its JSON
  escape `\\uXXXX` (a pair of surrogate escapes above U+FFFF): JSON text stays the same JSON
  (the escape means the character it replaces), and any other text shows what was there.
  The CLI's output and every file it or the explorer exports pass it.

Stdlib only: this module sits at the bottom of the layers, beside `redact`.
"""

from __future__ import annotations

import re

# Unicode general category Cf (format), as of Unicode 15.0 (tests check it against the
# running Python's unicodedata).
FORMAT_CHARACTERS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{FORMAT_CHARACTERS}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def escape_unsafe(text: str) -> str:
    """`text` with every control, format and line-separator character other than tab and
    newline written as its JSON escape (`\\u001b`, `\\u202e`)."""
    return text if text.isprintable() else _UNSAFE.sub(_escape, text)


def has_unsafe(text: str) -> bool:
    """Whether `escape_unsafe` would change `text`."""
    return not text.isprintable() and _UNSAFE.search(text) is not None
