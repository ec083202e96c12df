"""Error types shared by the engine, the CLI and the TUI.

Every expected failure is a `KontestError` with a one-line message (shown by the CLI on
stderr, by the TUI as a notification) and a short title. Nothing else should reach a user.
Messages pass the secret scrubber (`kontest_tui.redact`) when the error is made, so no
error text that is stored, exported, logged or shown carries an API key, and their control
and format characters (a server's body may hold ESC or U+202E) are written as escapes
(`kontest_tui.safe_text`).
"""

from __future__ import annotations

from kontest_tui.redact import scrub
from kontest_tui.safe_text import escape_unsafe


class KontestError(Exception):
    """A failure the user can act on; `str(error)` is one readable line."""

    title = "Error"

    def __init__(self, message: str, title: str | None = None) -> None:
        super().__init__(scrub(escape_unsafe(" ".join(str(message).split()))))
        if title is not None:
            self.title = title


class InvalidInputError(KontestError):
    """Malformed or inconsistent user input (files, arguments, templates)."""

    title = "Invalid input"


class GraphError(InvalidInputError):
    """A knowledge-graph file or CSV that cannot be used (bad record, cycle, empty)."""

    title = "Knowledge graph"


class TooManyPathsError(GraphError):
    """More root-to-leaf paths than a walk may take: `what` says how many; the message adds
    the command line's ways to narrow the scope (the explorer words its own)."""

    def __init__(self, what: str) -> None:
        self.what = " ".join(what.split())
        super().__init__(
            f"{self.what}: narrow it with --depth N or --entity NAME, or take the first "
            "--limit N relations"
        )


class TemplateError(InvalidInputError):
    """A template file or text that cannot be filled (missing/unknown placeholders)."""

    title = "Templates"


class ModelError(KontestError):
    """A model call failed; `retryable` says whether trying again may help; `fatal` that every
    call would fail the same way (401/403 unauthorized, 404 unknown model): never retried, and
    a few in a row stop the run. `rejected`: the server answered and refused the request (an
    HTTP error status other than 429, or an error object in its answer), not a transport
    failure: the same rejection turn after turn stops a run too."""

    title = "Model"
    retryable = False

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        fatal: bool = False,
        rejected: bool = False,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable and not fatal
        self.retry_after = retry_after
        self.fatal = fatal
        self.rejected = rejected


class ModelSpecError(InvalidInputError):
    """A `--model` spec that does not parse or names an unknown profile/file."""

    title = "Model spec"


class StoreError(KontestError):
    """The session database cannot be opened or does not hold what was asked."""

    title = "Store"


class SessionBusyError(StoreError):
    """The session is being run by another process (it holds the session's lease)."""

    title = "Session busy"


class LeaseLostError(SessionBusyError):
    """This run's lease was taken over (the run stopped renewing it, paused or frozen, and
    another process resumed the session): it stops asking and leaves the session alone."""

    title = "Session taken over"


class WikidataError(KontestError):
    """The SPARQL endpoint is unreachable or answered with something unusable."""

    title = "Wikidata"
