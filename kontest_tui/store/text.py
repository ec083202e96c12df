"""Text as the store keeps it: model specs without secrets, strings SQLite can hold.

A model spec may carry credentials (user:password@ in a URL, an API key pasted in place):
they are removed before a spec is stored (sessions, the response cache). Text from a lenient
decoder may hold lone surrogates, which SQLite refuses: they are stored as U+FFFD.
"""

from __future__ import annotations

import os
import re

# user:password@ in a URL (never stored).
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")
SECRET_ENV_VARS = ("OPENAI_API_KEY",)
_SURROGATES = re.compile("[\ud800-\udfff]")


def redact_spec(spec: str) -> str:
    """A model spec safe to store: URL credentials and any secret env var value removed."""
    spec = _URL_CREDENTIALS.sub("", spec)
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            spec = spec.replace(value, "***")
    return spec


def storable_text(text: str) -> str:
    """`text` as valid UTF-8 (lone surrogates become U+FFFD); unchanged when already valid."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text)
    return text
