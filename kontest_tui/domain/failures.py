"""Why a turn has no answer: the short type of a failed call's error, as reports count them.

The executor stores a failed turn with its one-line error (run.executor); the progress bar
counts failed calls by `classify_error`, and the report counts failed turns by
`failure_reason` ("not asked" for the later turns of a conversation whose turn failed).
"""

from __future__ import annotations

import re

# The error text of a turn not asked because an earlier turn of its conversation failed.
NOT_ASKED = "not asked:"

_ERROR_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("429", re.compile(r"\b429\b|rate.?limit|too many requests", re.I)),
    ("timeout", re.compile(r"time[sd]? ?out", re.I)),
    ("5xx", re.compile(r"\b5\d\d\b|server error", re.I)),
    ("stream", re.compile(r"stream|incomplete|connection (?:closed|reset)|disconnect", re.I)),
    ("connection", re.compile(r"refused|cannot reach|connect", re.I)),
    ("not in the recording", re.compile(r"not in the recording|no recorded answer", re.I)),
)


def classify_error(message: str) -> str:
    """A short type for an error message: 429, timeout, 5xx, stream, connection, ... other."""
    for name, pattern in _ERROR_TYPES:
        if pattern.search(message):
            return name
    return "other"


def failure_reason(message: str) -> str:
    """Why a turn failed, for the report: "not asked" (an earlier turn of its conversation
    failed) or the type of its error (classify_error)."""
    return "not asked" if message.startswith(NOT_ASKED) else classify_error(message)
